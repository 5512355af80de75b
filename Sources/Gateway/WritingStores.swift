import Foundation
import HealthStore
import Synchronization
import Locking

/// The stores this process opened for writing, so that the command line checkpoints each one
/// when its command ends (docs/store.md, "Checkpoint on shutdown"): long-running writers
/// (`run`, `live`, `serial watch`, `record`, `demo`, `replay`) keep their store alive in
/// threads and closures until the process exits, so SQLite's own checkpoint at the last close
/// never runs and the commits would stay in `-wal`, with a main file that alone looks empty.
package enum WritingStores {
    private struct Entry: Sendable { weak var store: HealthStore? }
    private static let stores = Lock<[Entry]>([])

    /// Remembers `store` (weakly) and returns it.
    package static func opened(_ store: HealthStore) -> HealthStore {
        stores.withLock { list in
            list.removeAll { $0.store == nil }
            list.append(Entry(store: store))
        }
        return store
    }

    /// Checkpoints (TRUNCATE) every remembered store that is still open, so its main file alone
    /// holds every commit. What to tell the user goes to `report` (a sentence, and whether it is
    /// a failure); a failure changes nothing else: the commits are safe in the `-wal` file, and
    /// the next open recovers them.
    package static func checkpointAll(report: (_ message: String, _ failed: Bool) -> Void) {
        let open = stores.withLock { list -> [HealthStore] in
            defer { list.removeAll() }
            return list.compactMap(\.store)
        }
        for store in open {
            do {
                if try !store.checkpoint() {
                    report("healthgate: readers kept part of \(store.path)-wal from being copied into \(store.path); nothing is lost (the next writer copies it), but copy the -wal file too if you copy the store now.", false)
                }
            } catch {
                report("could not checkpoint \(store.path) at exit (\(error)); its last commits are safe in \(store.path)-wal, so copy that file with it.", true)
            }
        }
    }
}
