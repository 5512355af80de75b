import Foundation
import HealthModel
import Synchronization
import Locking

/// Settings of the ingest pipeline (the `[ingest]` table of `healthgate.toml`).
package struct IngestConfiguration: Sendable, Equatable {
    /// Commit when this many samples are held (one transaction each).
    package var batchSize: Int
    /// Commit what is held once its oldest sample has waited this long. With ``batchSize``,
    /// this bounds what a SIGKILL or power loss can cost (docs/ingestion.md).
    package var flushInterval: Duration
    /// Capacity of each source's ring (rounded up to a power of two).
    package var ringCapacity: Int
    /// What a full ring does.
    package var overflow: OverflowPolicy
    /// How long the writer waits before retrying a failed commit.
    package var retryInterval: Duration
    /// How long ``IngestPipeline/stop(timeout:)`` keeps retrying a failing store before it gives
    /// up and reports what it could not commit.
    package var stopTimeout: Duration
    /// The least time between two syncs of committed batches (group commit,
    /// ``SampleSink/sync()``; `[ingest] sync_interval_ms`): the writer keeps committing every
    /// flush interval, but fsyncs the write-ahead log at most this often (and always before it
    /// stops). A process crash loses nothing committed either way; a power cut can lose the
    /// batches committed since the last sync — up to this interval of them. Zero syncs as soon as
    /// the writer has caught up after each commit. docs/ingestion.md, "Durability".
    package var syncInterval: Duration

    /// The defaults: 1,000 samples or 250 ms per transaction, 4,096-sample rings spilling up to
    /// 100,000 samples per source, a sync at most every ``defaultSyncInterval``.
    package init(batchSize: Int = 1_000, flushInterval: Duration = .milliseconds(250),
                ringCapacity: Int = 4_096, overflow: OverflowPolicy = .spill(limit: 100_000),
                retryInterval: Duration = .milliseconds(500), stopTimeout: Duration = .seconds(10),
                syncInterval: Duration = defaultSyncInterval) {
        self.batchSize = batchSize
        self.flushInterval = flushInterval
        self.ringCapacity = ringCapacity
        self.overflow = overflow
        self.retryInterval = retryInterval
        self.stopTimeout = stopTimeout
        self.syncInterval = syncInterval
    }

    /// The default ``syncInterval``: 5 s (docs/store.md, "Writes (SD card)": the bytes written
    /// per sample measured for each choice).
    package static let defaultSyncInterval = Duration.seconds(5)

    /// Checks the ranges; throws ``IngestError/invalidSetting(_:)`` naming the bad one.
    package func validate() throws(IngestError) {
        guard (1...1_000_000).contains(batchSize) else {
            throw .invalidSetting("batch size \(batchSize) is outside 1…1,000,000")
        }
        guard flushInterval > .zero, flushInterval <= .seconds(60) else {
            throw .invalidSetting("flush interval \(flushInterval) is outside (0, 60 s]")
        }
        guard (2...(1 << 24)).contains(ringCapacity) else {
            throw .invalidSetting("ring capacity \(ringCapacity) is outside 2…16,777,216")
        }
        guard syncInterval >= .zero, syncInterval <= .seconds(600) else {
            throw .invalidSetting("sync interval \(syncInterval) is outside [0, 600 s]")
        }
        if case .spill(let limit) = overflow, limit < 0 {
            throw .invalidSetting("spill limit \(limit) is negative")
        }
    }
}

/// A snapshot of the pipeline's counters. For every sample pushed, exactly one of committed,
/// dropped, rejected, pending or held is true at any moment; after a clean stop pending and held
/// are zero.
package struct IngestStats: Sendable, Equatable, Codable {
    /// Samples pushed by all sources.
    package var pushed: UInt64 = 0
    /// Samples committed to the store.
    package var committed: UInt64 = 0
    /// Samples dropped because a ring (and its overflow list) was full.
    package var dropped: UInt64 = 0
    /// Samples that went through an overflow list (and were not lost).
    package var spilled: UInt64 = 0
    /// Samples the store refused as invalid (counted, logged, not retried).
    package var rejected: UInt64 = 0
    /// Samples still in rings or overflow lists.
    package var pending: UInt64 = 0
    /// Samples the writer holds in its current batch or backlog.
    package var held: UInt64 = 0
    /// Transactions committed.
    package var batches: UInt64 = 0
    /// Failed commit attempts (each retried).
    package var failedWrites: UInt64 = 0
    /// Samples given up on when ``IngestPipeline/stop(timeout:)`` hit its timeout with the store
    /// still failing. Zero after a clean stop.
    package var abandoned: UInt64 = 0
    /// Failed syncs of committed batches (group commit, ``SampleSink/sync()``): those batches
    /// stay committed (a process crash cannot lose them) but may be lost if the power fails;
    /// ``StoreSink`` then commits with one fsync each.
    package var failedSyncs: UInt64 = 0
    /// The last store failure, if the writer is currently stalled by one.
    package var stalledBy: String?
}

