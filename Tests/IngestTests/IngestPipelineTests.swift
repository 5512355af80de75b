import Foundation
import HealthModel
import Synchronization
import Testing
@testable import Ingest
import HealthGateTesting
import Locking

/// The writer: batching by count and by time, observers after commit, stalls, stop.
@Suite struct IngestPipelineTests {
    func record(_ tag: UInt64, source: UInt16 = 0) -> SampleRecord {
        SampleRecord(typeSlot: 0, value: 60, start: 1, end: 1, sourceSlot: source, tag: tag)
    }

    @Test func commitsFullBatchesByCount() async throws {
        let sink = RecordingSink()
        let p = try IngestPipeline(sink: sink, configuration: IngestConfiguration(batchSize: 100, flushInterval: .seconds(30)))
        let ring = try p.makeRing(name: "a")
        for i in 0..<250 { ring.push(record(UInt64(i))) }
        p.start()
        #expect(await eventually { sink.committed.count >= 200 })
        let sizes = sink.state.withLock { $0.batchSizes }
        #expect(sizes.prefix(2) == [100, 100])
        let final = await offThread { p.stop() }
        #expect(sink.committed == Array(0..<250))
        #expect(final.committed == 250 && final.pending == 0 && final.held == 0)
    }

    @Test func commitsAPartialBatchOnceTheFlushIntervalPasses() async throws {
        let sink = RecordingSink()
        let p = try IngestPipeline(sink: sink, configuration: IngestConfiguration(batchSize: 1_000, flushInterval: .milliseconds(20)))
        p.start()
        let ring = try p.makeRing(name: "a")
        for i in 0..<5 { ring.push(record(UInt64(i))) }
        // Far fewer than batchSize: only the flush interval can commit these.
        #expect(await eventually { sink.committed.count == 5 })
        _ = await offThread { p.stop() }
    }

    @Test func observersSeeOnlyCommittedRecordsAfterTheCommit() async throws {
        let sink = RecordingSink()
        sink.state.withLock { $0.failNext = 2 }
        let p = try IngestPipeline(sink: sink, configuration: IngestConfiguration(batchSize: 10, flushInterval: .milliseconds(5), retryInterval: .milliseconds(5)))
        let seen = Lock<[UInt64]>([])
        p.addObserver { batch in
            // Everything handed to an observer is already in the store.
            let stored = Set(sink.committed)
            let tags = batch.records.map(\.tag)
            #expect(tags.allSatisfy(stored.contains))
            seen.withLock { $0 += tags }
        }
        let ring = try p.makeRing(name: "a")
        for i in 0..<35 { ring.push(record(UInt64(i))) }
        p.start()
        let final = await offThread { p.stop() }
        let seenTags = seen.withLock { $0 }
        #expect(seenTags == Array(0..<35))
        #expect(final.failedWrites == 2)
        #expect(final.committed == 35)
    }

    @Test func diskFullStallsReportsAndResumesWithoutLoss() async throws {
        let sink = RecordingSink()
        sink.state.withLock { $0.failNext = 1_000_000; $0.failKind = .diskFull }
        let p = try IngestPipeline(sink: sink, configuration: IngestConfiguration(batchSize: 50, flushInterval: .milliseconds(5), ringCapacity: 64, overflow: .spill(limit: 10_000), retryInterval: .milliseconds(2)))
        let reports = Lock<[String?]>([])
        p.onStallChange { r in reports.withLock { $0.append(r) } }
        p.start()
        let ring = try p.makeRing(name: "a")
        for i in 0..<1_000 { ring.push(record(UInt64(i))) }
        #expect(await eventually { p.stats.stalledBy != nil })
        #expect(p.stats.stalledBy?.contains("disk full") == true)
        #expect(sink.committed.isEmpty)
        // The writer holds one batch; the rest waits in the ring and its overflow list.
        let stalled = p.stats
        #expect(stalled.held + stalled.pending == 1_000 && stalled.dropped == 0)
        sink.state.withLock { $0.failNext = 0 }   // space returns
        let final = await offThread { p.stop() }
        #expect(sink.committed == Array(0..<1_000))
        #expect(final.stalledBy == nil)
        let stallReports = reports.withLock { $0 }
        #expect(stallReports.first??.contains("disk full") == true)
        #expect(stallReports.last! == nil)
    }

    @Test func stopGivesUpOnADeadStoreAndCountsWhatItAbandons() async throws {
        let sink = RecordingSink()
        sink.state.withLock { $0.failNext = .max }
        let p = try IngestPipeline(sink: sink, configuration: IngestConfiguration(batchSize: 10, flushInterval: .milliseconds(1), ringCapacity: 16, overflow: .dropNewest, retryInterval: .milliseconds(1)))
        let ring = try p.makeRing(name: "a")
        for i in 0..<40 { ring.push(record(UInt64(i))) }
        p.start()
        let final = await offThread { p.stop(timeout: .milliseconds(50)) }
        #expect(final.committed == 0)
        #expect(final.dropped == 24)
        #expect(final.abandoned + final.pending == 16)
        #expect(final.pushed == final.committed + final.dropped + final.pending + final.abandoned)
    }

