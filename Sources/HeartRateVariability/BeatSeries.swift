import Foundation
import HealthModel

/// A strap's beats rebuilt from its stored heart-rate samples: runs of beats without a gap,
/// each beat a time in ticks (1/1024 s) from its run's first beat, exactly as the RR intervals
/// were sent.
///
/// A notification's RR intervals end at its receipt: its last beat is placed at the sample's
/// time, the ones before it by the intervals. A run ends where the store marked a gap (an RR
/// list preceded by missing beats), or where a notification's receipt is more than
/// ``maxDrift`` seconds from where the run's intervals put its last beat (notifications lost
/// without a mark, a restart, a clock step).
package struct BeatSeries: Sendable {
    /// One run of beats.
    package struct Run: Sendable, Equatable {
        /// Unix time of the first beat.
        package var start: Double
        /// Beat times in ticks from the first beat (the first is 0).
        package var beats: [Int64]
    }

    /// How far a receipt may be from where the intervals put its last beat, in seconds.
    package static let maxDrift = 2.0

    /// The runs, oldest first.
    package private(set) var runs: [Run] = []

    /// A series of the given runs.
    package init(runs: [Run]) { self.runs = runs }

    /// The beats of `samples` (heart-rate samples in ascending time; those without RR are passed over).
    package init(_ samples: [QuantitySample]) {
        for s in samples { append(s) }
    }

    /// Adds the beats of `s`, a heart-rate sample later than those before it (without RR: nothing).
    package mutating func append(_ s: QuantitySample) {
        guard let rr = s.rrIntervals, !rr.ticks.isEmpty else { return }
        let total = rr.ticks.reduce(Int64(0)) { $0 + Int64($1) }
        let end = s.endDate.timeIntervalSince1970
        if !rr.precededByGap, let start = runs.last?.start, let last = runs.last?.beats.last,
           abs(start + Double(last + total) / 1024 - end) <= Self.maxDrift {
            var t = last
            for tick in rr.ticks { t += Int64(tick); runs[runs.count - 1].beats.append(t) }   // in place: no copy of the run
        } else {
            var beats: [Int64] = [0]
            var t: Int64 = 0
            for tick in rr.ticks { t += Int64(tick); beats.append(t) }
            runs.append(Run(start: end - Double(total) / 1024, beats: beats))
        }
    }
}
