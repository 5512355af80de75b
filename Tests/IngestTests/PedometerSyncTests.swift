import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import SerialPedometer
import Simulators
import Testing
@testable import Gateway
@testable import Ingest

/// `run`'s pedometer path stores what `serial watch` stores: step samples with their sync
/// identifiers, and the counter state in the same transaction (the ingest side channel).
@Suite(.serialized) struct PedometerSyncTests {
    @Test func daemonStepSamplesCarrySyncIdentifiersAndTheirCounterState() async throws {
        let path = temporaryStorePath()
        let rig = try DaemonRig(path: path)
        let ped = try SimulatedPedometer()
        let source = PedometerSource(path: ped.path, id: "PED-A", name: "Desk")
        try rig.runner.start(source)
        for (seq, steps) in [(1, 100), (2, 110), (3, 125)] { ped.writeLine(pedometerLine(steps, seq: seq)) }
        #expect(await eventually { rig.steps().count == 2 && rig.counterState("PED-A")?.baseline?.count == 125 })
        let final = await offThread { rig.stop() }
        #expect(final.committed == 2 && final.dropped == 0)

        let samples = rig.steps()
        #expect(samples.map(\.quantity.value) == [10, 15])
        #expect(samples.map(\.metadata.syncIdentifier) == ["serial:PED-A:1:-:s1-s2:100-110", "serial:PED-A:1:-:s2-s3:110-125"])
        #expect(samples.allSatisfy { $0.metadata.syncVersion == 1 })
        #expect(samples.allSatisfy { $0.device?.localIdentifier == "serial:PED-A" && $0.source == PedometerSource.source })
        let state = try #require(rig.counterState("PED-A"))
        #expect(state.tally.steps == 25 && state.tally.samples == 2 && state.segment == 1)
        #expect(rig.pipeline.attachments.outstandingCount == 0, "every attachment was committed and forgotten")
    }

    /// A re-saved sample with the same sync identifier and version does not duplicate; a higher
    /// version replaces it (the rule of `HealthStore.save`); strap-style records in the same
    /// batch keep their plain fast path.
    @Test func theSideChannelAppliesTheStoresSyncRules() async throws {
        let store = try HealthStore(path: temporaryStorePath())
        let p = try IngestPipeline(sink: try StoreSink(store: store))
        let steps = try p.slots.slot(for: .stepCount), hr = try p.slots.slot(for: .heartRate)
        let src = try p.slots.slot(for: PedometerSource.source)
        let ring = try p.makeRing(name: "t")
        let record = SampleRecord(typeSlot: steps, value: 7, start: 1_790_000_000, end: 1_790_000_060, sourceSlot: src)
        func attachment(_ version: Int, state: String) -> SampleAttachment {
            SampleAttachment(metadata: Metadata(syncIdentifier: "sync-1", syncVersion: version), stateKey: "k", state: Data(state.utf8))
        }
        ring.push(record, attachment: attachment(1, state: "a"))
        ring.push(SampleRecord(typeSlot: hr, value: 70, start: 1_790_000_000, end: 1_790_000_000, sourceSlot: src, tag: 42))
        ring.push(record, attachment: attachment(1, state: "b"))
        var newer = record
        newer.value = 9
        p.start()
        #expect(await eventually { p.stats.committed == 3 })
        ring.push(newer, attachment: attachment(2, state: "c"))
        let final = await offThread { p.stop() }
        #expect(final.committed == 4)
        let stored = try store.samples(SampleQuery(type: .stepCount))
        #expect(stored.map(\.quantity.value) == [9])
        #expect(stored.first?.metadata.syncVersion == 2)
        #expect(try store.samples(SampleQuery(type: .heartRate)).count == 1)
        #expect(try store.stateString("k") == "c")
        #expect(p.attachments.outstandingCount == 0)
    }

