import Foundation
import Platform
import Synchronization
import CStaticMutex

/// Runs blocking work (a pipeline stop, a child's exit, a peer blocked in `receive`) on a thread
/// of its own and awaits its result, so an async test never holds one of the cooperative pool's
/// threads while it waits — there are as many as cores (two on CI), and other suites' async
/// tests, or the very work being waited for, may need them.
package func offThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await onOwnThread(body)
}

/// ``offThread(_:)`` for work that throws: the error is rethrown to the awaiting task.
package func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await onOwnThread(body)
}

/// Runs `body` holding the process-wide heavy-work mutex. It is a C static
/// (`CStaticMutex`), not a Swift global: a global is initialised through `swift_once`, which
/// ThreadSanitizer cannot see, and it reported the first read of such a lock on another thread
/// as a race (docs/fuzzing.md, "Sanitizer passes").
private func oneAtATime<T>(_ body: () throws -> T) rethrows -> T {
    hg_heavy_work_lock()
    defer { hg_heavy_work_unlock() }
    return try body()
}

/// ``offThread(_:)`` for heavy, CPU-bound test bodies (seeded property tests over thousands of
/// cases, child processes importing large files): they run one at a time. On CI's two cores a
/// dozen such bodies at once left the suites that drive simulated straps without CPU for longer
/// than their wall-clock watchdogs (30 s), so straps never connected and those suites failed
/// only in the full run. Use it for work that computes, never for work that waits on another test.
package func offThreadOneAtATime<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await offThread { oneAtATime(body) }
}

/// ``offThreadOneAtATime(_:)`` for work that throws.
package func offThreadOneAtATime<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await offThread { try oneAtATime(body) }
}
