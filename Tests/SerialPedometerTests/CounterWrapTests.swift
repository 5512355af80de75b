import Foundation
import Testing
@testable import SerialPedometer

/// Counter wrap at 16, 24 and 32 bits, and what a decrease is when the width is unknown.
@Suite struct CounterWrapTests {
    @Test(arguments: [16, 24, 32])
    func wrapAtEachWidthCountsExactly(_ bits: Int) {
        let top = (UInt64(1) << UInt64(bits))
        var run = CounterRun(CounterRun.config(bits: bits))
        // 3 steps to the top, through zero, 4 more: 2^b-3 → 2^b-1 → 1 → 5.
        run.feed(counts: [top - 3, top - 1, 1, 5], from: 0, every: 1)
        #expect(run.samples.map(\.steps) == [2, 2, 4])
        #expect(run.total == 8)
        #expect(run.events.contains(.wrap(bits: bits)))
        #expect(run.count("reset") == 0)
    }

    @Test func withoutAWidthADecreaseIsAReset() {
        var run = CounterRun(CounterRun.config(bits: nil))
        run.feed(counts: [65533, 65535, 1, 5], from: 0)
        // Unknown width: 1 is the count since a reset, not 2 steps past a wrap.
        #expect(run.samples.map(\.steps) == [2, 1, 4])
        #expect(run.events.contains(.reset(certain: false)))
    }

    @Test func aDecreaseFarFromTheTopIsAResetEvenWithAWidth() {
        var run = CounterRun(CounterRun.config(bits: 16))
        run.feed(counts: [30000, 30010, 3], from: 0)
        run.finish()  // the stream ends on the decrease: it is settled as a reset
        #expect(run.samples.map(\.steps) == [10, 3])
        #expect(run.count("wrap") == 0)
        #expect(run.events.contains(.reset(certain: false)))
    }

    @Test func valuesThatDoNotFitTheWidthAreNeverAWrap() {
        var run = CounterRun(CounterRun.config(bits: 16))
        run.feed(counts: [70000, 70002, 2], from: 0)
        run.finish()
        #expect(run.count("wrap") == 0)
        #expect(run.samples.map(\.steps) == [2, 2])
    }

    @Test func anImplausibleWrapIsTreatedAsAReset() {
        // 16-bit counter near the top, then a small value one second later: wrapping would mean
        // 40,000 steps in a second, so it is a reset (the 10 steps since it are stored).
        var run = CounterRun(CounterRun.config(bits: 16))
        run.feed(counts: [25536 + 24000, 25536 + 24001], from: 0)
        run.feed(PedometerReading(steps: 10), at: 2)
        run.finish()
        #expect(run.count("wrap") == 0)
        #expect(run.samples.last?.steps == 10)
    }
}
