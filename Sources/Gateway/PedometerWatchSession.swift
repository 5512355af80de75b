import Foundation
import HealthModel
import HealthStore
import Ingest
import Logging
import SerialPedometer
import Synchronization
import Udev
import Locking

/// What one pedometer's stream did, for `serial watch`'s summary at its end.
package struct PedometerTally: Sendable, Equatable {
    /// Lines parsed as readings.
    package var accepted = 0
    /// Rejected lines by reason code (`garbage`, `too-long`, …).
    package var rejected: [String: Int] = [:]
    /// Step samples pushed.
    package var samples = 0
    /// Steps in those samples.
    package var steps: UInt64 = 0

    /// An empty tally.
    package init() {}

    mutating func add(_ e: SessionEvent) {
        switch e {
        case .accepted: accepted += 1
        case .rejected(_, let why): rejected[why.code, default: 0] += 1
        case .sample(let s): samples += 1; steps += s.steps
        case .counter: break
        }
    }
}

/// The composition of `serial watch`: `run`'s pedometer path for the pedometers a command line
/// names — one ``PedometerSource`` (or the one hot-plug ``PedometerWatcher`` for `--reopen` and
/// `--auto`) pushing into a pipeline run by a ``GatewayRuntime`` (one stop mechanism, one signal
/// trap) into the store, or into a ``Ingest/NullSink`` without one. The front-end only prints
/// the ``Event``s: each source's raw events (the tap), what each commit stored, store failures.
package final class PedometerWatchSession: Sendable {
    /// What a front-end shows as the session runs (called from several threads).
    package enum Event: Sendable {
        /// `--auto`: the watcher listens; device events come from `source` (nil: periodic scans only).
        case monitoring(UdevEventSource?)
        /// The counter state of `path` was carried over from an earlier version's id.
        case carriedOver(path: String, from: String, to: String)
        /// The port of `path` is open and read as `id`, by `rule`.
        case opened(path: String, id: String, rule: GatewayConfig.Pedometer)
        /// The port of `path` could not be opened.
        case openFailed(path: String, id: String, any Error)
        /// A line, counter note or step sample of `id`.
        case session(id: String, SessionEvent)
        /// The stream of `id` ended: `gone` says why the device went away (nil: stopped).
        case ended(path: String, id: String, gone: String?, tally: PedometerTally)
        /// A commit stored `samples` samples of `id`.
        case stored(id: String, samples: Int)
        /// The store refused a batch; it stays pending and is retried.
        case storeFailed(String)
    }

    /// How a session ended.
    package struct Outcome: Sendable {
        /// The pipeline's final counters.
        package var stats: IngestStats
        /// Whether everything pushed was stored: nothing abandoned or rejected, and the last
        /// commit attempt succeeded.
        package var everythingStored: Bool
    }

    private let store: HealthStore?
    private let runtime: GatewayRuntime
    private let logger: Logger
    private let events: @Sendable (Event) -> Void
    private let storeFailing = Locked(false)

    /// A session storing into `store` (nil: nothing is stored; counter state stays in memory).
    /// - Parameters:
    ///   - flushInterval: how long a sample may wait before its batch commits.
    ///   - logger: the runtime's and the watcher's log (front-ends that print everything from
    ///     ``Event``s pass a quiet one).
    ///   - events: what the front-end shows.
    package init(store: HealthStore?, flushInterval: Duration = .milliseconds(250), logger: Logger,
                events: @escaping @Sendable (Event) -> Void) throws {
        self.store = store
        self.logger = logger
        self.events = events
        let sink: any SampleSink = try store.map { try StoreSink(store: $0) } ?? NullSink()
        runtime = try GatewayRuntime(sink: sink, store: store, configuration: IngestConfiguration(flushInterval: flushInterval),
                                     logger: logger)
        let storeFailing = self.storeFailing
        // What was stored: per device, from the committed batches.
        runtime.pipeline.addObserver { batch in
            var perDevice: [UInt16: Int] = [:]
            for r in batch.records { perDevice[r.deviceSlot, default: 0] += 1 }
            for (slot, n) in perDevice.sorted(by: { $0.key < $1.key }) {
                let local = batch.slots.device(slot)?.localIdentifier
                let id = local.map { $0.hasPrefix("serial:") ? String($0.dropFirst(7)) : $0 } ?? "?"
                events(.stored(id: id, samples: n))
            }
            storeFailing.withLock { $0 = false }
        }
        runtime.pipeline.onStallChange { reason in
            guard let reason else { return }
            storeFailing.withLock { $0 = true }
            events(.storeFailed(reason))
        }
    }

    /// The tap of one device: its events as ``Event``s, a tally reset at each open and handed
    /// over at the end of each stream; `onOpen` hears each open's result.
    private func tap(path: String, id: String, rule: GatewayConfig.Pedometer,
                     onOpen: (@Sendable (Result<Void, any Error>) -> Void)? = nil) -> @Sendable (PedometerEvent) -> Void {
        let tally = Lock(PedometerTally())
        let events = self.events
        return { event in
            switch event {
            case .openFailed(let error):
                onOpen?(.failure(error))
                events(.openFailed(path: path, id: id, error))
            case .opened:
                tally.withLock { $0 = PedometerTally() }
                events(.opened(path: path, id: id, rule: rule))
                onOpen?(.success(()))
            case .session(let e):
                tally.withLock { $0.add(e) }
                events(.session(id: id, e))
            case .ended(let gone, _):
                events(.ended(path: path, id: id, gone: gone, tally: tally.withLock { $0 }))
            }
        }
    }

    /// One device (`serial watch DEVICE`) until it goes away, or with `reopen` (the hot-plug
    /// watcher opening it again whenever it returns) until SIGINT/SIGTERM or ``stop()``.
    /// Blocks: call it from a thread of its own (``GatewayRuntime/run``).
    /// - Throws: the first open's error (a missing path, no tty, no permission, busy), after
    ///   stopping; ``StoreError`` when the old id's counter state could not be carried over.
    package func run(device rule: GatewayConfig.Pedometer, reopen: Bool, trapsSignals: Bool = true) throws -> Outcome {
        let path = rule.path ?? ""
        let identity = PedometerIdentity.resolve(path: path, given: rule.id)
        if let store, let old = try PedometerStateMigration.carryOver(in: store, identity: identity) {
            events(.carriedOver(path: path, from: old, to: identity.id))
        }
        // The first open decides: a device that cannot be opened ends the command with its error.
        let firstOpen = Lock<Result<Void, any Error>?>(nil)
        let runtime = self.runtime
        let onOpen: @Sendable (Result<Void, any Error>) -> Void = { result in
            let first = firstOpen.withLock { r -> Bool in
                defer { if r == nil { r = result } }
                return r == nil
            }
            if first, case .failure = result { runtime.requestStop(reason: "\(path) could not be opened") }
        }
        var pinned = rule
        pinned.id = identity.id
        let stats: IngestStats
        if reopen {
            // The one hot-plug watcher, on this path: it opens the device again when it returns.
            // The device must be there at the start: a missing path is an error, as without
            // --reopen (one that is no tty fails its first open, which ends the command too).
            guard FileManager.default.fileExists(atPath: path) else { throw SerialPortError.notFound(path) }
            let r = pinned
            let watcher = PedometerWatcher(rules: [r], runner: runtime.runner, logger: logger, store: store) { [self] _, p, _ in
                tap(path: p, id: identity.id, rule: r, onOpen: onOpen)
            }
            stats = try runtime.run(sources: [], statusInterval: .seconds(3600), started: { watcher.start(interval: .milliseconds(200)) },
                                    trapsSignals: trapsSignals, interactive: true, stopsOnFailure: false)
        } else {
            let registry = PedometerWatcher.registry(store: store, path: path, identity: identity, logger: logger)
            let front = tap(path: path, id: identity.id, rule: rule, onOpen: onOpen)
            let source = PedometerSource(path: path, id: identity.id, options: rule.sourceOptions, name: rule.name,
                                         device: PedometerWatcher.device(identity: identity, name: rule.name, path: path),
                                         reconnects: false) { event in
                registry(event)
                front(event)
            }
            stats = try runtime.run(sources: [source], endWhenSourcesEnd: true, statusInterval: .seconds(3600),
                                    trapsSignals: trapsSignals, interactive: true, stopsOnFailure: false)
        }
        if case .failure(let error) = firstOpen.withLock({ $0 }) { throw error }
        return outcome(stats)
    }

    /// Every device matching `rules` while it is plugged in (`serial watch --auto`), until
    /// SIGINT/SIGTERM or ``stop()``. Blocks: call it from a thread of its own.
    package func run(rules: [GatewayConfig.Pedometer], trapsSignals: Bool = true) throws -> Outcome {
        let watcher = PedometerWatcher(rules: rules, runner: runtime.runner, logger: logger, store: store) { [self] rule, path, identity in
            tap(path: path, id: identity.id, rule: rule)
        }
        let events = self.events
        let stats = try runtime.run(sources: [], statusInterval: .seconds(3600),
                                    started: { events(.monitoring(watcher.start(interval: .seconds(2)))) },
                                    trapsSignals: trapsSignals, interactive: true, stopsOnFailure: false)
        return outcome(stats)
    }

    /// Stops a running session (any thread): the sources end, what was read is committed.
    package func stop() { runtime.requestStop(reason: "stopped") }

    private func outcome(_ stats: IngestStats) -> Outcome {
        Outcome(stats: stats, everythingStored: stats.abandoned == 0 && stats.rejected == 0 && !storeFailing.withLock { $0 })
    }
}

