import Testing
import Foundation
@testable import Ingest
import HealthGateTesting

/// Ring semantics, after Telegraf's buffer suite: overfill, wrap, drop counting, spill order.
@Suite struct SampleRingTests {
    func record(_ i: Int) -> SampleRecord {
        SampleRecord(typeSlot: 0, value: Double(i), start: Double(i), end: Double(i), sourceSlot: 0, tag: UInt64(i))
    }

    func drainAll(_ ring: SampleRing) -> [UInt64] {
        var out: [UInt64] = []
        let buf = UnsafeMutableBufferPointer<SampleRecord>.allocate(capacity: 3)
        defer { buf.deallocate() }
        while true {
            let n = ring.drain(into: buf)
            if n == 0 {
                guard ring.ringIsEmpty else { continue }
                let spill = ring.takeSpill()
                if spill.isEmpty { break }
                out += spill.map(\.tag)
                continue
            }
            out += buf[0..<n].map(\.tag)
        }
        return out
    }

    @Test func capacityRoundsUpToPowerOfTwo() async {
        #expect(SampleRing(capacity: 5).capacity == 8)
        #expect(SampleRing(capacity: 8).capacity == 8)
        #expect(SampleRing(capacity: 0).capacity == 2)
    }

    @Test func fillsToCapacityThenDropsNewestAndCounts() async {
        let ring = SampleRing(capacity: 4, policy: .dropNewest)
        let outcomes = (0..<7).map { ring.push(record($0)) }
        #expect(outcomes == [.queued, .queued, .queued, .queued, .dropped, .dropped, .dropped])
        #expect(ring.pushedCount == 7)
        #expect(ring.droppedCount == 3)
        #expect(ring.pendingCount == 4)
        // The oldest survive (drop-newest), in order.
        #expect(drainAll(ring) == [0, 1, 2, 3])
        #expect(ring.drainedCount == 4)
    }

    @Test func wrapsAroundKeepingOrder() async {
        let ring = SampleRing(capacity: 4, policy: .dropNewest)
        var expected: [UInt64] = []
        var got: [UInt64] = []
        let buf = UnsafeMutableBufferPointer<SampleRecord>.allocate(capacity: 3)
        defer { buf.deallocate() }
        // Push 3, drain 3, repeatedly: head and tail cross the end of storage many times.
        for round in 0..<10 {
            for k in 0..<3 {
                let i = round * 3 + k
                #expect(ring.push(record(i)) == .queued)
                expected.append(UInt64(i))
            }
            let n = ring.drain(into: buf)
            got += buf[0..<n].map(\.tag)
        }
        #expect(got == expected)
        #expect(ring.droppedCount == 0)
        #expect(ring.ringIsEmpty)
    }

    @Test func spillKeepsPushOrderAcrossRingAndOverflow() async {
        let ring = SampleRing(capacity: 4, policy: .spill(limit: 100))
        let outcomes = (0..<10).map { ring.push(record($0)) }
        #expect(outcomes.prefix(4).allSatisfy { $0 == .queued })
        #expect(outcomes.dropFirst(4).allSatisfy { $0 == .spilled })
        #expect(ring.spilledCount == 6)
        #expect(ring.pendingCount == 10)
        // Partly drain the ring: later pushes must still go to the spill, not jump the queue.
        let buf = UnsafeMutableBufferPointer<SampleRecord>.allocate(capacity: 2)
        defer { buf.deallocate() }
        #expect(ring.drain(into: buf) == 2)
        var got = buf[0..<2].map(\.tag)
        #expect(ring.push(record(10)) == .spilled)
        got += drainAll(ring)
        #expect(got == Array(0...10).map(UInt64.init))
        // Spill emptied: the ring takes pushes again.
        #expect(ring.push(record(11)) == .queued)
        #expect(ring.droppedCount == 0)
    }

    @Test func spillLimitDropsNewestAndCountsEachDrop() async {
        let ring = SampleRing(capacity: 2, policy: .spill(limit: 3))
        let outcomes = (0..<8).map { ring.push(record($0)) }
        #expect(outcomes == [.queued, .queued, .spilled, .spilled, .spilled, .dropped, .dropped, .dropped])
        #expect(ring.droppedCount == 3)
        #expect(drainAll(ring) == [0, 1, 2, 3, 4])
        #expect(ring.pushedCount == ring.drainedCount + ring.droppedCount)
    }

    @Test func closedRingFinishesOnlyWhenDrained() async {
        let ring = SampleRing(capacity: 2, policy: .spill(limit: 10))
        for i in 0..<4 { ring.push(record(i)) }
        ring.close()
        #expect(!ring.isFinished)
        _ = drainAll(ring)
        #expect(ring.isFinished)
    }

    @Test func recordsAreSmallAndInlineRRIsBounded() async {
        #expect(MemoryLayout<SampleRecord>.size <= 64)
        var r = record(0)
        for t in 1...UInt16(SampleRecord.maxRR) {
            let fitted = r.appendRR(t * 100)
            #expect(fitted)
        }
        let overfilled = r.appendRR(1)
        #expect(!overfilled)
        #expect(r.rrTicks == (1...UInt16(SampleRecord.maxRR)).map { $0 * 100 })
    }

    /// A producer thread against a consumer, with a tiny ring so both the fast path and the
    /// spill path race the consumer constantly. Real threads (not tasks): a spinning consumer
    /// must not starve its producer of the cooperative pool.
    @Test func concurrentProducerAndConsumerKeepEverySampleInOrder() async {
        // The consumer spins: run it on its own thread, not on the cooperative pool.
        let results = await offThread { () -> [(Int, Int?, Bool)] in (0..<3).map { _ in Self.race() } }
        for (count, firstWrong, clean) in results {
            #expect(count == 200_000)
            #expect(firstWrong == nil, "order broken at index \(firstWrong ?? -1)")
            #expect(clean)
        }
    }

    static func race() -> (Int, Int?, Bool) {
        do {
            let ring = SampleRing(capacity: 64, policy: .spill(limit: 1_000_000))
            let total = 200_000
            let producer = Thread {
                for i in 0..<total { ring.push(SampleRecord(typeSlot: 0, value: 0, start: 0, end: 0, sourceSlot: 0, tag: UInt64(i))) }
                ring.close()
            }
            producer.start()
            var got: [UInt64] = []
            got.reserveCapacity(total)
            let buf = UnsafeMutableBufferPointer<SampleRecord>.allocate(capacity: 50)
            defer { buf.deallocate() }
            while !ring.isFinished {
                let n = ring.drain(into: buf)
                got += buf[0..<n].map(\.tag)
                if n == 0 { got += ring.takeSpill().map(\.tag) }
            }
            // Report the first place order breaks, not 200,000 numbers.
            let firstWrong = got.indices.first { got[$0] != UInt64($0) }
            return (got.count, firstWrong, ring.drainedCount == UInt64(total) && ring.droppedCount == 0)
        }
    }
}
