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
}