extension PedometerWatchSession.Event {
    /// The `serial watch --json` lines of this event (none, one, or two when a stream ends:
    /// `unplugged` or `stopped`, then its `summary`). `rules` are the session's; `auto`: it waits
    /// for devices (`--auto`), so an opened port is a `plugged` event; else it is `opened` (the
    /// port is set up and read from now on: a script may start writing to a test peer).
    package func jsonObjects(rules: [GatewayConfig.Pedometer], auto: Bool) -> [[String: any Sendable]] {
        switch self {
        case .monitoring(let source):
            return [["event": "monitor", "source": source?.rawValue ?? "scan", "rules": rules.map(\.summary)]]
        case .carriedOver, .openFailed:
            return []
        case .opened(let path, let id, let rule):
            return auto ? [["event": "plugged", "device": id, "path": path, "matchedBy": rule.summary]]
                : [["event": "opened", "device": id, "path": path]]
        case .session(let id, let e):
            return [e.jsonObject(device: id)]
        case .ended(_, let id, let gone, let t):
            let end: [String: any Sendable] = gone.map { ["event": "unplugged", "device": id, "reason": $0] } ?? ["event": "stopped", "device": id]
            return [end, ["event": "summary", "device": id, "acceptedLines": t.accepted, "rejectedLines": t.rejected,
                          "samples": t.samples, "steps": t.steps]]
        case .stored(let id, let n):
            return [["event": "stored", "device": id, "samples": n]]
        case .storeFailed(let reason):
            return [["event": "store-error", "message": reason]]
        }
    }
}
