import Foundation
import HealthStore
import SerialPedometer
import Udev

/// Carries a pedometer's persisted counter state over from the ids earlier versions used
/// (``PedometerIdentity/legacyIDs``: `serial watch`'s by-id link or kernel name, `run`'s device
/// path) to the id of today's rule, once, before the pedometer is opened.
///
/// When several old keys hold a state (the device was read by both commands), the one with the
/// newest reading wins; every old key found is removed in the same transaction, so the state
/// moves exactly once and never reaches another adapter that later takes the old tty name.
/// Nothing happens when the new key has a state already or the id was given by hand.
package enum PedometerStateMigration {
    /// Moves the state; returns the old id it came from, or nil when nothing moved.
    @discardableResult
    package static func carryOver(in store: HealthStore, identity: PedometerIdentity) throws -> String? {
        guard identity.basis != .given, !identity.legacyIDs.isEmpty else { return nil }
        let key = PedometerSource.stateKey(deviceID: identity.id)
        let prefix = PedometerSource.stateKey(deviceID: "")
        let moved = try store.moveState(to: key, fromAny: identity.legacyIDs.map { PedometerSource.stateKey(deviceID: $0) }) { found in
            let times = found.map { entry -> Double in
                guard let s = try? JSONDecoder().decode(CounterState.self, from: entry.value) else { return -.infinity }
                return max(s.baseline?.receivedAt ?? -.infinity, s.lastDelta?.receivedAt ?? -.infinity)
            }
            return times.indices.max { times[$0] < times[$1] }
        }
        return moved.map { String($0.dropFirst(prefix.count)) }
    }
}
