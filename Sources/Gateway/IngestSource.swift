import Platform
import Foundation
import Ingest
import Logging
import Synchronization
import Locking

/// A producer of samples: a strap connection, a serial pedometer, a replayed capture.
///
/// ``run(into:slots:stop:)`` is called on a thread of its own and pushes into `ring` until the
/// source ends or `stop` is raised; it should register its types, source and device in `slots`
/// before producing. Throwing means "this attempt failed": the ``SourceRunner`` logs it and, for
/// sources that ``reconnects``, tries again after a backoff.
package protocol IngestSource: Sendable {
    /// A name for logs (`strap AA:BB:…`, `pedometer /dev/ttyUSB0`).
    var name: String { get }
    /// Whether the runner restarts the source (with backoff) after it ends or fails.
    var reconnects: Bool { get }
    /// Produces into `ring` until done or stopped.
    func run(into ring: SampleRing, slots: SlotTable, stop: StopSignal) throws
}

/// An error ending a source's attempt that the source has already reported (logged or told its
/// listeners, such as a strap's ``StrapSource/Event/disconnected(reason:)``): the runner only
/// notes the retry at debug level, so each event is logged once.
package protocol ReportedBySource: Error {}

/// An error ending a source for good that whoever started the source has logged already (the
/// pedometer watcher says a port it cannot open once, not at every scan): the runner does not
/// log it again, and still tells its failure observer.
package protocol LoggedBySource: Error {}

/// An error that says whether retrying can help. Sources' errors that do not conform are
/// retried; a permanent one (no Bluetooth in the kernel, missing permissions, a device that is
/// not a strap) ends the source, and ends an interactive command.
package protocol SourceFailure: Error {
    /// True when no retry can fix it.
    var isPermanent: Bool { get }
    /// True when something below needs time to settle after this failure before the next
    /// attempt (a kernel connect being cancelled): the pause is then at least the policy's
    /// ``ReconnectPolicy/settlePause``. Default: false.
    var needsSettling: Bool { get }
    /// Whether what caused this failure has gone away (an adapter powered again), asked every
    /// ``SourceRunner/readinessPoll`` while the runner pauses before the next attempt: once it
    /// answers true the attempt starts at once instead of at the end of the pause. Nil (the
    /// default): the pause is waited in full.
    var causeCleared: (@Sendable () -> Bool)? { get }
}

extension SourceFailure {
    package var needsSettling: Bool { false }
    package var causeCleared: (@Sendable () -> Bool)? { nil }
}

