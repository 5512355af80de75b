import Foundation
import Testing
@testable import SerialPedometer

/// Counter resets: certain when `boot` changed, inferred otherwise.
@Suite struct CounterResetTests {
    @Test func bootChangeIsACertainResetEvenWhenTheCountRose() {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [100, 110], from: 0, seqFrom: 50, boot: "A")
        // Power cycle: new boot id, seq restarts, and 120 steps since power-up already counted.
        run.feed(counts: [120, 125], from: 30, seqFrom: 0, boot: "B")
        #expect(run.samples.map(\.steps) == [10, 120, 5])
        #expect(run.events.contains(.reset(certain: true)))
        #expect(run.count("out-of-order") == 0)
    }

    @Test func aLineFromAnEarlierBootIsStaleNotAnotherReset() {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [100, 110], from: 0, seqFrom: 50, boot: "A")
        run.feed(counts: [5, 9], from: 30, seqFrom: 0, boot: "B")
        run.feed(PedometerReading(steps: 111, seq: 52, boot: "A"), at: 40)  // a resend from boot A
        run.feed(PedometerReading(steps: 12, seq: 2, boot: "B"), at: 41)
        #expect(run.samples.map(\.steps) == [10, 5, 4, 3])
        #expect(run.count("out-of-order") == 1)
        #expect(run.count("reset") == 1)
    }

    @Test func decreaseWithoutBootIsAnInferredReset() {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [500, 510, 4, 9], from: 0)
        #expect(run.samples.map(\.steps) == [10, 4, 5])
        #expect(run.events.filter { $0 == .reset(certain: false) }.count == 1)
    }

    @Test func resetToZeroEmitsNothingAndTakesTheNewBaseline() {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [500, 0, 6], from: 0)
        #expect(run.samples.map(\.steps) == [6])
        #expect(run.count("reset") == 1)
    }

    @Test func seqRestartWithoutBootIsAReset() {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [40, 50], from: 0, seqFrom: 900)
        // Firmware restarted: seq far back (beyond the reorder window), count 60 is since reset.
        run.feed(counts: [60, 64], from: 30, seqFrom: 0)
        #expect(run.samples.map(\.steps) == [10, 60, 4])
        #expect(run.events.contains(.reset(certain: false)))
    }

    @Test func seqBackWithinTheWindowButCountHigherIsARestart() {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [10, 12], from: 0, seqFrom: 5)
        // seq 6 → 1 is within the reorder window, but a late line cannot carry a higher count.
        run.feed(counts: [40, 41], from: 20, seqFrom: 1)
        #expect(run.samples.map(\.steps) == [2, 40, 1])
        #expect(run.count("out-of-order") == 0)
    }

    @Test func resetAfterALongSpanIsOneFlaggedSample() {
        var run = CounterRun(CounterRun.config())
        run.feed(PedometerReading(steps: 9000, boot: "A"), at: 0)
        run.feed(PedometerReading(steps: 4000, boot: "B"), at: 5 * 3600)
        #expect(run.samples.count == 1)
        #expect(run.samples[0].steps == 4000)
        #expect(run.samples[0].timingUncertain)
        #expect(run.samples[0].start.timeIntervalSince1970 == 0)
    }

    @Test func resetSamplesGetFreshSyncIdentifiers() {
        var run = CounterRun(CounterRun.config())
        // The same seq/count pattern twice, with a reset between (no boot id): ids never repeat.
        run.feed(counts: [0, 5, 10], from: 0, seqFrom: 100)
        run.feed(counts: [0, 5, 10], from: 10, seqFrom: 50)
        run.feed(counts: [0, 5, 10], from: 20, seqFrom: 0)
        let ids = run.samples.map(\.syncIdentifier)
        #expect(run.total == 30)
        #expect(Set(ids).count == ids.count)
    }
}