/// A batch the store has committed, handed to observers on the writer thread.
package struct CommittedBatch {
    /// The committed records, in commit order. Valid only during the observer call.
    package let records: UnsafeBufferPointer<SampleRecord>
    /// Resolves the records' slots.
    package let slots: SlotTable
    /// 1 for the first transaction, then counting up.
    package let sequence: UInt64

    init(records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable, sequence: UInt64) {
        self.records = records
        self.slots = slots
        self.sequence = sequence
    }
}

/// The ingest pipeline: per-source rings, one writer thread, batched commits, observers.
///
/// Sources get a ring from ``makeRing(name:)`` and push into it from their own thread. The
/// writer drains every ring into a batch and commits it through the ``SampleSink`` when the
/// batch holds ``IngestConfiguration/batchSize`` samples or its oldest sample has waited
/// ``IngestConfiguration/flushInterval``; only after the commit are observers told. A failed
/// commit is kept and retried (a full disk stalls the writer; rings then spill and, past their
/// limit, drop and count). ``stop(timeout:)`` closes every ring, drains, commits and returns the
/// final counters. See docs/ingestion.md.
package final class IngestPipeline: @unchecked Sendable {
    /// The settings the pipeline runs with.
    package let configuration: IngestConfiguration
    /// The slot table records refer to.
    package let slots: SlotTable
    /// The side channel for records' extras (sync identifiers, state to persist), shared by
    /// every ring of the pipeline (docs/ingestion.md, "The side channel").
    package let attachments: SampleAttachments

    private let sink: any SampleSink
    private let now: @Sendable () -> ContinuousClock.Instant
    private let rings = Lock<[SampleRing]>([])
    private let observers = Lock<[@Sendable (CommittedBatch) -> Void]>([])
    private let stateObservers = Lock<[@Sendable (String?) -> Void]>([])
    private let syncObserver = Lock<(@Sendable (String) -> Void)?>(nil)
    private let finishObserver = Lock<(@Sendable (String) -> Void)?>(nil)
    private let rejectionObserver = Lock<(@Sendable (String) -> Void)?>(nil)
    private let stopRequested = Atomic<Bool>(false)
    private let stopDeadlineNanos = Atomic<Int64>(0)
    private let started = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    // Writer-owned counters, published for readers.
    private let committed = Atomic<UInt64>(0)
    private let rejected = Atomic<UInt64>(0)
    private let batches = Atomic<UInt64>(0)
    private let failedWrites = Atomic<UInt64>(0)
    private let held = Atomic<UInt64>(0)
    private let abandoned = Atomic<UInt64>(0)
    private let failedSyncs = Atomic<UInt64>(0)
    private let retiredPushed = Atomic<UInt64>(0)
    private let retiredDropped = Atomic<UInt64>(0)
    private let retiredSpilled = Atomic<UInt64>(0)
    private let stalledBy = Lock<String?>(nil)

    /// Makes a pipeline writing to `sink`. Call ``start()`` to run the writer.
    /// - Throws: ``IngestError/invalidSetting(_:)`` for out-of-range settings.
    /// - Parameter clock: the writer's "now" for flush and sync intervals (tests pass a clock
    ///   they move by hand, so a cadence is checked by counting, not by timing).
    package init(sink: any SampleSink, slots: SlotTable = SlotTable(),
                configuration: IngestConfiguration = IngestConfiguration(),
                clock: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) throws(IngestError) {
        try configuration.validate()
        self.sink = sink
        self.now = clock
        self.slots = slots
        self.configuration = configuration
        self.attachments = SampleAttachments { key throws(SinkError) in try sink.persistedState(forKey: key) }
    }

    /// A new ring for one source (one producer thread). Close it with ``SampleRing/close()``
    /// when the source ends; the writer retires it once drained.
    /// - Throws: ``IngestError/stopped`` once ``stop(timeout:)`` was called.
    package func makeRing(name: String) throws(IngestError) -> SampleRing {
        guard !stopRequested.load(ordering: .acquiring) else { throw .stopped }
        let ring = SampleRing(capacity: configuration.ringCapacity, policy: configuration.overflow, name: name,
                              attachments: attachments)
        rings.withLock { $0.append(ring) }
        return ring
    }

    /// Adds an observer, called on the writer thread after every commit. Keep it short: the
    /// writer does not drain while observers run.
    package func addObserver(_ observer: @escaping @Sendable (CommittedBatch) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// Called on the writer thread when the writer stalls on a store failure (with the reason)
    /// and when it recovers (with nil). Observers add up: the runtime logs, a front-end shows.
    package func onStallChange(_ observer: @escaping @Sendable (String?) -> Void) {
        stateObservers.withLock { $0.append(observer) }
    }

    /// Called on the writer thread, with the reason, when the sink could not make committed
    /// batches durable (``SampleSink/sync()`` failed): those batches may be lost if the power
    /// fails; the sink has made later commits safe on its own.
    package func onSyncFailure(_ observer: @escaping @Sendable (String) -> Void) {
        syncObserver.withLock { $0 = observer }
    }

    /// Called on the writer thread, with the reason, when the sink could not finish at a clean
    /// stop (``SampleSink/finish()``: the store sink marks its open series closed). Nothing
    /// written is lost; the next writer closes what this one left open.
    package func onFinishFailure(_ observer: @escaping @Sendable (String) -> Void) {
        finishObserver.withLock { $0 = observer }
    }

    /// Called on the writer thread, with a sentence, for each record refused before writing
    /// because its value is outside its type's plausible range
    /// (``HealthModel/QuantityType/plausibleRange``); each is also counted in
    /// ``IngestStats/rejected``. The other records of its batch are written.
    package func onRejection(_ observer: @escaping @Sendable (String) -> Void) {
        rejectionObserver.withLock { $0 = observer }
    }

    /// Removes the records of `batch[from..<to]` whose value is implausible for their type
    /// (records with an attachment are left to the sink, which validates them whole), counts
    /// and reports each, and returns the new end.
    private func dropImplausible(_ batch: UnsafeMutableBufferPointer<SampleRecord>, from: Int, to: Int) -> Int {
        var kept = from
        for i in from..<to {
            let r = batch[i]
            if !r.flags.contains(.attached), let type = slots.type(r.typeSlot), !type.isPlausible(r.value) {
                rejected.add(1, ordering: .releasing)
                let range = type.plausibleRange.map { " (plausible: \($0.lowerBound)…\($0.upperBound) \(type.canonicalUnitString))" } ?? ""
                rejectionObserver.withLock { $0 }?(
                    "skipped a \(type.identifier) sample of \(r.value) \(type.canonicalUnitString) from \(slots.source(r.sourceSlot)?.name ?? "?")\(range): not a plausible measurement")
                continue
            }
            if kept != i { batch[kept] = r }
            kept += 1
        }
        return kept
    }

    /// Starts the writer thread (once).
    package func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            writerLoop()
            finished.signal()
        }
        thread.name = "healthgate-writer"
        thread.start()
    }

    /// Stops: closes every ring, waits until the writer has committed everything (retrying a
    /// failing store until `timeout`, default the configured stop timeout), and returns the
    /// final counters. Samples still uncommitted at the timeout are counted as abandoned.
    @discardableResult
    package func stop(timeout: Duration? = nil) -> IngestStats {
        let limit = timeout ?? configuration.stopTimeout
        let (s, a) = limit.components
        let deadline = Int64(DispatchTime.now().uptimeNanoseconds) + s * 1_000_000_000 + a / 1_000_000_000
        stopDeadlineNanos.store(deadline, ordering: .relaxed)
        for ring in rings.withLock({ $0 }) { ring.close() }
        stopRequested.store(true, ordering: .releasing)
        if started.load(ordering: .acquiring) {
            finished.wait()
            finished.signal()   // later stop() calls return at once
        }
        return stats
    }

    /// The counters now.
    package var stats: IngestStats {
        var s = IngestStats()
        let live = rings.withLock { $0 }
        s.pushed = retiredPushed.load(ordering: .acquiring)
        s.dropped = retiredDropped.load(ordering: .acquiring)
        s.spilled = retiredSpilled.load(ordering: .acquiring)
        for r in live {
            s.pushed += r.pushedCount
            s.dropped += r.droppedCount
            s.spilled += r.spilledCount
            s.pending += UInt64(max(0, r.pendingCount))
        }
        s.committed = committed.load(ordering: .acquiring)
        s.rejected = rejected.load(ordering: .acquiring)
        s.batches = batches.load(ordering: .acquiring)
        s.failedWrites = failedWrites.load(ordering: .acquiring)
        s.held = held.load(ordering: .acquiring)
        s.abandoned = abandoned.load(ordering: .acquiring)
        s.failedSyncs = failedSyncs.load(ordering: .acquiring)
        s.stalledBy = stalledBy.withLock { $0 }
        return s
    }

    // MARK: The writer

    private final class Backlog {
        var records: [SampleRecord] = []
        var next = 0
        var remaining: Int { records.count - next }
    }

    private func writerLoop() {
        let cap = configuration.batchSize
        let batch = UnsafeMutableBufferPointer<SampleRecord>.allocate(capacity: cap)
        defer { batch.deallocate() }
        var count = 0
        var firstHeld: ContinuousClock.Instant?
        var backlogs: [ObjectIdentifier: Backlog] = [:]
        var idleSleep = Duration.microseconds(500)
        let maxIdle = min(Duration.milliseconds(20), configuration.flushInterval / 4)
        var start = 0
        var stalled = false
        var abandoned = false
        // Group commit (SampleSink.sync): committed batches not yet synced, and when we last synced.
        var unsynced = false
        var lastSync = now()
        func syncCommitted() {
            do {
                try sink.sync()
            } catch {
                // Reported once, not retried (see SampleSink.sync()): no spinning on a failing disk.
                failedSyncs.add(1, ordering: .releasing)
                syncObserver.withLock { $0 }?(error.description)
            }
            unsynced = false
            lastSync = now()
        }

        while true {
            let stopping = stopRequested.load(ordering: .acquiring)
            let live = rings.withLock { $0 }
            var got = 0
            if count < cap, !live.isEmpty {
                // Round-robin start so one busy source cannot starve the others.
                start = (start + 1) % live.count
                for k in 0..<live.count where count < cap {
                    let ring = live[(start + k) % live.count]
                    let n = fill(from: ring, backlogs: &backlogs, into: batch, at: count)
                    count = dropImplausible(batch, from: count, to: count + n)
                    got += n
                }
            }
            held.store(UInt64(count + backlogs.values.reduce(0) { $0 + $1.remaining }), ordering: .releasing)
            // State values on the side channel wait at most one flush interval, like samples.
            let stateHeld = count == 0 && attachments.pendingStateCount > 0
            if count > 0 || stateHeld, firstHeld == nil { firstHeld = now() }

            let due = count == cap || ((count > 0 || stateHeld) && (stopping || firstHeld.map { $0.duration(to: now()) >= configuration.flushInterval } ?? false))
            // Extras of this batch (skipped while the side channel is empty: the strap path).
            let extras = due && !attachments.isEmpty
                ? attachments.collect(UnsafeBufferPointer(rebasing: batch[0..<count])) : SampleAttachments.Taken()
            if due && count == 0 && extras.batch.isEmpty {
                // State whose samples are still in a ring: it goes with their batch.
                firstHeld = nil
            } else if due {
                do {
                    let records = UnsafeBufferPointer(rebasing: batch[0..<count])
                    if extras.batch.isEmpty {
                        try sink.write(records, slots: slots)
                    } else {
                        try sink.write(records, slots: slots, attachments: extras.batch)
                        attachments.resolve(extras)
                    }
                    if stalled {
                        stalled = false
                        stalledBy.withLock { $0 = nil }
                        for o in stateObservers.withLock({ $0 }) { o(nil) }
                    }
                    if count > 0 {
                        let seq = batches.add(1, ordering: .acquiringAndReleasing).newValue
                        committed.add(UInt64(count), ordering: .releasing)
                        let done = CommittedBatch(records: records, slots: slots, sequence: seq)
                        for o in observers.withLock({ $0 }) { o(done) }
                    }
                    count = 0
                    firstHeld = nil
                    held.store(UInt64(backlogs.values.reduce(0) { $0 + $1.remaining }), ordering: .releasing)
                    unsynced = true
                    // Behind (a backlog, or never idle): one sync per flush interval — or per sync
                    // interval, if longer — covers many batches.
                    if lastSync.duration(to: now()) >= max(configuration.flushInterval, configuration.syncInterval) { syncCommitted() }
                } catch {
                    if error.kind == .rejected {
                        rejected.add(UInt64(count), ordering: .releasing)
                        attachments.resolve(extras, statesToo: false)
                        count = 0
                        firstHeld = nil
                        continue
                    }
                    failedWrites.add(1, ordering: .releasing)
                    if !stalled || stalledBy.withLock({ $0 }) != error.description {
                        stalled = true
                        stalledBy.withLock { $0 = error.description }
                        for o in stateObservers.withLock({ $0 }) { o(error.description) }
                    }
                    if stopping, Int64(DispatchTime.now().uptimeNanoseconds) >= stopDeadlineNanos.load(ordering: .relaxed) {
                        abandon(count: count, rings: live, backlogs: backlogs)
                        abandoned = true
                        break
                    }
                    sleep(configuration.retryInterval, unlessStoppingPast: stopping)
                }
                idleSleep = .microseconds(500)
                continue
            }

            // Retire rings whose producer closed and which are fully drained.
            let finishedRings = live.filter { $0.isFinished && (backlogs[ObjectIdentifier($0)]?.remaining ?? 0) == 0 }
            if !finishedRings.isEmpty {
                let gone = Set(finishedRings.map(ObjectIdentifier.init))
                rings.withLock { list in list.removeAll { gone.contains(ObjectIdentifier($0)) } }
                for r in finishedRings {
                    retiredPushed.add(r.pushedCount, ordering: .releasing)
                    retiredDropped.add(r.droppedCount, ordering: .releasing)
                    retiredSpilled.add(r.spilledCount, ordering: .releasing)
                    backlogs[ObjectIdentifier(r)] = nil
                }
            }

            // Caught up (nothing drained, nothing held): make what was committed durable now, or
            // once the sync interval since the last sync has passed (the SD-card economy: the WAL
            // page two commits share is written once per sync, not once per commit).
            if unsynced, got == 0, count == 0, backlogs.isEmpty,
               lastSync.duration(to: now()) >= configuration.syncInterval { syncCommitted() }

            if got == 0 {
                if stopping && count == 0 && rings.withLock({ $0.isEmpty }) { break }
                if stopping {
                    // Rings closed after `live` was read may still be finishing; close any new ones.
                    for r in rings.withLock({ $0 }) where !r.isClosed { r.close() }
                }
                Thread.sleep(forTimeInterval: Double(idleSleep.components.attoseconds) / 1e18 + Double(idleSleep.components.seconds))
                idleSleep = min(idleSleep * 2, maxIdle)
            } else {
                idleSleep = .microseconds(500)
            }
        }
        if !abandoned {
            // A clean stop: the sink closes what it keeps open (series), in a commit of its own.
            do {
                if try sink.finish() { unsynced = true }
            } catch {
                finishObserver.withLock { $0 }?(error.description)
            }
        }
        if unsynced { syncCommitted() }
        held.store(0, ordering: .releasing)
    }

    /// Moves records of one ring into the batch: its backlog first, then the ring, then (when
    /// the ring is empty) its overflow list into the backlog.
    private func fill(from ring: SampleRing, backlogs: inout [ObjectIdentifier: Backlog],
                      into batch: UnsafeMutableBufferPointer<SampleRecord>, at offset: Int) -> Int {
        var count = offset
        let id = ObjectIdentifier(ring)
        if let b = backlogs[id], b.remaining > 0 {
            let n = min(b.remaining, batch.count - count)
            b.records.withUnsafeBufferPointer { src in
                (batch.baseAddress! + count).update(from: src.baseAddress! + b.next, count: n)
            }
            b.next += n
            count += n
            if b.remaining > 0 { return count - offset }
            backlogs[id] = nil
        }
        count += ring.drain(into: UnsafeMutableBufferPointer(rebasing: batch[count...]))
        if count < batch.count, ring.ringIsEmpty {
            let spill = ring.takeSpill()
            if !spill.isEmpty {
                let b = Backlog()
                b.records = spill
                backlogs[id] = b
                let n = min(b.remaining, batch.count - count)
                spill.withUnsafeBufferPointer { src in
                    (batch.baseAddress! + count).update(from: src.baseAddress!, count: n)
                }
                b.next = n
                count += n
                if b.remaining == 0 { backlogs[id] = nil }
            }
        }
        return count - offset
    }

    private func abandon(count: Int, rings live: [SampleRing], backlogs: [ObjectIdentifier: Backlog]) {
        // What the writer held is abandoned; what is still in rings stays counted as pending.
        let lost = UInt64(count) + UInt64(backlogs.values.reduce(0) { $0 + $1.remaining })
        abandoned.store(lost, ordering: .releasing)
    }

    private func sleep(_ d: Duration, unlessStoppingPast stopping: Bool) {
        var wait = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        if stopping {
            let left = Double(stopDeadlineNanos.load(ordering: .relaxed) - Int64(DispatchTime.now().uptimeNanoseconds)) / 1e9
            wait = max(0, min(wait, left))
        }
        Thread.sleep(forTimeInterval: wait)
    }
}
