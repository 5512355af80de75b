import Foundation
import PostgresNIO
import Synchronization
import Locking

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
                    var clock = Clock(deadline: deadline, now: .now)
                    while !Task.isCancelled {
                        try? await Task.sleep(for: Clock.tick)
                        if Task.isCancelled { return }
                        let passed = clock.passed(at: .now)
                        // The server closed the connection, yet the query never failed: say so now.
                        if connection.isClosed {
                            race.finish(.failure(closed()))
                            return
                        }
                        if passed {
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

    /// The deadline's bookkeeping, checked at every tick of the timer: a tick that came seconds
    /// late means this process could not run (its threads all busy or blocked, the machine
    /// suspended), so the server had no chance to be heard either, and that time does not count
    /// against it.
    struct Clock {
        /// How often the timer looks.
        static let tick = Duration.milliseconds(500)
        /// Lateness beyond which a tick's delay is forgiven (scheduling noise is not).
        static let forgivenAfter = Duration.seconds(2)
        /// When the deadline passes, as pushed back by late ticks.
        private(set) var end: ContinuousClock.Instant
        private var last: ContinuousClock.Instant

        /// A deadline `deadline` after `now`.
        init(deadline: Duration, now: ContinuousClock.Instant) {
            end = now + deadline
            last = now
        }

        /// Records a tick seen at `now`; true once the deadline has passed.
        mutating func passed(at now: ContinuousClock.Instant) -> Bool {
            let late = now - last - Self.tick
            if late > Self.forgivenAfter { end += late }
            last = now
            return now >= end
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
        private let state = Lock(State())

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
