import Foundation
import HealthGateTesting
import Testing
@testable import SerialPedometer

/// Device times (`t`, `t0`, `t1`) outside [2000-01-01, receipt + 1 day] are refused as `bad-time`
/// by the one parse function the reader, the daemon, replay and `decode pedometer` share; and the
/// counter itself never traps on a huge time (issue #17, items 6 and 9).
@Suite struct DeviceTimeRangeTests {
    /// 2026-11-23T00:00:00Z: the gateway clock in these tests.
    static let now = Date(timeIntervalSince1970: 1_795_392_000)
    static let latest = now.timeIntervalSince1970 + DeviceTimeRule.maxAhead

    private func parse(_ line: String, at: Date = now) -> Result<PedometerReading, LineRejection> {
        LineParser.parse(line, format: .auto, receivedAt: at)
    }

    @Test(arguments: [
        (#"{"steps":5,"t":946684800}"#, true),              // 2000-01-01T00:00:00Z exactly
        (#"{"steps":5,"t":946684799.999}"#, false),         // a millisecond before
        ("steps:5,t:1795478400", true),                      // receipt + 1 day exactly
        ("steps:5,t:1795478400.001", false),                 // a millisecond after
        (#"{"steps":5,"t":1e300}"#, false),
        ("steps:5,t:1e300", false),
        (#"{"steps":5,"t":0}"#, false),                      // an RTC that lost its battery
        (#"{"steps":5,"t":12.5}"#, false),                   // uptime, not Unix time
        (#"{"steps":5}"#, true),                             // no time: nothing to judge
        (#"{"steps":5,"dsteps":2,"t0":1795391000,"t1":1e300}"#, false),
        (#"{"steps":5,"dsteps":2,"t0":-1,"t1":1795391000}"#, false),
        (#"{"steps":5,"dsteps":2,"t0":1795391000,"t1":1795391060}"#, true),
    ])
    func timesAreJudgedAgainstTheRange(line: String, accepted: Bool) {
        switch parse(line) {
        case .success: #expect(accepted, "\(line) was accepted")
        case .failure(let why):
            #expect(!accepted, "\(line) was refused: \(why)")
            if !accepted { #expect(why.code == "bad-time", "\(line): \(why)") }
        }
    }

    @Test func theRefusalNamesTheFieldAndWhatToDo() throws {
        guard case .failure(let why) = parse(#"{"steps":5,"dsteps":1,"t0":1795391000,"t1":1e300}"#) else {
            Issue.record("accepted")
            return
        }
        #expect(why == .implausibleTime(field: "t1", value: 1e300))
        #expect(why.description.contains("t1") && why.description.contains("2000-01-01") && why.description.contains("set the device clock"))
    }

    @Test func theUpperBoundFollowsTheReceiptClock() {
        // The same line is plausible when it arrives later (a replayed capture keeps its receipt times).
        #expect((try? parse("steps:5,t:1795478401").get()) == nil)
        #expect((try? parse("steps:5,t:1795478401", at: Self.now.addingTimeInterval(1)).get()) != nil)
    }

    @Test func theSessionCountsARefusedLineAndStoresNothingFromIt() {
        // The issue's line: trusted device time 1e300 used to become a step sample in year 506713.
        let config = CounterRun.config(trust: true)
        var session = PedometerSession(format: .auto, counter: StepCounter(configuration: config))
        let t = Self.now.timeIntervalSince1970
        var events: [SessionEvent] = []
        events += session.feedLine(#"{"steps":100,"seq":1,"t":\#(t)}"#, receivedAt: Self.now)
        events += session.feedLine(#"{"steps":150,"seq":2,"t":1e300}"#, receivedAt: Self.now.addingTimeInterval(10))
        events += session.feedLine(#"{"steps":160,"seq":3,"t":\#(t + 20)}"#, receivedAt: Self.now.addingTimeInterval(20))
        let samples = events.compactMap { if case .sample(let s) = $0 { s } else { nil } }
        #expect(session.rejects == ["bad-time": 1])
        #expect(session.acceptedLines == 2)
        #expect(samples.map(\.steps) == [60])   // the refused line's steps arrive with the next count
        #expect(samples.allSatisfy { $0.end.timeIntervalSince1970 <= Self.latest })
    }

    @Test(arguments: [UInt64?.some(2), nil])
    func theCounterNeverTrapsOnAHugeTrustedTime(seq: UInt64?) {
        // Defence in depth: a reading that did not go through the parser (a restored state, a
        // caller of StepCounter) with t = 1e300 gives a long-gap event that can be printed, and
        // an identifier, instead of trapping in Int(_:) / Int64(_:).
        var run = CounterRun(CounterRun.config(trust: true))
        run.feed(PedometerReading(steps: 100, deviceTime: 1_795_392_000, seq: seq.map { $0 - 1 }), at: 0)
        run.feed(PedometerReading(steps: 150, deviceTime: 1e300, seq: seq), at: 10)
        #expect(run.count("long-gap") == 1)
        let text = run.events.map(\.description).joined(separator: "\n")
        #expect(text.contains("gap of 1e+300 s"))
        #expect(run.samples.count == 1 && !run.samples[0].syncIdentifier.isEmpty)
    }

    @Test func aLongGapPrintsWholeSeconds() {
        var run = CounterRun(CounterRun.config())
        run.feed(counts: [100, 105], from: 0, every: 3601)
        #expect(run.events.map(\.description).contains("gap of 3601 s: one sample, timing uncertain"))
    }

    @Test(.enabled(if: HealthGateExecutable.url != nil))
    func decodePedometerAppliesTheSameRule() throws {
        let bad = try HealthGateExecutable.run(["decode", "pedometer", #"{"steps":5,"t":1e300}"#])
        #expect(bad.status == 65)
        #expect(bad.stderr.contains("not a plausible device time"), "\(bad.stderr)")
        let t = Int(Date().timeIntervalSince1970)
        let good = try HealthGateExecutable.run(["decode", "pedometer", "steps:5,t:\(t)", "--json"])
        #expect(good.status == 0, "\(good.stderr)")
    }
}
