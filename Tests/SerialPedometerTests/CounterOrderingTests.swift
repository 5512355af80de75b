import Foundation
import Testing
@testable import SerialPedometer

/// Duplicates, reordering and lost lines (seq gaps).
@Suite struct CounterOrderingTests {
    @Test func duplicateSeqIsDroppedAndCounted() {
        var run = CounterRun(CounterRun.config())
        run.feed(PedometerReading(steps: 10, seq: 1), at: 0)
        run.feed(PedometerReading(steps: 15, seq: 2), at: 1)
        run.feed(PedometerReading(steps: 15, seq: 2), at: 2)
        run.feed(PedometerReading(steps: 18, seq: 3), at: 3)
        #expect(run.samples.map(\.steps) == [5, 3])
        #expect(run.count("duplicate") == 1)
        #expect(run.counter.state.tally.duplicates == 1)
    }

    @Test func lateLineBySeqIsDroppedWithoutLosingSteps() {
        var run = CounterRun(CounterRun.config())
        // True order: seq 1..5 = 10, 12, 15, 19, 20. Seq 3 arrives after seq 4.
        for (seq, c, t) in [(1, 10, 0.0), (2, 12, 1), (4, 19, 2), (3, 15, 3), (5, 20, 4)] as [(UInt64, UInt64, Double)] {
            run.feed(PedometerReading(steps: c, seq: seq), at: t)
        }
        #expect(run.total == 10)
        #expect(run.count("out-of-order") == 1)
        #expect(run.count("reset") == 0)
        #expect(run.events.contains(.seqGap(missing: 1)))
    }

    @Test func lateLineByDeviceTimeIsDropped() {
        var run = CounterRun(CounterRun.config(trust: false))
        for (t, c) in [(100.0, 10), (101, 12), (103, 17), (102, 14), (104, 18)] as [(Double, UInt64)] {
            run.feed(PedometerReading(steps: c, deviceTime: t), at: t - 50)
        }
        #expect(run.total == 8)
        #expect(run.count("out-of-order") == 1)
        #expect(run.count("reset") == 0)
    }

    @Test func sameDeviceTimeAndCountIsADuplicate() {
        var run = CounterRun(CounterRun.config())
        run.feed(PedometerReading(steps: 3, deviceTime: 7), at: 0)
        run.feed(PedometerReading(steps: 5, deviceTime: 8), at: 1)
        run.feed(PedometerReading(steps: 5, deviceTime: 8), at: 2)
        #expect(run.count("duplicate") == 1)
        #expect(run.total == 2)
    }

    @Test func seqGapIsCountedAndTheStepsStillArrive() {
        var run = CounterRun(CounterRun.config())
        run.feed(PedometerReading(steps: 100, seq: 10), at: 0)
        run.feed(PedometerReading(steps: 130, seq: 17), at: 10)
        #expect(run.events.contains(.seqGap(missing: 6)))
        #expect(run.counter.state.tally.missingLines == 6)
        #expect(run.total == 30)
    }

    @Test func bareIntegerRepeatsAreZeroDeltas() {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [7, 7, 7, 9, 9], from: 0)
        #expect(run.samples.map(\.steps) == [2])
    }
}
