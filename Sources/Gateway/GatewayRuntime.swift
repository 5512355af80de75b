import Dispatch
import Foundation
import Sysexits
import HealthStore
import Ingest
import Logging
import Platform
import Synchronization
import Systemd
#if canImport(Glibc)
@preconcurrency import Glibc
import Locking
#endif

/// Runs the ingest pipeline for a process: opens the store, starts the writer and the sources,
/// speaks systemd, logs status, and on SIGTERM/SIGINT (or when told) stops the sources, drains,
/// commits and returns the final counters.
///
/// Used by `healthgate run` (configured sources, until a signal), `healthgate demo`
/// (simulated sources, for a duration) and `healthgate replay` (until the capture ends).
package final class GatewayRuntime: Sendable {
    /// The pipeline (for observers).
    package let pipeline: IngestPipeline
    /// The store the pipeline writes (nil behind a ``Ingest/NullSink``: nothing is kept).
    package let store: HealthStore?
    /// The sources' runner.
    package let runner: SourceRunner
    private let logger: Logger
    private let notifier: SystemdNotifier
    private let stopRequest = DispatchSemaphore(value: 0)
    private let stopReason = Lock<String?>(nil)
    private let failure = Lock<(any Error)?>(nil)

    /// How often ``run(sources:duration:endWhenSourcesEnd:statusInterval:started:status:)``
    /// removes expired change-feed tombstones (``HealthStore/pruneExpiredTombstones(now:)``):
    /// once at start, then at this interval. Default one hour.
    package let tombstonePruneInterval: Duration

    /// Opens `store` and prepares a pipeline with `configuration`, committing with `durability`
    /// (group commit unless told otherwise; ``StoreSink/Durability``).
    package convenience init(store: HealthStore, configuration: IngestConfiguration, durability: StoreSink.Durability = .group,
                            policy: ReconnectPolicy = ReconnectPolicy(), tombstonePruneInterval: Duration = .seconds(3600),
                            logger: Logger, notifier: SystemdNotifier = SystemdNotifier()) throws {
        try self.init(sink: try StoreSink(store: store, durability: durability), store: store, configuration: configuration,
                      policy: policy, tombstonePruneInterval: tombstonePruneInterval, logger: logger, notifier: notifier)
    }

    /// A runtime whose pipeline writes to `sink` (a ``Ingest/NullSink`` keeps nothing: `live
    /// --no-store`, `record`); `store`, when given, is the one `sink` writes (its change-feed
    /// tombstones are pruned). Sources are restarted by `policy`.
    package init(sink: any SampleSink, store: HealthStore?, configuration: IngestConfiguration,
                policy: ReconnectPolicy = ReconnectPolicy(), tombstonePruneInterval: Duration = .seconds(3600),
                logger: Logger, notifier: SystemdNotifier = SystemdNotifier()) throws {
        self.store = store
        self.logger = logger
        self.notifier = notifier
        self.tombstonePruneInterval = tombstonePruneInterval
        self.pipeline = try IngestPipeline(sink: sink, configuration: configuration)
        self.runner = SourceRunner(pipeline: pipeline, logger: logger, policy: policy)
        let log = logger
        pipeline.onSyncFailure { reason in
            log.error("the disk refused to sync the write-ahead log (\(reason)): the batches committed since the last good sync may be lost if the power fails now; committing with one fsync per batch from now on. Check the disk (dmesg, df) and the SD card.")
            notifier.status("fsync failed: \(reason)")
        }
        pipeline.onFinishFailure { reason in
            log.warning("could not mark the open quantity series closed at stop (\(reason)); every committed sample is kept, and the next run closes them")
        }
        pipeline.onRejection { what in log.warning("\(what)") }
        pipeline.onStallChange { reason in
            if let reason {
                // Warning, not error: nothing is lost yet and the writer resumes by itself; the
                // status line repeats it at warning while it lasts (journalctl -p warning).
                log.warning("the store refused a batch and the writer is holding it: \(reason); sources keep running into their rings and overflow lists (see stats), and the writer retries")
                notifier.status("stalled: \(reason)")
            } else {
                log.notice("the store accepts writes again; the writer resumed")
            }
        }
    }

    /// Called before each source retry with the source's name, why, and the pause (front-ends
    /// show it; ``SourceRunner/onRetry(_:)``).
    package func onRetry(_ observer: @escaping @Sendable (String, String, Duration) -> Void) {
        runner.onRetry(observer)
    }

    /// Asks ``run(sources:until:statusInterval:)`` to stop (any thread).
    package func requestStop(reason: String) {
        let first = stopReason.withLock { r -> Bool in
            if r != nil { return false }
            r = reason
            return true
        }
        if first { stopRequest.signal() }
    }

    /// Starts the writer and `sources`, then waits for SIGTERM/SIGINT, ``requestStop(reason:)``,
    /// the end of `duration`, or (with `endWhenSourcesEnd`) every source ending. Then it stops
    /// the sources, drains and commits everything, and returns the final counters. Every
    /// `statusInterval` a status line goes to the log and to systemd (`STATUS=`), prefixed with
    /// what `devices` says ("9/10 straps subscribed, 4 pedometers open").
    ///
    /// `interactive` (a command at a terminal): a second signal exits at once, and unless
    /// `stopsOnFailure` says otherwise a source failing for good ends the run with its error.
    ///
    /// Blocks the calling thread until stopped, so call it from a thread of its own, never from
    /// a Swift concurrency task: strap sources set up their GATT connections with async work on
    /// the cooperative pool (as many threads as cores, one on a single-core board), and a pool
    /// thread held here could leave no strap subscribed and the stop waiting forever. A call
    /// from a task is a programming error and stops the process with that message.
    package func run(sources: [any IngestSource], duration: Duration? = nil, endWhenSourcesEnd: Bool = false,
                    statusInterval: Duration = .seconds(60), started: (() -> Void)? = nil,
                    status: (@Sendable (IngestStats) -> Void)? = nil,
                    devices: (@Sendable () -> String)? = nil, trapsSignals: Bool = true,
                    interactive: Bool = false, stopsOnFailure: Bool? = nil) throws -> IngestStats {
        precondition(withUnsafeCurrentTask { $0 == nil },
                     "GatewayRuntime.run blocks until stopped: call it from a thread of its own, not from a Swift concurrency task (it would hold a cooperative thread the strap sources' setup needs)")
        // The one signal trap: SIGTERM/SIGINT request the stop (interactive: a second one exits).
        let trap = trapsSignals ? SignalTrap(secondSignalExits: interactive) { [self] in requestStop(reason: $0) } : nil
        defer { trap?.cancel() }
        let queue = DispatchQueue(label: "healthgate.runtime")
        if stopsOnFailure ?? interactive {
            // A failure no retry can fix (no Bluetooth, no permission, not a strap) ends an
            // interactive command, after everything received is committed (`serial watch`
            // decides itself which of its pedometers' failures end it).
            runner.onFailure { [self] name, error in
                let first = failure.withLock { f -> Bool in
                    if f != nil { return false }
                    f = error
                    return true
                }
                if first { requestStop(reason: "\(name) failed") }
            }
        }

        pipeline.start()
        for source in sources { try runner.start(source) }
        started?()
        notifier.ready(status: "ingesting from \(sources.count) source(s)")
        logger.info("ingesting from \(sources.count) source(s) into \(store?.path ?? "nothing (no store)")")
        let clockWatch = Self.watchClock(logger: logger)
        defer { clockWatch.cancel() }
        if let store { Self.checkClock(against: store, logger: logger) }

        // Watchdog pings and status lines from a timer; the calling thread just waits.
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let tick = notifier.watchdogInterval.map { min($0 / 2, .seconds(1)) } ?? .seconds(1)
        let tickNanos = Int(tick.components.seconds) * 1_000_000_000 + Int(tick.components.attoseconds / 1_000_000_000)
        timer.schedule(deadline: .now() + .nanoseconds(tickNanos), repeating: .nanoseconds(tickNanos))
        let lastStatus = Lock(ContinuousClock.now)
        let lastPrune = Lock<ContinuousClock.Instant?>(nil)
        let maintenance = DispatchQueue(label: "healthgate.maintenance")
        let (pipeline, logger, notifier, store, pruneEvery) = (self.pipeline, self.logger, self.notifier, self.store, tombstonePruneInterval)
        timer.setEventHandler {
            notifier.watchdog()
            // Change-feed tombstones past their retention: nobody may ask for them any more.
            let pruneDue = lastPrune.withLock { last -> Bool in
                guard last.map({ $0.duration(to: .now) >= pruneEvery }) ?? true else { return false }
                last = .now
                return true
            }
            if pruneDue, let store {
                // On a queue of its own: a slow delete (or a store held by another process) must
                // not delay the watchdog pings and signal handling this queue serves.
                maintenance.async {
                    do {
                        let n = try store.pruneExpiredTombstones()
                        if n > 0 { logger.info("removed \(n) change-feed tombstone(s) past their retention") }
                    } catch {
                        logger.warning("could not remove expired change-feed tombstones: \(error); will retry in \(pruneEvery)")
                    }
                }
            }
            let due = lastStatus.withLock { last -> Bool in
                guard last.duration(to: .now) >= statusInterval else { return false }
                last = .now
                return true
            }
            let s = pipeline.stats
            status?(s)
            if due {
                let prefix = devices?() ?? ""
                let line = (prefix.isEmpty ? "" : prefix + "; ") + Self.statusLine(s) + Self.commitsNote(store)
                // While the store is stalled the status line is the periodic reminder of it, at
                // the stall's own level, so `journalctl -p warning` shows it lasting.
                logger.log(level: s.stalledBy == nil ? .info : .warning, "\(line)")
                notifier.status(line)
            }
        }
        timer.resume()
        if endWhenSourcesEnd {
            let runner = self.runner
            Thread.detachNewThread { [self] in
                runner.waitForAll()
                requestStop(reason: "sources ended")
            }
        }
        if let duration {
            let ns = Int(duration.components.seconds) * 1_000_000_000 + Int(duration.components.attoseconds / 1_000_000_000)
            queue.asyncAfter(deadline: .now() + .nanoseconds(ns)) { [self] in requestStop(reason: "duration reached") }
        }

        stopRequest.wait()
        let reason = stopReason.withLock { $0 } ?? "stop"
        logger.notice("\(reason): stopping sources, draining and committing")
        notifier.stopping(status: "\(reason): draining")
        runner.stopAll()
        let final = pipeline.stop()
        timer.cancel()
        // The main file alone should hold every commit after a clean stop (docs/store.md).
        if let store {
            do {
                if try !store.checkpoint() { logger.notice("readers kept part of the write-ahead log from being copied into \(store.path); the next writer copies it") }
            } catch {
                logger.warning("could not checkpoint \(store.path) at stop (\(error)); the last commits are safe in its -wal file")
            }
        }
        logger.notice("stopped: \(Self.statusLine(final))\(Self.commitsNote(store))")
        if let e = failure.withLock({ $0 }) { throw e }
        return final
    }

    /// Says when the wall clock, which dates every reading, is not set (before
    /// ``Platform/ClockSteps/earliestPlausible``) and, while the run lasts, each time it steps
    /// (docs/operations.md, "The clock"): sources already keep their intervals to what really
    /// passed (``Platform/ClockSteps``); the samples received before a step keep the old clock's
    /// dates, and these lines say which.
    static func watchClock(logger: Logger, clock: ClockSteps = .system) -> ClockSteps.Observation {
        @Sendable func iso(_ t: Double) -> String { Date(timeIntervalSince1970: t).formatted(.iso8601) }
        let unset = "it has not been set (no RTC, and no NTP yet): samples are dated by it"
        let advice = "start healthgate after the time is synchronised (systemd-time-wait-sync; docs/operations.md, \"The clock\")"
        if let now = ClockSteps.implausibleNow() {
            logger.warning("the system clock reads \(iso(now.timeIntervalSince1970)), before \(iso(ClockSteps.earliestPlausible)): \(unset); \(advice)")
        }
        let since = Lock(Date().timeIntervalSince1970)
        return clock.observe { step in
            let before = step.at - step.seconds
            let from = since.withLock { f -> Double in defer { f = step.at }; return f }
            var line = "the system clock stepped \(step.described) (NTP setting it, or `date -s`): samples received before the step"
                + " (from \(iso(from)) to \(iso(before)) by the old clock) keep the old clock's dates; intervals across it last what really passed"
            if before < ClockSteps.earliestPlausible { line += "; the old clock was not set: \(advice)" }
            if step.at < ClockSteps.earliestPlausible { line += "; the clock still reads before \(iso(ClockSteps.earliestPlausible)): \(unset)" }
            logger.log(level: abs(step.seconds) >= 1 ? .warning : .info, "\(line)")
        }
    }

    /// How far the newest stored sample may lie ahead of the clock before ``checkClock(against:logger:now:)``
    /// says so (a strap's interval ending a moment after a reading, clocks a little apart).
    static let clockBehindStoreTolerance: TimeInterval = 120

    /// Says, at start, when the store already holds samples dated after the system clock's now:
    /// the clock was set back while HealthGate was stopped (a Pi without an RTC restored the
    /// time `fake-hwclock` saved before a power cut, or its NTP is not there yet) or those
    /// samples came from a clock that was ahead. Nothing is changed: new samples are dated by
    /// this clock, and the line says what to do (docs/operations.md, "The clock"). A store that
    /// cannot be read is not this check's business (the writer says it).
    static func checkClock(against store: HealthStore, logger: Logger, now: Date = Date()) {
        guard let newest = try? store.newestSampleEnd() else { return }
        let ahead = newest.end.timeIntervalSince(now)
        guard ahead > clockBehindStoreTolerance else { return }
        logger.warning("the store's newest sample (\(newest.type)) ends at \(newest.end.formatted(.iso8601)), \(ClockSteps.Step.text(seconds: ahead)) after the system clock's \(now.formatted(.iso8601)): the clock was set back while healthgate was stopped (no RTC: an older saved time after a power cut, NTP not there yet) or those samples came from a clock that was ahead; new samples are dated by this clock and sort before them until it passes \(newest.end.formatted(.iso8601)); start healthgate after the time is synchronised (systemd-time-wait-sync; docs/operations.md, \"The clock\")")
    }

    /// The store transactions this process committed, for the status line: what the SD-card
    /// write profile divides the bytes written by (docs/store.md, "Writes").
    static func commitsNote(_ store: HealthStore?) -> String {
        store == nil ? "" : ", \(HealthStore.processCommits) store commits"
    }

    /// One line for logs and `systemctl status`.
    package static func statusLine(_ s: IngestStats) -> String {
        var line = "\(s.committed) committed in \(s.batches) batches, \(s.pending + s.held) waiting, \(s.dropped) dropped"
        if s.spilled > 0 { line += ", \(s.spilled) spilled" }
        if s.rejected > 0 { line += ", \(s.rejected) rejected" }
        if s.failedSyncs > 0 { line += ", \(s.failedSyncs) failed fsync(s) of committed batches" }
        if s.abandoned > 0 { line += ", \(s.abandoned) NOT committed (store failing at shutdown)" }
        if let why = s.stalledBy { line += "; stalled: \(why)" }
        return line
    }
}

extension IngestStats {
    /// What a command exits with (74) when samples were abandoned at shutdown because the store
    /// kept failing, naming `what` to check; nil when none was.
    package func abandonedFailure(check what: String) -> CLIFailure? {
        guard abandoned > 0 else { return nil }
        return CLIFailure("\(abandoned) samples could not be committed at shutdown because the store kept failing (\(stalledBy ?? "unknown")); free disk space or check \(what).", code: .ioError)
    }
}
