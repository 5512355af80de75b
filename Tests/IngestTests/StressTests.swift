import Foundation
import Synchronization
import Testing
@testable import Ingest
import HealthGateTesting
import Locking

/// Many producers against a slow, stalling, sometimes failing store: every pushed sample is
/// committed exactly once or counted as dropped (and the producer was told), never both, never
/// neither.
@Suite struct StressTests {
    @Test(arguments: [OverflowPolicy.spill(limit: 2_000), .dropNewest])
    func everySampleIsStoredOnceOrCountedAsDropped(policy: OverflowPolicy) async throws {
        let sink = RecordingSink()
        sink.state.withLock { $0.maxStallMicros = 3_000; $0.failEvery = 7; $0.failKind = .busy }
        let p = try IngestPipeline(sink: sink, configuration: IngestConfiguration(
            batchSize: 256, flushInterval: .milliseconds(2), ringCapacity: 128, overflow: policy,
            retryInterval: .milliseconds(1)))
        p.start()
        let producers = 8
        let perProducer = 20_000
        let dropped = TagSet()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for k in 0..<producers {
                let ring = try p.makeRing(name: "p\(k)")
                group.addTask {
                    var mine: [UInt64] = []
                    for i in 0..<perProducer {
                        let tag = UInt64(k) << 32 | UInt64(i)
                        let r = SampleRecord(typeSlot: 0, value: Double(i), start: 0, end: 0, sourceSlot: UInt16(k), tag: tag)
                        if ring.push(r) == .dropped { mine.append(tag) }
                        if i % 1_000 == 0 { await Task.yield() }
                    }
                    ring.close()
                    dropped.add(mine)
                }
            }
            try await group.waitForAll()
        }
        let final = await offThread { p.stop(timeout: .seconds(60)) }
        print("stress \(policy): \(final)")
        let committed = sink.committed
        let committedSet = Set(committed)
        let droppedSet = dropped.tags
        let all = Set((0..<producers).flatMap { k in (0..<perProducer).map { UInt64(k) << 32 | UInt64($0) } })

        #expect(committed.count == committedSet.count, "a sample was committed twice")
        #expect(committedSet.isDisjoint(with: droppedSet), "a sample was both committed and dropped")
        #expect(committedSet.union(droppedSet) == all, "a sample was neither committed nor dropped")
        #expect(final.pushed == UInt64(all.count))
        #expect(final.committed == UInt64(committedSet.count))
        #expect(final.dropped == UInt64(droppedSet.count))
        #expect(final.pending == 0 && final.held == 0 && final.abandoned == 0)
        // Per producer, the store saw samples in push order.
        for k in 0..<producers {
            let mine = committed.filter { $0 >> 32 == UInt64(k) }
            #expect(mine == mine.sorted())
        }
    }
}

/// Tags several producer tasks report, collected under a lock.
final class TagSet: Sendable {
    private let storage = Lock<Set<UInt64>>([])
    func add(_ tags: [UInt64]) { storage.withLock { $0.formUnion(tags) } }
    var tags: Set<UInt64> { storage.withLock { $0 } }
}
