import Foundation

/// Heart-rate variability per time window, after artefact correction (docs/hrv.md).
///
/// Windows are aligned to multiples of their length since the Unix epoch (a 5-minute window
/// starts at :00, :05, …, UTC). An interval belongs to the window its ending beat falls in. Each
/// run's part in a window is corrected on its own (``ArtefactCorrection``), then the window's
/// measures are taken over its corrected parts (``TimeDomain``). A window gives no value, and
/// says why, when its intervals cover less than half of it or when more than the allowed share
/// of its beats were artefacts.
package struct WindowedHRV: Sendable {
    /// One window's result.
    package struct Window: Sendable {
        /// Unix times of the window's bounds (`end` exclusive).
        package var start: Double, end: Double
        /// NN intervals in the window before correction.
        package var intervals: Int
        /// Beats corrected, per class.
        package var ectopic = 0, missed = 0, extra = 0, longShort = 0
        /// The measures; nil when ``refusal`` says why not.
        package var measures: TimeDomain?
        /// Why the window has no value (nil when it has one).
        package var refusal: String?
        /// All beats corrected.
        package var corrected: Int { ectopic + missed + extra + longShort }
    }

    /// The windows that hold at least one interval, oldest first.
    package private(set) var windows: [Window] = []

    /// Splits `series` into windows of `length` seconds within `[from, to)`, refusing a window
    /// where more than `maxArtefacts` (0…1) of its beats were corrected. A nil `length` makes
    /// one window of all beats in the range, from its first beat to its last.
    package init(_ series: BeatSeries, length: Double?, from: Double, to: Double, maxArtefacts: Double) {
        // Each run's beats in each window (the beat before a window's first interval included).
        var parts: [Int64: [(start: Double, beats: [Int64])]] = [:]
        var first = Double.infinity, last = -Double.infinity
        for run in series.runs {
            var current: (slot: Int64, beats: [Int64])?
            for k in 1..<max(1, run.beats.count) {
                let t = run.start + Double(run.beats[k]) / 1024
                guard t >= from, t < to else { continue }
                let slot = length.map { Int64((t / $0).rounded(.down)) } ?? 0
                first = min(first, t); last = max(last, t)
                if current?.slot != slot {
                    if let c = current { parts[c.slot, default: []].append((run.start, c.beats)) }
                    current = (slot, [run.beats[k - 1]])
                }
                current?.beats.append(run.beats[k])
            }
            if let c = current { parts[c.slot, default: []].append((run.start, c.beats)) }
        }
        for slot in parts.keys.sorted() {
            let bounds = length.map { (Double(slot) * $0, Double(slot + 1) * $0) }
            var w = Window(start: bounds?.0 ?? first, end: bounds?.1 ?? last, intervals: 0)
            let span = w.end - w.start
            var runs: [[Double]] = []
            var covered = 0.0
            for part in parts[slot] ?? [] {
                w.intervals += part.beats.count - 1
                let fixed = ArtefactCorrection.correct(part.beats)
                w.ectopic += fixed.corrected.ectopic.count; w.missed += fixed.corrected.missed.count
                w.extra += fixed.corrected.extra.count; w.longShort += fixed.corrected.longShort.count
                let nn = zip(fixed.beats, fixed.beats.dropFirst()).map { Double($1 - $0) * 1000 / 1024 }
                covered += nn.reduce(0, +) / 1000
                runs.append(nn)
            }
            if covered < span / 2 {
                w.refusal = "RR intervals cover \(Int((covered / span * 100).rounded()))% of the window (at least 50% needed)"
            } else if Double(w.corrected) > maxArtefacts * Double(w.intervals) {
                w.refusal = "\(w.corrected) of \(w.intervals) beats were artefacts (more than the \(Int((maxArtefacts * 100).rounded()))% allowed)"
            } else if let m = TimeDomain(runs: runs) {
                w.measures = m
            } else {
                w.refusal = "too few beats"
            }
            windows.append(w)
        }
    }
}
