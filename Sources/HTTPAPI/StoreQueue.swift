import Dispatch
import HealthStore

/// Runs store calls (SQLite: disk reads, writes, whole statistics) on a serial queue of their
/// own, so a long query never holds one of Swift concurrency's cooperative threads — as many
/// as the machine has cores, one on a single-core board — that every request and the
/// server's I/O share (docs/architecture.md, "Threads"). The store serialises its calls with
/// one lock anyway; a serial queue makes that wait visible and cheap.
package final class StoreQueue: Sendable {
    /// The store `serve` answers from.
    package let store: HealthStore
    /// A store with nothing in it: what a token sees for a type it may not read, so the
    /// answer is the empty store's by construction, not an imitation of it.
    package let empty: HealthStore
    private let queue = DispatchQueue(label: "healthgate.http.store")

    package init(store: HealthStore, empty: HealthStore) {
        self.store = store
        self.empty = empty
    }

    /// `body(store)` on the store's queue, awaited without blocking a cooperative thread.
    package func run<T: Sendable>(_ body: @escaping @Sendable (HealthStore) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { c in
            queue.async { [store] in c.resume(with: Result { try body(store) }) }
        }
    }

    /// `body(real, empty)` on the store's queue.
    package func run<T: Sendable>(_ body: @escaping @Sendable (HealthStore, HealthStore) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { c in
            queue.async { [store, empty] in c.resume(with: Result { try body(store, empty) }) }
        }
    }
}
