import Foundation
import HealthModel
import Testing
@testable import SerialPedometer

/// Baseline, increments, zero deltas and interval timestamps.
@Suite struct CounterBasicsTests {
    @Test func firstReadingOnlySetsTheBaseline() {
        var run = CounterRun(CounterRun.config())
        let out = run.feed(PedometerReading(steps: 5000), at: 100)
        #expect(out.samples.isEmpty)
        #expect(out.events == [.baseline(.first, count: 5000)])
    }

    @Test func eachIncreaseIsOneSampleOverTheInterval() {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [10, 14, 14, 20, 21], from: 1000, every: 2)
        #expect(run.samples.map(\.steps) == [4, 6, 1])
        #expect(run.total == 11)
        // Each sample spans from the previous reading to this one; the zero delta moved the start on.
        #expect(run.samples.map { $0.start.timeIntervalSince1970 } == [1000, 1004, 1006])
        #expect(run.samples.map { $0.end.timeIntervalSince1970 } == [1002, 1006, 1008])
        #expect(run.samples.allSatisfy { $0.start <= $0.end && !$0.timingUncertain })
    }

    @Test func receiptTimeIsUsedUnlessDeviceTimeIsTrusted() {
        var ignore = CounterRun(CounterRun.config(trust: false))
        var trust = CounterRun(CounterRun.config(trust: true))
        for run in [0, 1] {
            for (i, c) in [UInt64(0), 7].enumerated() {
                let r = PedometerReading(steps: c, deviceTime: 1_700_000_000 + Double(i) * 5)
                if run == 0 { ignore.feed(r, at: 50 + Double(i)) } else { trust.feed(r, at: 50 + Double(i)) }
            }
        }
        #expect(ignore.samples.first?.start.timeIntervalSince1970 == 50)
        #expect(ignore.samples.first?.end.timeIntervalSince1970 == 51)
        #expect(trust.samples.first?.start.timeIntervalSince1970 == 1_700_000_000)
        #expect(trust.samples.first?.end.timeIntervalSince1970 == 1_700_000_005)
    }

    @Test func readingWithoutStepsChangesNothing() {
        var run = CounterRun(CounterRun.config())
        run.feed(PedometerReading(steps: 3), at: 1)
        let before = run.counter.state
        #expect(run.feed(PedometerReading(seq: 4), at: 2) == CounterOutput())
        #expect(run.counter.state == before)
    }

    @Test func syncIdentifiersAreUniqueAndDeterministic() {
        func ids() -> [String] {
            var run = CounterRun(CounterRun.config())
            run.feed(counts: [0, 3, 8, 2, 9], from: 10, every: 3, seqFrom: 1)
            return run.samples.map(\.syncIdentifier)
        }
        let a = ids(), b = ids()
        #expect(a == b)
        #expect(Set(a).count == a.count)
        #expect(a.allSatisfy { $0.hasPrefix("serial:PED1:") })
    }

    @Test func configurationRejectsUnknownWidths() {
        #expect(throws: SerialConfigError.badCounterBits(20)) { try CounterConfiguration(deviceID: "x", counterBits: 20) }
    }

    @Test func samplesBecomeStepCountSamplesWithSyncMetadata() throws {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [1, 6], from: 0)
        let s = try run.samples[0].quantitySample(source: .init(name: "HealthGate serial"), device: nil)
        #expect(s.type == .stepCount)
        #expect(s.quantity.value == 5)
        #expect(s.metadata.syncIdentifier == run.samples[0].syncIdentifier)
        #expect(s.metadata.syncVersion == 1)
    }
}