    /// The samples and the state are one transaction: when the store refuses the state, the
    /// samples of that batch are not stored either, and nothing of it lingers in memory.
    @Test func aFailingCommitLeavesNeitherSamplesNorState() async throws {
        let store = try HealthStore(path: temporaryStorePath())
        try store.withConnection { db in
            try db.execute("CREATE TRIGGER refuse BEFORE INSERT ON state WHEN NEW.key = 'serial.counter.BAD' BEGIN SELECT RAISE(ABORT, 'injected failure'); END")
        }
        let p = try IngestPipeline(sink: try StoreSink(store: store))
        let steps = try p.slots.slot(for: .stepCount), src = try p.slots.slot(for: PedometerSource.source)
        let ring = try p.makeRing(name: "t")
        func push(_ key: String, _ v: Double) {
            ring.push(SampleRecord(typeSlot: steps, value: v, start: 1_790_000_000 + v, end: 1_790_000_100 + v, sourceSlot: src),
                      attachment: SampleAttachment(metadata: Metadata(syncIdentifier: "\(key)-\(v)", syncVersion: 1),
                                                   stateKey: "serial.counter.\(key)", state: Data("\(v)".utf8)))
        }
        push("BAD", 1); push("BAD", 2)
        p.start()
        #expect(await eventually { p.stats.rejected == 2 })
        #expect(try store.samples(SampleQuery(type: .stepCount)).isEmpty)
        #expect(try store.state("serial.counter.BAD") == nil)
        // The writer goes on: the next batch (another device) is stored with its state.
        push("GOOD", 3)
        let final = await offThread { p.stop() }
        #expect(final.committed == 1 && final.rejected == 2)
        #expect(try store.samples(SampleQuery(type: .stepCount)).map(\.quantity.value) == [3])
        #expect(try store.stateString("serial.counter.GOOD") == "3.0")
        #expect(p.attachments.outstandingCount == 0)
    }

    /// Records that spill (the writer is behind) keep their attachments and reach the store in
    /// push order, the state of the last one winning.
    @Test func spilledRecordsKeepTheirAttachments() async throws {
        let store = try HealthStore(path: temporaryStorePath())
        let p = try IngestPipeline(sink: try StoreSink(store: store),
                                   configuration: IngestConfiguration(ringCapacity: 2, overflow: .spill(limit: 10)))
        let steps = try p.slots.slot(for: .stepCount), src = try p.slots.slot(for: PedometerSource.source)
        let ring = try p.makeRing(name: "t")
        var outcomes: [PushOutcome] = []
        for v in 1...5 {
            outcomes.append(ring.push(SampleRecord(typeSlot: steps, value: Double(v), start: 1_790_000_000 + Double(v), end: 1_790_000_001 + Double(v), sourceSlot: src),
                                      attachment: SampleAttachment(metadata: Metadata(syncIdentifier: "id-\(v)", syncVersion: 1),
                                                                   stateKey: "k", state: Data("\(v)".utf8))))
        }
        #expect(outcomes == [.queued, .queued, .spilled, .spilled, .spilled])
        p.start()
        let final = await offThread { p.stop() }
        #expect(final.committed == 5 && final.spilled == 3 && final.dropped == 0)
        let stored = try store.samples(SampleQuery(type: .stepCount)).sorted { $0.startDate < $1.startDate }
        #expect(stored.compactMap(\.metadata.syncIdentifier) == (1...5).map { "id-\($0)" })
        #expect(try store.stateString("k") == "5")
        #expect(p.attachments.outstandingCount == 0)
    }

    /// A record the ring drops takes its attachment with it: it is neither leaked nor written.
    @Test func aDroppedRecordsAttachmentIsDiscarded() async throws {
        let store = try HealthStore(path: temporaryStorePath())
        let p = try IngestPipeline(sink: try StoreSink(store: store),
                                   configuration: IngestConfiguration(ringCapacity: 2, overflow: .dropNewest))
        let steps = try p.slots.slot(for: .stepCount), src = try p.slots.slot(for: PedometerSource.source)
        let ring = try p.makeRing(name: "t")
        var outcomes: [PushOutcome] = []
        for v in 1...4 {
            outcomes.append(ring.push(SampleRecord(typeSlot: steps, value: Double(v), start: 1_790_000_000, end: 1_790_000_001, sourceSlot: src),
                                      attachment: SampleAttachment(metadata: Metadata(syncIdentifier: "id-\(v)", syncVersion: 1),
                                                                   stateKey: "k", state: Data("\(v)".utf8))))
        }
        #expect(outcomes == [.queued, .queued, .dropped, .dropped])
        #expect(p.attachments.outstandingCount == 2)
        p.start()
        let final = await offThread { p.stop() }
        #expect(final.committed == 2 && final.dropped == 2)
        #expect(try store.samples(SampleQuery(type: .stepCount)).compactMap(\.metadata.syncIdentifier).sorted() == ["id-1", "id-2"])
        #expect(try store.stateString("k") == "2")
        #expect(p.attachments.outstandingCount == 0)
    }
}
