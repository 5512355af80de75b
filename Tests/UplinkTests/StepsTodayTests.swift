import ChildProcess
import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
@testable import MQTTUplink
import Testing

/// `steps_today`'s count (``StepsToday``): the store's count at a day's first sample, then each
/// committed sample, with samples sharing an end time (a burst of lines read at once, as at a
/// daemon's stop) each counted once.
@Suite struct StepsTodayTests {
    /// Feeds (value, end) samples of day 1 through the count; `store` answers the first sample.
    func count(_ samples: [(Double, Double)], store: @escaping (Double) -> Double?) -> StepsToday? {
        var c: StepsToday?
        for (v, e) in samples { c = StepsToday.after(c, value: v, end: e, day: 1, storeBefore: store) }
        return c
    }

    @Test("samples ending at the same time are each counted (a CI run published 7 of 10: three ended together)")
    func tiesAreCounted() {
        let samples: [(Double, Double)] = [(2, 10), (2, 11), (2, 12), (1, 13), (1, 13), (2, 13)]
        #expect(count(samples) { _ in 0 }?.total == 10)
    }

    @Test("the first sample seen starts from the store's samples ending before it; later ones with its end time are added")
    func firstSightExcludesItsOwnEndTime() {
        // The store holds 6 steps ending before 13 and, read late, the ties at 13 too: those
        // are not in its count (ending before 13 only), and are added as they arrive.
        let c = count([(1, 13), (1, 13), (2, 13), (3, 14)]) { before in before == 13 ? 6 : nil }
        #expect(c == StepsToday(day: 1, total: 13, through: 14))
    }

    @Test("the store unreadable: nothing until a sample can read it, which then counts the earlier ones from the store")
    func unreadableStoreAsksAgain() {
        var c = StepsToday.after(nil, value: 2, end: 10, day: 1) { _ in nil }
        #expect(c == nil)
        c = StepsToday.after(c, value: 3, end: 11, day: 1) { before in before == 11 ? 2 : nil }
        #expect(c?.total == 5 && c?.through == 11)
    }

    @Test("a new local day starts from the store again; a sample ending before the count's end (clock stepped back) is not added twice")
    func newDayAndClockBack() {
        var c = StepsToday.after(nil, value: 5, end: 100, day: 1) { _ in 0 }
        c = StepsToday.after(c, value: 4, end: 90, day: 1) { _ in Issue.record("asked the store mid-day"); return 0 }
        #expect(c?.total == 5)
        c = StepsToday.after(c, value: 7, end: 200, day: 2) { before in before == 200 ? 1 : nil }
        #expect(c == StepsToday(day: 2, total: 8, through: 200))
    }

    @Test("local midnight starts a new count at zero, with no sample; the day's first sample ending at midnight counts to the new day")
    func midnightRollsOver() {
        var c = StepsToday.after(nil, value: 5, end: 86_000, day: 0) { _ in 0 }
        #expect(c?.rolledOver(to: 0, midnight: 0) == nil, "the same day does not roll over")
        c = c?.rolledOver(to: 1, midnight: 86_400)
        #expect(c == StepsToday(day: 1, total: 0, through: 86_400))
        #expect(c?.rolledOver(to: 1, midnight: 86_400) == nil)
        c = StepsToday.after(c, value: 3, end: 86_400, day: 1) { _ in Issue.record("asked the store after a rollover"); return 0 }
        #expect(c == StepsToday(day: 1, total: 3, through: 86_400))
    }

    @Test("a sample of a day before the count's (late, or the clock stepped back over midnight) leaves the count as it is")
    func earlierDayIsNotToday() {
        var c = StepsToday.after(nil, value: 4, end: 86_500, day: 1) { _ in 2 }
        c = StepsToday.after(c, value: 9, end: 86_300, day: 0) { _ in Issue.record("asked the store for an earlier day"); return 100 }
        #expect(c == StepsToday(day: 1, total: 6, through: 86_500))
    }
}

/// `steps_today` over a real local midnight: `healthgate run` in a time zone whose midnight
/// comes about a minute after the test starts, with a real broker and subscriber.
@Suite struct StepsTodayMidnightTests {
    /// A fixed-offset zone (`GMT+HH:MM`, which Foundation reads from `TZ`) whose next midnight
    /// is 45–105 s from `now`, and that midnight.
    static func zoneWithMidnightSoon(_ now: Date = Date()) -> (tz: String, midnight: Date) {
        let s = Int(now.timeIntervalSince1970.rounded(.down)) % 86_400
        let x = (86_400 - (s + 45) % 86_400) % 86_400
        var offset = x - x % 60
        if offset > 43_200 { offset -= 86_400 }
        let a = abs(offset)
        let tz = String(format: "GMT%@%02d:%02d", offset < 0 ? "-" : "+", a / 3600, a % 3600 / 60)
        let local = now.timeIntervalSince1970 + Double(offset)
        let midnight = Date(timeIntervalSince1970: ((local / 86_400).rounded(.down) + 1) * 86_400 - Double(offset))
        return (tz, midnight)
    }

    @Test("a pedometer idle over midnight: steps_today goes to 0 at midnight, retained (it kept the day before's total until the next step)")
    func idleOverMidnight() async throws {
        try await offThread { try Self.idleOverMidnightBody() }
    }

    static func idleOverMidnightBody() throws {
        let (tz, midnight) = zoneWithMidnightSoon()
        #expect(midnight.timeIntervalSinceNow > 40 && midnight.timeIntervalSinceNow < 106, "\(tz): midnight in \(midnight.timeIntervalSinceNow) s")
        let broker = try ScratchMosquitto()
        let dir = try MQTTTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let sub = try broker.subscribe(["healthgate/+/+/steps_today"])
        usleep(300_000)
        let (sim, run) = try MQTTTests.simulateAndRun(broker, dir: dir, db: dir + "/h.sqlite", straps: 1, runEnvironment: ["TZ": tz])
        defer { sim.kill(); run.kill() }
        // Steps counted before midnight, then the pedometer goes away: nothing after midnight.
        let counted = sub.wait(seconds: midnight.timeIntervalSinceNow - 10) { m in m.contains { Int($0.payload) ?? 0 > 0 } }
        try #require(counted, "no steps_today above 0 published 10 s before midnight: \((try? String(contentsOfFile: dir + "/run.log", encoding: .utf8)) ?? "")")
        sim.signal(SIGTERM)
        _ = try sim.wait(timeout: 30)
        #expect(midnight.timeIntervalSinceNow > 3, "the pedometer's last samples were committed before midnight")
        let wait = midnight.timeIntervalSinceNow + 3
        if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
        let topic = try #require(sub.messages.first?.topic)
        let published = sub.messages.map(\.payload)
        #expect(published.last == "0", "\(topic) after midnight: \(published.suffix(3))")
        let before = try #require(published.dropLast().last.flatMap { Int($0) })
        #expect(try MQTTTests.retained(broker, [topic]).first?.payload == "0")
        run.signal(SIGTERM)
        #expect(try run.wait(timeout: 60) == 0)
        try sub.finish()
        // The store agrees: the day before's steps are what was published before midnight, none since.
        let steps = try HealthStore(path: dir + "/h.sqlite", mode: .readOnly).samples(SampleQuery(type: .stepCount))
        let since = steps.filter { $0.endDate >= midnight }.reduce(0) { $0 + $1.quantity.value }
        let dayBefore = steps.filter { $0.endDate < midnight && $0.endDate >= midnight.addingTimeInterval(-86_400) }
        #expect(since == 0 && Int(dayBefore.reduce(0) { $0 + $1.quantity.value }) == before, "published \(before)")
    }
}