    @Test func rejectsOutOfRangeSettings() async {
        #expect(throws: IngestError.self) { try IngestConfiguration(batchSize: 0).validate() }
        #expect(throws: IngestError.self) { try IngestConfiguration(flushInterval: .zero).validate() }
        #expect(throws: IngestError.self) { try IngestConfiguration(ringCapacity: 1).validate() }
    }

    @Test("an implausible value (heart rate 100000) is a counted, reported skip; the rest of its batch is written")
    func implausibleRecordsAreSkippedAndCounted() async throws {
        let sink = RecordingSink()
        let p = try IngestPipeline(sink: sink, configuration: IngestConfiguration(batchSize: 10, flushInterval: .milliseconds(5)))
        let hr = try p.slots.slot(for: .heartRate)
        let src = try p.slots.slot(for: Source(name: "Strap"))
        let reports = Lock<[String]>([])
        p.onRejection { what in reports.withLock { $0.append(what) } }
        let ring = try p.makeRing(name: "a")
        for (tag, bpm) in [(0, 60.0), (1, 100_000), (2, 500), (3, .infinity), (4, 501), (5, 72)] as [(UInt64, Double)] {
            ring.push(SampleRecord(typeSlot: hr, value: bpm, start: 1, end: 1, sourceSlot: src, tag: tag))
        }
        p.start()
        let final = await offThread { p.stop() }
        #expect(sink.committed == [0, 2, 5])
        #expect(final.rejected == 3 && final.committed == 3)
        #expect(final.pushed == final.committed + final.dropped + final.rejected + final.pending)
        let lines = reports.withLock { $0 }
        #expect(lines.count == 3)
        #expect(lines.first?.contains("heartRate") == true && lines.first?.contains("100000") == true, "\(lines)")
    }

    @Test func noNewRingsAfterStop() async throws {
        let p = try IngestPipeline(sink: RecordingSink())
        p.start()
        _ = await offThread { p.stop() }
        #expect(throws: IngestError.stopped) { try p.makeRing(name: "late") }
    }

    /// A sink that records when ``SampleSink/finish()`` is called (after which write) and can
    /// refuse it or every write.
    final class FinishingSink: SampleSink, @unchecked Sendable {
        struct State { var writes = 0; var finishedAfter: [Int] = []; var failFinish = false; var failWrites = false }
        let state = Lock(State())
        func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable) throws(SinkError) {
            let fail = state.withLock { $0.failWrites }
            if fail { throw SinkError(.io, "injected EIO on write") }
            state.withLock { $0.writes += 1 }
        }
        func finish() throws(SinkError) -> Bool {
            let fail = state.withLock { s in s.finishedAfter.append(s.writes); return s.failFinish }
            if fail { throw SinkError(.io, "injected EIO on finish") }
            return true
        }
    }

    @Test("a clean stop finishes the sink once, after its last batch; a failed finish is reported, not retried")
    func cleanStopFinishesTheSinkOnce() async throws {
        for failing in [false, true] {
            let sink = FinishingSink()
            sink.state.withLock { $0.failFinish = failing }
            let reports = Lock<[String]>([])
            let p = try IngestPipeline(sink: sink, configuration: IngestConfiguration(batchSize: 10, flushInterval: .milliseconds(5)))
            p.onFinishFailure { reason in reports.withLock { $0.append(reason) } }
            let ring = try p.makeRing(name: "a")
            for i in 0..<25 { ring.push(record(UInt64(i))) }
            p.start()
            let final = await offThread { p.stop() }
            let s = sink.state.withLock { $0 }
            #expect(final.committed == 25)
            #expect(s.finishedAfter == [s.writes] && s.writes >= 3, "finish after write \(s.finishedAfter) of \(s.writes)")
            #expect(reports.withLock { $0 } == (failing ? ["I/O error: injected EIO on finish"] : []))
        }
    }

    @Test("a writer that gives up on a failing store at the stop deadline does not finish the sink")
    func abandonedStopDoesNotFinish() async throws {
        let sink = FinishingSink()
        sink.state.withLock { $0.failWrites = true }
        let p = try IngestPipeline(sink: sink, configuration: IngestConfiguration(
            batchSize: 10, flushInterval: .milliseconds(5), retryInterval: .milliseconds(5), stopTimeout: .milliseconds(100)))
        let ring = try p.makeRing(name: "a")
        for i in 0..<5 { ring.push(record(UInt64(i))) }
        p.start()
        let final = await offThread { p.stop() }
        #expect(final.committed == 0 && final.abandoned == 5)
        #expect(sink.state.withLock { $0.finishedAfter }.isEmpty)
    }
}
