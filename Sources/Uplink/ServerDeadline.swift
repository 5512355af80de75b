import Foundation
import PostgresNIO
import Synchronization

/// Runs one exchange with the server under a deadline, without ever waiting for the exchange
/// itself once the deadline passed.
///
/// Why not a task group: a group returns only when all its children have, and a PostgresNIO
/// query whose server vanished mid-answer can stay pending after its connection is closed (it
/// does not observe cancellation). `uplink push` hung exactly so, in about one server stop of
/// three (UplinkPushTests.serverStoppedAndRestartedMidUploadEndsEqual). Here the first of
/// "answer" and "deadline" resumes the caller; at the deadline the connection is closed, which
/// fails whatever it still has pending, and a task stuck anyway is left behind, holding only its
/// closed connection.
enum ServerDeadline {
    /// `body`'s result; or `closed()`'s error as soon as the connection is seen closed while
    /// `body` still waits (checked twice a second); or `timeout()`'s error once `deadline`
    /// passed, and then `connection` is closed.
    static func run<T: Sendable>(_ connection: PostgresConnection, within deadline: Duration,
                                 timeout: @escaping @Sendable () -> any Error,
                                 closed: @escaping @Sendable () -> any Error,
                                 _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let race = Race<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                race.start(continuation)
                let timer = Task {
                    let tick = Duration.milliseconds(500)
                    var end = ContinuousClock.now + deadline
                    var last = ContinuousClock.now
                    while !Task.isCancelled {
                        try? await Task.sleep(for: tick)
                        if Task.isCancelled { return }
                        // A tick that came seconds late means this process could not run (its
                        // threads all busy or blocked, the machine suspended): the server had no
                        // chance to be heard either, so that time does not count against it.
                        let now = ContinuousClock.now
                        let late = now - last - tick
                        if late > .seconds(2) { end += late }
                        last = now
                        // The server closed the connection, yet the query never failed: say so now.
                        if connection.isClosed {
                            race.finish(.failure(closed()))
                            return
                        }
                        if ContinuousClock.now >= end {
                            if race.finish(.failure(timeout())) { try? await connection.close() }
                            return
                        }
                    }
                }
                let work = Task {
                    do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
                }
                // Whoever wins, the other stops: the timer, or the exchange (a cancelled caller
                // or a deadline cancels it; PostgresNIO may not listen, and nothing waits for it).
                race.onFinish { timer.cancel(); work.cancel() }
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    /// Closes `connection`, waiting at most `deadline` for it (a channel in a bad state may never
    /// report its close).
    static func close(_ connection: PostgresConnection, within deadline: Duration = .seconds(5)) async {
        _ = try? await run(connection, within: deadline, timeout: { CancellationError() }, closed: { CancellationError() }) {
            try await connection.close()
        }
    }

    /// The first result wins; later ones are dropped.
    private final class Race<T: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<T, any Error>?
            var result: Result<T, any Error>?
            var finished = false
            var onFinish: (@Sendable () -> Void)?
        }
        private let state = Mutex(State())

        func start(_ continuation: CheckedContinuation<T, any Error>) {
            let early = state.withLock { s -> Result<T, any Error>? in
                if let r = s.result { return r }
                s.continuation = continuation
                return nil
            }
            if let early { continuation.resume(with: early) }
        }

        func onFinish(_ action: @escaping @Sendable () -> Void) {
            let now = state.withLock { s -> Bool in
                if s.finished { return true }
                s.onFinish = action
                return false
            }
            if now { action() }
        }

        /// Whether `result` was the first.
        @discardableResult
        func finish(_ result: Result<T, any Error>) -> Bool {
            let (first, continuation, action) = state.withLock { s -> (Bool, CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
                guard !s.finished else { return (false, nil, nil) }
                s.finished = true
                let c = s.continuation
                if c == nil { s.result = result }
                s.continuation = nil
                defer { s.onFinish = nil }
                return (true, c, s.onFinish)
            }
            continuation?.resume(with: result)
            action?()
            return first
        }
    }
}
