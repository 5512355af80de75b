import Foundation
import HealthModel
import HealthStore

/// What `healthgate run` commits, for `live` when the daemon owns the straps (a strap allows one
/// connection, often): instead of fighting the daemon for them, `live` shows the heart-rate and
/// energy samples it stores, as they land, through the store's change feed
/// (docs/change-feed.md).
package enum DaemonReadings {
    /// Calls `each` with every heart-rate and active-energy sample committed to the store at
    /// `path` from now on, of the straps named in `straps` (a sample's device name or local
    /// identifier containing one of them, in any case; every strap when empty), until
    /// `duration` seconds pass or `count` heart-rate samples were passed on. `ready` is called
    /// once "from now on" is fixed (the feed's anchor taken): what commits after it is shown.
    package static func follow(storeAt path: String, straps: [String], duration: Double?, count: Int?,
                               ready: () -> Void = {}, each: (QuantitySample) throws -> Void) throws {
        let wanted = straps.map { $0.uppercased() }
        let observer = try ChangeObserver(path: path, types: [.heartRate, .activeEnergyBurned], start: .now)
        ready()
        let deadline = duration.map { Date().addingTimeInterval($0) }
        var shown = 0
        try observer.run(while: { (deadline.map { Date() < $0 } ?? true) && (count.map { shown < $0 } ?? true) }) { change in
            for sample in change.samples {
                let device = [sample.device?.name, sample.device?.localIdentifier].compactMap { $0 }
                if !wanted.isEmpty, !wanted.contains(where: { w in device.contains { $0.uppercased().contains(w) } }) { continue }
                try each(sample)
                if sample.type == .heartRate { shown += 1 }
            }
        }
    }
}
