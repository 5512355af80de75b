/// Artefact detection and correction of a beat series by Lipponen & Tarvainen (2019), "A robust
/// algorithm for heart rate variability time series artefact correction using novel beat
/// classification" (J. Med. Eng. Technol. 43(3), 173–181), as Kubios and neurokit2's
/// `signal_fixpeaks(method="Kubios")` apply it (docs/hrv.md).
///
/// Beats are times in ticks of 1/1024 s (the Heart Rate Measurement's RR unit), so every
/// correction is exact integer arithmetic. Detection normalises the successive differences of
/// the RR series (dRR) and its deviations from an 11-beat median (mRR) by 5.2 × the quartile
/// deviation over 91 beats, then classifies each large difference: **ectopic** (a short-long or
/// long-short pair), **missed** (an interval about twice the median), **extra** (two intervals
/// that add up to the median) or **long/short**. Correction removes an extra beat, inserts a
/// missed one halfway, and moves an ectopic or long/short one halfway between its neighbours;
/// it repeats while the number of artefacts found falls.
package enum ArtefactCorrection {
    /// Beats found per class, as indices into the beat series they were found in.
    package struct Artefacts: Sendable, Equatable {
        package var ectopic: [Int] = []
        package var missed: [Int] = []
        package var extra: [Int] = []
        package var longShort: [Int] = []
        /// All classes together.
        package var count: Int { ectopic.count + missed.count + extra.count + longShort.count }
    }

    /// A corrected series and what was corrected.
    package struct Result: Sendable, Equatable {
        /// The corrected beat times (ticks).
        package var beats: [Int64]
        /// The artefacts of the last pass that corrected something (indices into that pass's input).
        package var artefacts: Artefacts
        /// Beats corrected over all passes, per class.
        package var corrected: Artefacts
    }

    /// The method's constants (the paper's, and Kubios').
    static let c1 = 0.13, c2 = 0.17, alpha = 5.2, thresholdWindow = 91, medianWindow = 11

    /// Detects and corrects the artefacts of `beats` (ascending times in ticks), repeating while
    /// the number found falls.
    package static func correct(_ beats: [Int64]) -> Result {
        var w = Workspace()
        w.beats.append(contentsOf: beats)
        w.correct()
        return Result(beats: w.beats, artefacts: w.last, corrected: w.corrected)
    }

    /// The artefacts of `beats` (one pass, no correction).
    package static func detect(_ beats: [Int64]) -> Artefacts {
        var w = Workspace()
        w.beats.append(contentsOf: beats)
        w.detect()
        return w.found
    }

    /// `beats` with `artefacts` corrected (see ``Workspace/apply(_:)``).
    static func apply(_ artefacts: Artefacts, to beats: [Int64]) -> [Int64] {
        var w = Workspace()
        w.beats.append(contentsOf: beats)
        w.found = artefacts
        w.apply()
        return w.beats
    }

    /// The correction's buffers, kept from one series to the next: once they have grown to the
    /// longest series seen, correcting another allocates nothing. The live SDNN and RMSSD of a
    /// strap (`HeartRateRecordMapper`) correct each minute's beats on the strap's reader thread,
    /// which must not allocate per sample (docs/performance.md); the one-shot ``correct(_:)`` uses a
    /// fresh one. Every step works in place on these arrays (no `Set`, no sort that allocates).
    package struct Workspace: Sendable {
        /// The beat times to correct (ticks, ascending); ``correct()`` leaves the corrected ones here.
        package var beats: [Int64] = []
        /// The artefacts of the last pass that corrected something (indices into that pass's input).
        package private(set) var last = Artefacts()
        /// Beats corrected over all passes, per class.
        package private(set) var corrected = Artefacts()
        /// The artefacts of the latest detection.
        var found = Artefacts()
        private var rr: [Double] = [], drr: [Double] = [], s12: [Double] = [], s22: [Double] = []
        private var medrr: [Double] = [], mrr: [Double] = [], th1: [Double] = [], th2: [Double] = []
        private var magnitudes: [Double] = [], window: [Double] = [], scratch: [Int64] = []

        /// Buffers for series of up to `beats` beats (they grow when a longer one comes).
        package init(capacity beats: Int = 0) {
            guard beats > 0 else { return }
            self.beats.reserveCapacity(beats + 16)
            scratch.reserveCapacity(beats + 16)
            for k in [\Workspace.rr, \.drr, \.s12, \.s22, \.medrr, \.mrr, \.th1, \.th2, \.magnitudes] {
                self[keyPath: k].reserveCapacity(beats + 16)   // once, at set-up
            }
            window.reserveCapacity(ArtefactCorrection.thresholdWindow)
            for k in [\Artefacts.ectopic, \.missed, \.extra, \.longShort] {
                found[keyPath: k].reserveCapacity(16); last[keyPath: k].reserveCapacity(16); corrected[keyPath: k].reserveCapacity(16)
            }
        }

        /// Corrects ``beats`` in place: detects, corrects, and again while the number of
        /// artefacts found falls; ``last`` and ``corrected`` say what was done.
        package mutating func correct() {
            Self.clear(&last); Self.clear(&corrected)
            detect()
            Self.copy(found, to: &last)
            Self.add(found, to: &corrected)
            var current = found.count
            apply()
            while true {
                detect()
                let previous = current
                current = found.count
                if current >= previous { break }
                Self.copy(found, to: &last)
                Self.add(found, to: &corrected)
                apply()
            }
        }

        /// One detection pass over ``beats`` into ``found``.
        mutating func detect() {
            Self.clear(&found)
            let n = beats.count
            guard n >= 3 else { return }
            // The RR series in seconds, one per beat; the first (no beat before it) is the mean of the rest.
            Self.fill(&rr, n)
            for i in 1..<n { rr[i] = Double(beats[i] - beats[i - 1]) / 1024 }
            rr[0] = Self.mean(rr, from: 1)
            Self.fill(&drr, n)
            for i in 1..<n { drr[i] = rr[i] - rr[i - 1] }
            drr[0] = Self.mean(drr, from: 1)
            Self.threshold(drr, into: &th1, magnitudes: &magnitudes, window: &window)
            for i in 0..<n { drr[i] = th1[i] != 0 ? drr[i] / th1[i] : .nan }
            // Subspaces S12 and S22 from the normalised dRR, padded by reflection at both ends.
            Self.fill(&s12, n); Self.fill(&s22, n)
            for d in 0..<n {
                let before = drr[Self.reflected(d - 1, n)], after = drr[Self.reflected(d + 1, n)], after2 = drr[Self.reflected(d + 2, n)]
                if drr[d] > 0 { s12[d] = Self.nanMax(before, after) }
                else if drr[d] < 0 { s12[d] = Self.nanMin(before, after) }
                if drr[d] >= 0 { s22[d] = Self.nanMin(after, after2) }
                else if drr[d] < 0 { s22[d] = Self.nanMax(after, after2) }
            }
            // mRR: deviation from the 11-beat median, a shortening counting twice.
            Self.rolling(rr, into: &medrr, window: &window, length: ArtefactCorrection.medianWindow) { Self.median($0) }
            Self.fill(&mrr, n)
            for i in 0..<n { let m = rr[i] - medrr[i]; mrr[i] = m < 0 ? m * 2 : m }
            Self.threshold(mrr, into: &th2, magnitudes: &magnitudes, window: &window)
            for i in 0..<n { mrr[i] = th2[i] != 0 ? mrr[i] / th2[i] : .nan }

            var i = 0
            while i < n - 2 {
                if abs(drr[i]) <= 1 { i += 1; continue }
                let ectopic = (drr[i] > 1 && s12[i] < -c1 * drr[i] - c2) || (drr[i] < -1 && s12[i] > -c1 * drr[i] + c2)
                if ectopic { found.ectopic.append(i); i += 1; continue }
                if !(abs(drr[i]) > 1 || abs(mrr[i]) > 3) { i += 1; continue }
                // The next beat is evaluated too when its difference is the smaller of the next two.
                let candidates = abs(drr[i + 1]) < abs(drr[i + 2]) ? 2 : 1
                for j in i..<(i + candidates) {
                    let long = drr[j] > 1 && s22[j] < -1
                    let longOrShort = abs(mrr[j]) > 3
                    let short = drr[j] < -1 && s22[j] > 1
                    i += 1   // each candidate evaluated moves the scan on by one beat
                    guard long || longOrShort || short else { continue }
                    let missed = abs(rr[j] / 2 - medrr[j]) < th2[j]
                    let extra = abs(rr[j] + rr[j + 1] - medrr[j]) < th2[j]
                    if short && extra { found.extra.append(j) }
                    else if long && missed { found.missed.append(j) }
                    else { found.longShort.append(j) }
                }
            }
        }

        /// Corrects ``found`` in ``beats``: extra beats removed, missed ones inserted halfway
        /// between their neighbours, ectopic and long/short ones moved halfway between theirs
        /// (times truncated to whole ticks). Indices shift as beats are removed or inserted, one
        /// source at a time, as neurokit2's `_update_indices` does. ``found``'s lists are ascending
        /// (``detect()`` makes them so).
        mutating func apply() {
            if !found.extra.isEmpty {
                var kept = 0, e = 0
                for k in beats.indices {
                    while e < found.extra.count && found.extra[e] < k { e += 1 }
                    if e < found.extra.count && found.extra[e] == k { continue }
                    beats[kept] = beats[k]; kept += 1
                }
                beats.removeLast(beats.count - kept)
                Self.shift(&found.missed, by: found.extra, -1)
                Self.shift(&found.ectopic, by: found.extra, -1)
                Self.shift(&found.longShort, by: found.extra, -1)
            }
            if !found.missed.isEmpty {
                scratch.removeAll(keepingCapacity: true)
                var m = 0
                for k in beats.indices {
                    while m < found.missed.count && (found.missed[m] < k || found.missed[m] <= 1) { m += 1 }
                    if m < found.missed.count && found.missed[m] == k { scratch.append(Self.half(beats[k - 1], beats[k])) }
                    scratch.append(beats[k])
                }
                swap(&beats, &scratch)
                Self.shift(&found.ectopic, by: found.missed, 1)
                Self.shift(&found.longShort, by: found.missed, 1)
            }
            realign(found.ectopic)
            realign(found.longShort)
        }

        /// Moves each beat of `moved` (ascending indices) halfway between its neighbours, then
        /// sorts the beats again.
        private mutating func realign(_ moved: [Int]) {
            guard !moved.isEmpty else { return }
            scratch.removeAll(keepingCapacity: true)
            var m = 0
            for k in beats.indices {
                while m < moved.count && moved[m] < k { m += 1 }
                let inside = m < moved.count && moved[m] == k && k > 1 && k < beats.count - 1
                scratch.append(inside ? Self.half(beats[k - 1], beats[k + 1]) : beats[k])
            }
            Self.insertionSort(&scratch)
            swap(&beats, &scratch)
        }

        /// alpha × the quartile deviation of |x| over a centred 91-beat window (shorter at the ends).
        private static func threshold(_ x: [Double], into out: inout [Double], magnitudes: inout [Double], window: inout [Double]) {
            magnitudes.removeAll(keepingCapacity: true)
            for v in x { magnitudes.append(abs(v)) }
            rolling(magnitudes, into: &out, window: &window, length: ArtefactCorrection.thresholdWindow) { sorted in
                ArtefactCorrection.alpha * ((quantile(sorted, 0.75) - quantile(sorted, 0.25)) / 2)
            }
        }

        /// `f` of each centred window of odd length `length` (cut at the ends), given sorted. The
        /// window's sorted values are kept from one position to the next (one value in, one out,
        /// each placed by binary search), so a day of beats costs no sort and no allocation per beat.
        private static func rolling(_ x: [Double], into out: inout [Double], window: inout [Double], length: Int,
                                    _ f: ([Double]) -> Double) {
            let half = length / 2
            let n = x.count
            window.removeAll(keepingCapacity: true)
            fill(&out, n)
            for k in 0..<min(half, n) { insertSorted(x[k], into: &window) }
            for i in 0..<n {
                if i + half < n { insertSorted(x[i + half], into: &window) }
                if i - half - 1 >= 0 { window.remove(at: position(x[i - half - 1], in: window)) }
                out[i] = f(window)
            }
        }
        private static func position(_ v: Double, in sorted: [Double]) -> Int {
            var lo = 0, hi = sorted.count
            while lo < hi { let mid = (lo + hi) / 2; if sorted[mid] < v { lo = mid + 1 } else { hi = mid } }
            return lo
        }

        private static func insertSorted(_ v: Double, into sorted: inout [Double]) { sorted.insert(v, at: position(v, in: sorted)) }

        /// `x` as `n` zeros, keeping its capacity.
        private static func fill(_ x: inout [Double], _ n: Int) {
            x.removeAll(keepingCapacity: true)
            for _ in 0..<n { x.append(0) }
        }

        /// Index `k` reflected into `0..<n` (numpy's `reflect` padding without the edge repeated).
        private static func reflected(_ k: Int, _ n: Int) -> Int {
            var j = k
            while j < 0 || j >= n { j = j < 0 ? -j : 2 * (n - 1) - j }
            return j
        }

        /// For each source index `s` in turn, moves every index of `indices` above it by `delta`;
        /// then drops repeats (moving keeps the order, so repeats are neighbours).
        private static func shift(_ indices: inout [Int], by sources: [Int], _ delta: Int) {
            guard !indices.isEmpty else { return }
            for s in sources { for k in indices.indices where indices[k] > s { indices[k] += delta } }
            var kept = 1
            for k in 1..<indices.count where indices[k] != indices[kept - 1] { indices[kept] = indices[k]; kept += 1 }
            indices.removeLast(indices.count - kept)
        }

        /// Sorts in place without a buffer; the input is nearly sorted (moved beats stay between
        /// their neighbours' old times), so this is close to linear.
        private static func insertionSort(_ x: inout [Int64]) {
            guard x.count > 1 else { return }
            for i in 1..<x.count {
                let v = x[i]
                var j = i
                while j > 0 && x[j - 1] > v { x[j] = x[j - 1]; j -= 1 }
                x[j] = v
            }
        }

        private static func clear(_ a: inout Artefacts) {
            a.ectopic.removeAll(keepingCapacity: true); a.missed.removeAll(keepingCapacity: true)
            a.extra.removeAll(keepingCapacity: true); a.longShort.removeAll(keepingCapacity: true)
        }

        private static func copy(_ a: Artefacts, to b: inout Artefacts) {
            clear(&b)
            add(a, to: &b)
        }

        private static func add(_ a: Artefacts, to b: inout Artefacts) {
            b.ectopic.append(contentsOf: a.ectopic); b.missed.append(contentsOf: a.missed)
            b.extra.append(contentsOf: a.extra); b.longShort.append(contentsOf: a.longShort)
        }

        /// Halfway from `a` to `b`, truncated to a whole tick.
        private static func half(_ a: Int64, _ b: Int64) -> Int64 {
            Int64((Double(a) + Double(b - a) / 2).rounded(.towardZero))
        }

        /// The `q` quantile of sorted values, interpolated linearly between ranks.
        private static func quantile(_ sorted: [Double], _ q: Double) -> Double {
            let position = q * Double(sorted.count - 1)
            let low = Int(position.rounded(.down))
            guard low + 1 < sorted.count, position != Double(low) else { return sorted[low] }
            return sorted[low] + (sorted[low + 1] - sorted[low]) * (position - Double(low))
        }

        private static func median(_ sorted: [Double]) -> Double {
            let m = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2
        }

        private static func mean(_ x: [Double], from: Int) -> Double {
            var sum = 0.0
            for k in from..<x.count { sum += x[k] }
            return sum / Double(x.count - from)
        }

        /// The larger of two values, NaN when either is (as numpy's max).
        private static func nanMax(_ a: Double, _ b: Double) -> Double { a.isNaN || b.isNaN ? .nan : Swift.max(a, b) }
        private static func nanMin(_ a: Double, _ b: Double) -> Double { a.isNaN || b.isNaN ? .nan : Swift.min(a, b) }
    }
}
