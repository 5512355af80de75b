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
        var artefacts = detect(beats)
        var clean = apply(artefacts, to: beats)
        var corrected = artefacts
        var current = artefacts.count
        while true {
            let again = detect(clean)
            let previous = current
            current = again.count
            if current >= previous { break }
            artefacts = again
            clean = apply(again, to: clean)
            corrected.ectopic += again.ectopic; corrected.missed += again.missed
            corrected.extra += again.extra; corrected.longShort += again.longShort
        }
        return Result(beats: clean, artefacts: artefacts, corrected: corrected)
    }

    /// The artefacts of `beats` (one pass, no correction).
    package static func detect(_ beats: [Int64]) -> Artefacts {
        let n = beats.count
        var found = Artefacts()
        guard n >= 3 else { return found }
        // The RR series in seconds, one per beat; the first (no beat before it) is the mean of the rest.
        var rr = [Double](repeating: 0, count: n)
        for i in 1..<n { rr[i] = Double(beats[i] - beats[i - 1]) / 1024 }
        rr[0] = mean(rr[1...])
        var drr = [Double](repeating: 0, count: n)
        for i in 1..<n { drr[i] = rr[i] - rr[i - 1] }
        drr[0] = mean(drr[1...])
        let th1 = threshold(drr)
        for i in 0..<n { drr[i] = th1[i] != 0 ? drr[i] / th1[i] : .nan }
        // Subspaces S12 and S22 from the normalised dRR, padded by reflection at both ends.
        func padded(_ k: Int) -> Double {
            var j = k
            while j < 0 || j >= n { j = j < 0 ? -j : 2 * (n - 1) - j }
            return drr[j]
        }
        var s12 = [Double](repeating: 0, count: n), s22 = [Double](repeating: 0, count: n)
        for d in 0..<n {
            if drr[d] > 0 { s12[d] = nanMax(padded(d - 1), padded(d + 1)) }
            else if drr[d] < 0 { s12[d] = nanMin(padded(d - 1), padded(d + 1)) }
            if drr[d] >= 0 { s22[d] = nanMin(padded(d + 1), padded(d + 2)) }
            else if drr[d] < 0 { s22[d] = nanMax(padded(d + 1), padded(d + 2)) }
        }
        // mRR: deviation from the 11-beat median, a shortening counting twice.
        let medrr = rolling(rr, window: medianWindow) { sorted in median(sorted) }
        var mrr = [Double](repeating: 0, count: n)
        for i in 0..<n { let m = rr[i] - medrr[i]; mrr[i] = m < 0 ? m * 2 : m }
        let th2 = threshold(mrr)
        for i in 0..<n { mrr[i] = th2[i] != 0 ? mrr[i] / th2[i] : .nan }

        var i = 0
        while i < n - 2 {
            if abs(drr[i]) <= 1 { i += 1; continue }
            let ectopic = (drr[i] > 1 && s12[i] < -c1 * drr[i] - c2) || (drr[i] < -1 && s12[i] > -c1 * drr[i] + c2)
            if ectopic { found.ectopic.append(i); i += 1; continue }
            if !(abs(drr[i]) > 1 || abs(mrr[i]) > 3) { i += 1; continue }
            // The next beat is evaluated too when its difference is the smaller of the next two.
            var candidates = [i]
            if abs(drr[i + 1]) < abs(drr[i + 2]) { candidates.append(i + 1) }
            for j in candidates {
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
        return found
    }

    /// `beats` with `artefacts` corrected: extra beats removed, missed ones inserted halfway
    /// between their neighbours, ectopic and long/short ones moved halfway between theirs
    /// (times truncated to whole ticks). Indices shift as beats are removed or inserted.
    static func apply(_ artefacts: Artefacts, to beats: [Int64]) -> [Int64] {
        var peaks = beats
        var missed = artefacts.missed, ectopic = artefacts.ectopic, longShort = artefacts.longShort
        if !artefacts.extra.isEmpty {
            let drop = Set(artefacts.extra)
            peaks = peaks.enumerated().filter { !drop.contains($0.offset) }.map(\.element)
            missed = shifted(missed, by: artefacts.extra, -1)
            ectopic = shifted(ectopic, by: artefacts.extra, -1)
            longShort = shifted(longShort, by: artefacts.extra, -1)
        }
        if !missed.isEmpty {
            let valid = missed.filter { $0 > 1 && $0 < peaks.count }
            var out: [Int64] = []
            out.reserveCapacity(peaks.count + valid.count)
            let insertAt = Set(valid)
            for (k, p) in peaks.enumerated() {
                if insertAt.contains(k) { out.append(half(peaks[k - 1], p)) }
                out.append(p)
            }
            peaks = out
            ectopic = shifted(ectopic, by: missed, 1)
            longShort = shifted(longShort, by: missed, 1)
        }
        for misaligned in [ectopic, longShort] where !misaligned.isEmpty {
            let valid = Set(misaligned.filter { $0 > 1 && $0 < peaks.count - 1 })
            var out: [Int64] = []
            out.reserveCapacity(peaks.count)
            for (k, p) in peaks.enumerated() {
                out.append(valid.contains(k) ? half(peaks[k - 1], peaks[k + 1]) : p)
            }
            peaks = out.sorted()
        }
        return peaks
    }

    /// Halfway from `a` to `b`, truncated to a whole tick.
    private static func half(_ a: Int64, _ b: Int64) -> Int64 {
        Int64((Double(a) + Double(b - a) / 2).rounded(.towardZero))
    }

    /// `indices` with every one after each of `sources` moved by `delta`, sorted, without repeats.
    private static func shifted(_ indices: [Int], by sources: [Int], _ delta: Int) -> [Int] {
        guard !indices.isEmpty else { return indices }
        var out = indices
        for s in sources { out = out.map { $0 > s ? $0 + delta : $0 } }
        return Array(Set(out)).sorted()
    }

    /// alpha × the quartile deviation of |x| over a centred 91-beat window (shorter at the ends).
    private static func threshold(_ x: [Double]) -> [Double] {
        rolling(x.map(abs), window: thresholdWindow) { sorted in
            alpha * ((quantile(sorted, 0.75) - quantile(sorted, 0.25)) / 2)
        }
    }

    /// `f` of each centred window of odd length `window` (cut at the ends), given sorted. The
    /// window's sorted values are kept from one position to the next (one value in, one out,
    /// each placed by binary search), so a day of beats costs no sort and no allocation per beat.
    private static func rolling(_ x: [Double], window: Int, _ f: ([Double]) -> Double) -> [Double] {
        let half = window / 2
        var sorted: [Double] = []
        sorted.reserveCapacity(window)
        func position(_ v: Double) -> Int {
            var lo = 0, hi = sorted.count
            while lo < hi { let mid = (lo + hi) / 2; if sorted[mid] < v { lo = mid + 1 } else { hi = mid } }
            return lo
        }
        for v in x.prefix(half) { sorted.insert(v, at: position(v)) }
        var out = [Double](repeating: 0, count: x.count)
        for i in x.indices {
            if i + half < x.count { let v = x[i + half]; sorted.insert(v, at: position(v)) }
            if i - half - 1 >= 0 { sorted.remove(at: position(x[i - half - 1])) }
            out[i] = f(sorted)
        }
        return out
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

    private static func mean(_ x: ArraySlice<Double>) -> Double { x.reduce(0, +) / Double(x.count) }

    /// The larger of two values, NaN when either is (as numpy's max).
    private static func nanMax(_ a: Double, _ b: Double) -> Double { a.isNaN || b.isNaN ? .nan : Swift.max(a, b) }
    private static func nanMin(_ a: Double, _ b: Double) -> Double { a.isNaN || b.isNaN ? .nan : Swift.min(a, b) }
}
