import Foundation
import Testing
@testable import SerialPedometer

/// The rate cap (5 steps/s by default), long gaps and clock jumps.
@Suite struct CounterPlausibilityTests {
    @Test func aHugeJumpIsRejectedAndReBaselined() {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [4065, 4070], from: 0, every: 60)
        run.feed(PedometerReading(steps: 1_000_000), at: 180)   // +995,930 in 60 s
        run.feed(PedometerReading(steps: 1_000_030), at: 240)
        #expect(run.samples.map(\.steps) == [5, 30])
        #expect(run.count("implausible") == 1)
    }

    @Test func twoLinesInOneReadAreNotABurst() {
        // Lines 12 steps apart that arrive in the same read (the same receipt time) are judged
        // over the minimum window (10 s × 5 steps/s), not over zero seconds.
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [100], from: 0)
        run.feed(PedometerReading(steps: 112), at: 5)
        run.feed(PedometerReading(steps: 124), at: 5)
        #expect(run.samples.map(\.steps) == [12, 12])
        #expect(run.count("implausible") == 0)
    }

    @Test func deviceTimeJudgesTheRateWhenTrusted() {
        // Readings 60 device-seconds apart that arrive together: 200 steps in 60 s is plausible.
        var run = CounterRun(CounterRun.config(trust: true))
        run.feed(PedometerReading(steps: 0, deviceTime: 1000), at: 5)
        run.feed(PedometerReading(steps: 200, deviceTime: 1060), at: 5)
        #expect(run.samples.map(\.steps) == [200])
        // But 200 steps in 2 device-seconds is not, even if they arrived 5 minutes apart.
        var fast = CounterRun(CounterRun.config(trust: true))
        fast.feed(PedometerReading(steps: 0, deviceTime: 1000), at: 0)
        fast.feed(PedometerReading(steps: 200, deviceTime: 1002), at: 300)
        fast.finish()
        #expect(fast.samples.isEmpty)
        #expect(fast.count("implausible") == 1)
    }

    @Test func aCorruptLowNumberIsAGlitchNotAReset() {
        // "steps:12" cut from "steps:1234", or a flipped digit: held, then the next reading
        // continues from 1230, so it was a glitch and the count stays exact.
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [1220, 1230, 12, 1240, 1245], from: 0)
        #expect(run.total == 25)
        #expect(run.count("glitch") == 1)
        #expect(run.count("reset") == 0)
    }

    @Test func aCorruptHighNumberIsAGlitchAndNoStepsAreLost() {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [1220, 1230, 99_999, 1240, 1245], from: 0)
        #expect(run.total == 25)
        #expect(run.count("glitch") == 1)
        #expect(run.count("implausible") == 0)
    }

    @Test func aHeldDecreaseThatTheNextReadingContinuesIsAReset() {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [1220, 1230, 4, 9], from: 0)
        #expect(run.samples.map(\.steps) == [10, 4, 5])
        #expect(run.events.contains(.reset(certain: false)))
        #expect(run.count("glitch") == 0)
    }

    @Test func aHeldReadingSurvivesARestartInTheState() throws {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [1220, 1230, 4], from: 0)
        let saved = try JSONEncoder().encode(run.counter.state)
        var restarted = CounterRun(CounterRun.config(), state: try JSONDecoder().decode(CounterState.self, from: saved))
        restarted.feed(PedometerReading(steps: 9), at: 3)
        #expect((run.samples + restarted.samples).map(\.steps) == [10, 4, 5])
    }

    @Test func longGapIsOneFlaggedSample() {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [10, 20], from: 0)
        run.feed(PedometerReading(steps: 3020), at: 1 + 2 * 3600)
        #expect(run.samples.map(\.steps) == [10, 3000])
        #expect(run.samples.map(\.timingUncertain) == [false, true])
        #expect(run.count("long-gap") == 1)
    }

    @Test func receiptClockGoingBackKeepsStartBeforeEnd() {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [10], from: 1000)
        run.feed(PedometerReading(steps: 14), at: 900)
        #expect(run.samples.count == 1)
        #expect(run.samples[0].steps == 4)
        #expect(run.samples[0].start == run.samples[0].end)
        #expect(run.samples[0].timingUncertain)
        #expect(run.count("clock-went-back") == 1)
    }

    @Test func deltaReadingsAreStoredAsTheyAre() {
        var run = CounterRun(CounterRun.config())
        run.feed(PedometerReading(deltaSteps: 4), at: 10)
        run.feed(PedometerReading(deltaSteps: 0), at: 12)
        run.feed(PedometerReading(deltaSteps: 6), at: 14)
        #expect(run.samples.map(\.steps) == [4, 6])
        #expect(run.samples[1].start.timeIntervalSince1970 == 12)
        #expect(run.samples.allSatisfy { $0.start <= $0.end })
    }
}
