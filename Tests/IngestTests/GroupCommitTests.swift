import Foundation
import HealthModel
import HealthStore
import Synchronization
import Testing
@testable import Ingest
import HealthGateTesting
import Locking

/// Group commit: the writer makes committed batches durable with `SampleSink.sync()` once it has
/// caught up, once per flush interval while behind, and before it stops — and StoreSink's two
/// durability modes set the pragma they promise and can sync a real WAL.
@Suite struct GroupCommitTests {
    /// Logs writes and syncs in the order the writer made them.
    final class EventSink: SampleSink, @unchecked Sendable {
        enum Event: Equatable { case write(Int), sync }
        let events = Lock<[Event]>([])
        func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable) throws(SinkError) {
            events.withLock { $0.append(.write(records.count)) }
        }
        func sync() throws(SinkError) { events.withLock { $0.append(.sync) } }
        var log: [Event] { events.withLock { $0 } }
    }

    func record(_ i: Int) -> SampleRecord {
        SampleRecord(typeSlot: 0, value: 60, start: Double(i), end: Double(i), sourceSlot: 0, tag: UInt64(i))
    }

    @Test func aCaughtUpWriterSyncsRightAfterEachCommitWithSyncIntervalZero() async throws {
        let sink = EventSink()
        let p = try IngestPipeline(sink: sink, configuration: IngestConfiguration(batchSize: 1_000, flushInterval: .milliseconds(20),
                                                                                   syncInterval: .zero))
        let ring = try p.makeRing(name: "t")
        p.start()
        // Three separate trickles, each committed by the flush interval; the writer is idle in
        // between, so every commit is followed by a sync before the next write.
        for round in 0..<3 {
            ring.push(record(round))
            #expect(await eventually { sink.log.filter { $0 == .sync }.count == round + 1 })
        }
        _ = await offThread { p.stop() }
        let log = sink.log
        #expect(log.filter { if case .write = $0 { return true } else { return false } }.count == 3)
        for (i, e) in log.enumerated() where e != .sync {
            #expect(i + 1 < log.count && log[i + 1] == .sync, "write #\(i) was not followed by a sync: \(log)")
        }
    }

    @Test func aBacklogIsCommittedInManyBatchesAndSyncedOnce() async throws {
        let sink = EventSink()
        // A flush interval longer than the test: only catching up (at the end) syncs.
        let p = try IngestPipeline(sink: sink, configuration: IngestConfiguration(batchSize: 100, flushInterval: .seconds(60),
                                                                                   ringCapacity: 32_768))
        let ring = try p.makeRing(name: "t")
        for i in 0..<20_000 { ring.push(record(i)) }
        ring.close()
        p.start()
        let final = await offThread { p.stop() }
        #expect(final.committed == 20_000)
        let log = sink.log
        #expect(log.filter { $0 != .sync }.count == 200)
        #expect(log.filter { $0 == .sync } == [.sync], "one fsync for the whole backlog, not one per batch: \(log.count) events")
        #expect(log.last == .sync, "the last commit must be synced before stop returns")
        #expect(final.failedSyncs == 0)
    }

    /// A clock the test moves by hand: the writer's flush and sync intervals are counted against it.
    final class HandClock: @unchecked Sendable {
        let base = ContinuousClock.now
        let offset = Lock(Duration.zero)
        var now: ContinuousClock.Instant { base.advanced(by: offset.withLock { $0 }) }
        func advance(_ d: Duration) { offset.withLock { $0 += d } }
    }

    /// Logs each sync with the hand clock's time, and counts writes.
    final class ClockedSink: SampleSink, @unchecked Sendable {
        let clock: HandClock
        let syncTimes = Lock<[ContinuousClock.Instant]>([])
        let writes = Lock(0)
        init(clock: HandClock) { self.clock = clock }
        func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable) throws(SinkError) { writes.withLock { $0 += 1 } }
        func sync() throws(SinkError) { syncTimes.withLock { $0.append(clock.now) } }
    }

    /// `[ingest] sync_interval_ms`: the writer commits every flush interval but fsyncs at most once
    /// per sync interval (the SD-card economy, docs/store.md "Writes"), and still before it stops.
    /// Counted against a hand-moved clock, so the cadence is proven by counting, not by timing.
    @Test func syncsNoMoreOftenThanTheSyncInterval() async throws {
        let clock = HandClock()
        let sink = ClockedSink(clock: clock)
        let p = try IngestPipeline(sink: sink, configuration: IngestConfiguration(batchSize: 1_000, flushInterval: .milliseconds(250),
                                                                                   syncInterval: .seconds(5)),
                                   clock: { clock.now })
        let ring = try p.makeRing(name: "t")
        p.start()
        // 30 commits, one a (hand-clock) second, each made due by moving the clock past the flush
        // interval; the writer is caught up after each.
        for i in 1...30 {
            ring.push(record(i))
            // Held first (its wait starts at the clock's current time), then the clock moves on.
            #expect(await eventually { p.stats.held == 1 }, "record \(i) was not drained")
            clock.advance(.seconds(1))
            #expect(await eventually { sink.writes.withLock { $0 } == i }, "commit \(i) did not happen")
        }
        // Let the writer loop see the last clock value while idle (a sync may be due).
        try await Task.sleep(for: .milliseconds(100))
        let during = sink.syncTimes.withLock { $0 }
        _ = await offThread { p.stop() }
        let all = sink.syncTimes.withLock { $0 }
        // 30 s of commits with a 5 s interval: 5 or 6 syncs, never two closer than 5 s.
        #expect((5...6).contains(during.count), "syncs during 30 commits: \(during.count)")
        for (a, b) in zip(during, during.dropFirst()) {
            #expect(a.duration(to: b) >= .seconds(5), "two syncs \(a.duration(to: b)) apart")
        }
        #expect(during.first.map { clock.base.duration(to: $0) >= .seconds(5) } == true)
        // The stop syncs what was committed since the last one, if anything.
        #expect(all.count - during.count <= 1)
    }

    /// A sink whose disk refuses every fsync.
    final class FailingSyncSink: SampleSink, @unchecked Sendable {
        let syncs = Lock(0)
        let writes = Lock(0)
        func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable) throws(SinkError) { writes.withLock { $0 += 1 } }
        func sync() throws(SinkError) {
            syncs.withLock { $0 += 1 }
            throw SinkError(.io, "injected EIO")
        }
    }

    @Test func aFailedSyncIsReportedOnceNotSpunOn() async throws {
        let sink = FailingSyncSink()
        let reports = Lock<[String]>([])
        let p = try IngestPipeline(sink: sink, configuration: IngestConfiguration(batchSize: 1_000, flushInterval: .milliseconds(20),
                                                                                   syncInterval: .zero))
        p.onSyncFailure { reason in reports.withLock { $0.append(reason) } }
        let ring = try p.makeRing(name: "t")
        p.start()
        ring.push(record(1))
        #expect(await eventually { reports.withLock { $0.count } == 1 })
        // Idle for a while: the writer must not keep calling sync() on a failing disk (after a
        // failed fsync Linux may already have dropped the pages; a retry proves nothing).
        try await Task.sleep(for: .milliseconds(300))
        #expect(sink.syncs.withLock { $0 } == 1)
        ring.push(record(2))   // a new commit: one new attempt, reported again
        #expect(await eventually { sink.writes.withLock { $0 } == 2 && reports.withLock { $0.count } == 2 })
        let final = await offThread { p.stop() }
        #expect(final.failedSyncs == 2 && final.committed == 2)
        #expect(reports.withLock { $0 }.allSatisfy { $0.contains("injected EIO") })
    }

    @Test(arguments: [(StoreSink.Durability.group, Int64(1)), (.everyCommit, 2)])
    func storeSinkSetsThePragmaItsModePromises(mode: StoreSink.Durability, synchronous: Int64) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ingest-\(UUID().uuidString)")
        let store = try HealthStore(path: dir.appendingPathComponent("health.sqlite").path)
        let sink = try StoreSink(store: store, durability: mode)
        func pragma(_ name: String) throws -> Int64 {
            try store.withConnection { db in
                let st = try db.prepare("PRAGMA \(name)", cached: false)
                _ = try st.step()
                return st.int64(0)
            }
        }
        #expect(try pragma("synchronous") == synchronous)
        // Checkpoints every 4,000 WAL pages rather than SQLite's 1,000, and the WAL is cut back.
        #expect(try pragma("wal_autocheckpoint") == Int64(StoreSink.walAutocheckpointPages))
        #expect(try pragma("journal_size_limit") == Int64(StoreSink.journalSizeLimitBytes))
        // Syncing before any write (no WAL frames yet) and after one both succeed.
        try sink.sync()
        let slots = SlotTable()
        let hr = try slots.slot(for: .heartRate)
        let src = try slots.slot(for: Source(name: "t", identifier: "t"))
        let r = SampleRecord(typeSlot: hr, value: 61, start: 1_790_000_000, end: 1_790_000_000, sourceSlot: src)
        try withUnsafePointer(to: r) { try sink.write(UnsafeBufferPointer(start: $0, count: 1), slots: slots) }
        try sink.sync()
        #expect(try store.samples(SampleQuery(type: .heartRate)).map(\.quantity.value) == [61])
    }
}
