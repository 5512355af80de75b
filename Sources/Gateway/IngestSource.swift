import Foundation
import Ingest
import Logging
import Synchronization

/// A producer of samples: a strap connection, a serial pedometer, a replayed capture.
///
/// ``run(into:slots:stop:)`` is called on a thread of its own and pushes into `ring` until the
/// source ends or `stop` is raised; it should register its types, source and device in `slots`
/// before producing. Throwing means "this attempt failed": the ``SourceRunner`` logs it and, for
/// sources that ``reconnects``, tries again after a backoff.
public protocol IngestSource: Sendable {
    /// A name for logs (`strap AA:BB:…`, `pedometer /dev/ttyUSB0`).
    var name: String { get }
    /// Whether the runner restarts the source (with backoff) after it ends or fails.
    var reconnects: Bool { get }
    /// Produces into `ring` until done or stopped.
    func run(into ring: SampleRing, slots: SlotTable, stop: IngestStop) throws
}

/// An error ending a source's attempt that the source has already reported (logged or told its
/// listeners, such as a strap's ``StrapSource/Event/disconnected(reason:)``): the runner only
/// notes the retry at debug level, so each event is logged once.
public protocol ReportedBySource: Error {}

/// A one-way "stop now" flag that sources poll, with hooks to interrupt blocking calls (a
/// source registers a hook that closes its file descriptor, which wakes a blocked `read`).
public final class IngestStop: Sendable {
    private let raised = Atomic<Bool>(false)
    private let hooks = Mutex<(next: Int, byID: [Int: @Sendable () -> Void])>((0, [:]))

    /// A hook registered with ``onRaise(_:)``. Cancel it when the thing it would stop has ended
    /// on its own (a connection that closed), so a daemon reconnecting for months does not pile
    /// up hooks holding dead connections.
    public struct Hook: Sendable {
        fileprivate let id: Int
        fileprivate let stop: IngestStop

        /// Removes the hook; it will not run. Harmless after stop was raised.
        public func cancel() { _ = stop.hooks.withLock { $0.byID.removeValue(forKey: id) } }
    }

    /// Hooks waiting for stop (tests check cancelled ones are gone).
    var pendingHooks: Int { hooks.withLock { $0.byID.count } }

    /// A signal not yet raised.
    public init() {}

    /// Whether stop was requested.
    public var isRaised: Bool { raised.load(ordering: .acquiring) }

    /// Requests stop and runs every hook (once).
    public func raise() {
        guard !raised.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let pending = hooks.withLock { h in
            let list = h.byID.sorted { $0.key < $1.key }.map(\.value)
            h.byID = [:]
            return list
        }
        for h in pending { h() }
    }

    /// Runs `hook` when stop is raised (at once if it already was). Cancel the returned
    /// ``Hook`` once `hook` has nothing left to stop.
    @discardableResult
    public func onRaise(_ hook: @escaping @Sendable () -> Void) -> Hook {
        let id = hooks.withLock { h -> Int? in
            if raised.load(ordering: .acquiring) { return nil }
            h.next += 1
            h.byID[h.next] = hook
            return h.next
        }
        guard let id else {
            hook()
            return Hook(id: -1, stop: self)
        }
        return Hook(id: id, stop: self)
    }

    /// Sleeps up to `duration`, returning early (true) if stop is raised meanwhile.
    @discardableResult
    public func sleep(_ duration: Duration) -> Bool {
        let end = ContinuousClock.now + duration
        while !isRaised {
            let left = ContinuousClock.now.duration(to: end)
            if left <= .zero { return false }
            let step = min(left, .milliseconds(50))
            Thread.sleep(forTimeInterval: Double(step.components.seconds) + Double(step.components.attoseconds) / 1e18)
        }
        return true
    }
}

/// Runs sources on threads of their own, each with its own ring in the pipeline, restarting
/// those that reconnect with exponential backoff (1 s doubling to 60 s).
public final class SourceRunner: Sendable {
    private let pipeline: IngestPipeline
    private let logger: Logger
    /// Raised by ``stopAll()``; sources watch it.
    public let stop = IngestStop()
    private let running = Mutex<[DispatchSemaphore]>([])

    /// A runner feeding `pipeline`.
    public init(pipeline: IngestPipeline, logger: Logger) {
        self.pipeline = pipeline
        self.logger = logger
    }

    /// Starts `source` on its own thread; `onEnd` runs on that thread once the source is done
    /// for good (it ended and does not reconnect, or stop was raised).
    public func start(_ source: any IngestSource, onEnd: (@Sendable () -> Void)? = nil) throws {
        let ring = try pipeline.makeRing(name: source.name)
        let done = DispatchSemaphore(value: 0)
        running.withLock { $0.append(done) }
        let (pipeline, logger, stop) = (self.pipeline, self.logger, self.stop)
        let thread = Thread {
            var backoff = Duration.seconds(1)
            while !stop.isRaised {
                let began = ContinuousClock.now
                do {
                    try source.run(into: ring, slots: pipeline.slots, stop: stop)
                    if !source.reconnects || stop.isRaised { break }
                    logger.notice("\(source.name): ended; reconnecting in \(backoff)")
                } catch {
                    if stop.isRaised { break }
                    guard source.reconnects else {
                        logger.error("\(source.name): \(error)")
                        break
                    }
                    var why = "\(error)"
                    while why.hasSuffix(".") || why.hasSuffix(" ") { why.removeLast() }   // the sentence continues
                    if error is any ReportedBySource {
                        logger.debug("\(source.name): \(why); reconnecting in \(backoff)")
                    } else {
                        logger.warning("\(source.name): \(why); retrying in \(backoff)")
                    }
                }
                // A source that ran a good while before failing starts its backoff over.
                if began.duration(to: .now) > .seconds(60) { backoff = .seconds(1) }
                stop.sleep(backoff)
                backoff = min(backoff * 2, .seconds(60))
            }
            ring.close()
            onEnd?()
            done.signal()
        }
        thread.name = "src-\(source.name)".prefix(15).description
        thread.start()
    }

    /// Raises stop and waits until every source thread has returned (and closed its ring).
    public func stopAll() {
        stop.raise()
        for d in running.withLock({ $0 }) { d.wait(); d.signal() }
    }

    /// Waits until every started source has ended by itself (replays, demos with a duration).
    public func waitForAll() {
        for d in running.withLock({ $0 }) { d.wait(); d.signal() }
    }
}