/// Runs sources on threads of their own, each with its own ring in the pipeline, restarting
/// those that reconnect by the ``ReconnectPolicy``.
package final class SourceRunner: Sendable {
    private let pipeline: IngestPipeline
    private let logger: Logger
    /// How sources are restarted.
    package let policy: ReconnectPolicy
    /// Raised by ``stopAll()``; sources watch it.
    package let stop = StopSignal()
    private let running = Lock<[DispatchSemaphore]>([])
    private let retryObserver = Locked<(@Sendable (String, String, Duration) -> Void)?>(nil)
    private let failureObserver = Locked<(@Sendable (String, any Error) -> Void)?>(nil)
    /// Source threads started in this process (their names' numbers).
    private static let started = Atomic<Int>(0)

    /// A runner feeding `pipeline`, restarting sources by `policy`.
    package init(pipeline: IngestPipeline, logger: Logger, policy: ReconnectPolicy = ReconnectPolicy()) {
        self.pipeline = pipeline
        self.logger = logger
        self.policy = policy
    }

    /// Called (on the source's thread) before each retry with the source's name, why the attempt
    /// failed, and the pause before the next one (front-ends show it); not for an end the source
    /// reported itself (``ReportedBySource``).
    package func onRetry(_ observer: @escaping @Sendable (String, String, Duration) -> Void) {
        retryObserver.withLock { $0 = observer }
    }

    /// Called (on the source's thread) when a source fails for good: a ``SourceFailure`` that
    /// is permanent, or any failure of a source that does not reconnect.
    package func onFailure(_ observer: @escaping @Sendable (String, any Error) -> Void) {
        failureObserver.withLock { $0 = observer }
    }

    /// Starts `source` on its own thread; `onEnd` runs on that thread once the source is done
    /// for good (it ended and does not reconnect, it failed permanently, or stop was raised).
    package func start(_ source: any IngestSource, onEnd: (@Sendable () -> Void)? = nil) throws {
        let ring = try pipeline.makeRing(name: source.name)
        let done = DispatchSemaphore(value: 0)
        running.withLock { $0.append(done) }
        let (pipeline, logger, stop, policy) = (self.pipeline, self.logger, self.stop, self.policy)
        let (retryObserver, failureObserver) = (self.retryObserver, self.failureObserver)
        let number = Self.started.add(1, ordering: .relaxed).newValue
        let thread = Thread {
            // Numbered: the kernel keeps 15 bytes of a name, and seven straps' names share them.
            SystemCall.nameThisThread("src\(number) \(source.name)")
            var failures = 0
            var attempt = 0
            // A streak of identical failures is logged at warning once (and again every 10
            // minutes while it lasts), the repeats at debug: a strap left at home must not
            // fill the journal with a line every 2 s.
            var lastWarned: (why: String, at: ContinuousClock.Instant)?
            while !stop.isRaised {
                attempt += 1
                if attempt > 1 { logger.debug("\(source.name): attempt \(attempt)") }
                let began = ContinuousClock.now
                let pushedBefore = ring.pushedCount
                var why: String
                var reported = false
                var settle = Duration.zero
                var threw = true
                var cleared: (@Sendable () -> Bool)?
                do {
                    try source.run(into: ring, slots: pipeline.slots, stop: stop)
                    logger.debug("\(source.name): attempt \(attempt) returned")
                    if !source.reconnects || stop.isRaised { break }
                    why = "ended"
                    threw = false
                } catch {
                    logger.debug("\(source.name): attempt \(attempt) failed: \(error)")
                    if stop.isRaised { break }
                    let permanent = (error as? any SourceFailure)?.isPermanent ?? false
                    if (error as? any SourceFailure)?.needsSettling == true { settle = policy.settlePause }
                    cleared = (error as? any SourceFailure)?.causeCleared
                    guard source.reconnects, !permanent else {
                        if !(error is any LoggedBySource) { logger.error("\(source.name): \(error)") }
                        failureObserver.withLock { $0 }?(source.name, error)
                        break
                    }
                    why = "\(error)"
                    while why.hasSuffix(".") || why.hasSuffix(" ") { why.removeLast() }   // the sentence continues
                    reported = error is any ReportedBySource
                }
                // An attempt that delivered data starts the pauses over, waiting the first in
                // full; a failed one waits what is left of its pause since the attempt began.
                let delivered = ring.pushedCount > pushedBefore
                failures = delivered ? 1 : failures + 1
                let pause = max(settle, delivered ? policy.pause(afterFailures: 1)
                    : max(.zero, policy.pause(afterFailures: failures) - began.duration(to: .now)))
                if reported || delivered {
                    lastWarned = nil
                    logger.debug("\(source.name): \(why); reconnecting in \(pause)")
                } else if let w = lastWarned, w.why == why, w.at.duration(to: .now) < .seconds(600) {
                    logger.debug("\(source.name): \(why); retrying in \(pause)")
                } else {
                    lastWarned = (why, .now)
                    logger.log(level: threw ? .warning : .notice,
                               "\(source.name): \(why); retrying in \(pause) (and every \(policy.maximumPause) at most while it lasts)")
                }
                // A failure the source already reported (a strap's disconnect) is not told twice.
                if !reported { retryObserver.withLock { $0 }?(source.name, why, pause) }
                Self.pause(pause, stop: stop, until: cleared)
            }
            logger.debug("\(source.name): no more attempts (stop raised: \(stop.isRaised))")
            ring.close()
            onEnd?()
            done.signal()
        }
        thread.start()
    }

    /// How often a pause asks whether a failure's cause has gone away
    /// (``SourceFailure/causeCleared``).
    package static let readinessPoll = Duration.milliseconds(100)

    /// Waits `pause`, or less: until stop is raised, or until `cleared` answers true (asked
    /// after each poll interval, never before the first: an answer that stays true cannot
    /// make a busy loop of the retries).
    private static func pause(_ pause: Duration, stop: StopSignal, until cleared: (@Sendable () -> Bool)?) {
        guard let cleared else { stop.sleep(pause); return }
        let end = ContinuousClock.now + pause
        repeat {
            let left = ContinuousClock.now.duration(to: end)
            if left <= .zero || stop.sleep(min(left, readinessPoll)) { return }
        } while !cleared()
    }

    /// Raises stop and waits until every source thread has returned (and closed its ring).
    package func stopAll() {
        stop.raise()
        for d in running.withLock({ $0 }) { d.wait(); d.signal() }
    }

    /// Waits until every started source has ended by itself (replays, demos with a duration).
    package func waitForAll() {
        for d in running.withLock({ $0 }) { d.wait(); d.signal() }
    }
}
