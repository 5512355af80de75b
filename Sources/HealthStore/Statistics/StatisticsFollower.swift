import Foundation
import HealthModel

/// `stats --interval … --follow` (issue 7): HealthKit's statisticsUpdateHandler. After the
/// initial buckets, every commit that adds or deletes a sample of the type makes it recompute
/// the collection and print the buckets whose values changed — and nothing when none did.
package struct StatisticsFollower {
    private let observer: ChangeObserver

    /// Starts observing `type` in the store at `path`. Create it *before* computing the initial
    /// buckets, so a commit in between is seen (and, if it changed nothing shown, not printed).
    package init(path: String, type: QuantityType) throws {
        observer = try ChangeObserver(path: path, types: [type], start: .now)
    }

    /// Runs until the process is stopped: on each change of the type, `compute()` again and
    /// `show` the buckets that are new or differ from what was last shown.
    package func run(initial: [Statistics], compute: () throws -> [Statistics], show: ([Statistics]) -> Void) throws {
        var shown: [Date?: Statistics] = [:]
        for b in initial { shown[b.start] = b }
        fflush(nil)  // the initial buckets, before waiting
        try observer.run(while: { true }) { _ in
            let changed = try Self.changedBuckets(shown: &shown, now: try compute())
            if !changed.isEmpty {
                show(changed)
                fflush(nil)
            }
        }
    }

    /// The buckets of `now` that differ from `shown` (by start), updating `shown`.
    package static func changedBuckets(shown: inout [Date?: Statistics], now: [Statistics]) throws -> [Statistics] {
        var changed: [Statistics] = []
        for b in now where shown[b.start] != b {
            changed.append(b)
            shown[b.start] = b
        }
        return changed
    }
}
