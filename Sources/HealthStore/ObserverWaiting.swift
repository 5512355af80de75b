import Foundation
import HealthModel

extension ChangeObserver {
    /// An observer of the store at `path`, opened read-only; when no store exists yet, it calls
    /// `waiting` once, then polls every `poll` (creating nothing) until a writer has created the
    /// store, and starts at its beginning: everything in it was committed after the call, so
    /// nothing is missed (`healthgate watch` started before the daemon). A store being created
    /// is empty, then at an older schema, for a moment: both are waited out.
    /// - Throws: any other ``StoreError`` (not a store, no permission, a newer schema).
    package static func waitingForStore(path: String, types: [QuantityType], start: ObservationStart, poll: Duration,
                                        waiting: () -> Void) throws -> ChangeObserver {
        do {
            return try ChangeObserver(path: path, types: types, start: start)
        } catch let e as StoreError {
            guard case .storeMissing = e else { throw e }
        }
        waiting()
        let seconds = Double(poll.components.seconds) + Double(poll.components.attoseconds) / 1e18
        while true {
            Thread.sleep(forTimeInterval: seconds)
            do {
                return try ChangeObserver(path: path, types: types, start: start == .now ? .beginning : start)
            } catch let e as StoreError {
                switch e {
                case .storeMissing, .needsMigration: continue
                default: throw e
                }
            }
        }
    }
}
