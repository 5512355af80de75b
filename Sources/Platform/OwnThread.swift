import Foundation

/// Runs blocking work (a synchronous command, a pipeline's stop, a child's exit) on a thread of
/// its own and awaits its result, so the awaiting task never holds one of Swift concurrency's
/// cooperative threads while it waits: there are as many as cores (one on a single-core
/// board), and the work being waited for may need them. `name` and `stackSize` (bytes) set the
/// thread's; nil keeps Foundation's defaults.
package func onOwnThread<T: Sendable>(name: String? = nil, stackSize: Int? = nil,
                                      _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { c in
        start(name: name, stackSize: stackSize) { c.resume(returning: body()) }
    }
}

/// ``onOwnThread(name:stackSize:_:)`` for work that throws: the error is rethrown to the
/// awaiting task.
package func onOwnThread<T: Sendable>(name: String? = nil, stackSize: Int? = nil,
                                      _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { c in
        start(name: name, stackSize: stackSize) { c.resume(with: Result { try body() }) }
    }
}

private func start(name: String?, stackSize: Int?, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread(block: body)
    if let name { thread.name = name }
    if let stackSize { thread.stackSize = stackSize }
    thread.start()
}
