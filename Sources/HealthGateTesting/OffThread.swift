import Foundation

/// Runs blocking work (a pipeline stop, a child's exit, a peer blocked in `receive`) on a thread
/// of its own and awaits its result, so an async test never holds one of the cooperative pool's
/// threads while it waits — there are as many as cores (two on CI), and other suites' async
/// tests, or the very work being waited for, may need them.
package func offThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { c in
        Thread { c.resume(returning: body()) }.start()
    }
}

/// ``offThread(_:)`` for work that throws: the error is rethrown to the awaiting task.
package func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { c in
        Thread { c.resume(with: Result { try body() }) }.start()
    }
}
