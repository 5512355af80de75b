import Foundation
import HealthModel
import Testing
@testable import HealthStore

@Suite("Statistics collections: buckets, apportioning, DST days")
struct StatisticsCollectionTests {
    @Test("a sample spanning a bucket boundary is apportioned by time overlap")
    func apportioning() throws {
        let tmp = try TempStore()
        // 120 steps from 00:50 to 01:10 UTC: 60 in each hour.
        try tmp.store.save([try sample(.stepCount, 120, from: 3000, to: 4200)])
        let buckets = try tmp.store.statisticsCollection(
            StatisticsQuery(type: .stepCount, options: .cumulativeSum, start: t(0), end: t(7200)),
            interval: .hours(1), timeZone: TimeZone(identifier: "UTC")!)
        #expect(buckets.map(\.start) == [t(0), t(3600)])
        #expect(buckets.map { $0.values.sum.map { ($0 * 1e9).rounded() / 1e9 } } == [60, 60])
    }

    @Test("buckets extend from the anchor in both directions without gaps; empty buckets are listed")
    func anchorAndGaps() throws {
        let tmp = try TempStore()
        try tmp.store.save([try sample(.stepCount, 10, from: 0, to: 60), try sample(.stepCount, 5, from: 3 * 1800, to: 3 * 1800 + 60)])
        // Anchor at 00:15, 30-minute buckets: the first bucket holding 00:00 starts at 23:45 the day before.
        let b = try tmp.store.statisticsCollection(
            StatisticsQuery(type: .stepCount, options: .cumulativeSum),
            interval: .minutes(30), anchor: t(900), timeZone: TimeZone(identifier: "UTC")!)
        #expect(b.first?.start == t(-900))
        for (x, y) in zip(b, b.dropFirst()) { #expect(x.end == y.start) }
        #expect(b.map(\.values.sum) == [10, nil, nil, 5])
    }

    @Test("an instantaneous sample on a boundary belongs to the later bucket")
    func halfOpen() throws {
        let tmp = try TempStore()
        try tmp.store.save([try sample(.stepCount, 7, from: 3600)])
        let b = try tmp.store.statisticsCollection(
            StatisticsQuery(type: .stepCount, options: .cumulativeSum, start: t(0), end: t(7200)),
            interval: .hours(1), timeZone: TimeZone(identifier: "UTC")!)
        #expect(b.map(\.values.sum) == [nil, 7])
    }

    @Test("daily buckets in Europe/Berlin: the spring-forward day is 23 h, the fall-back day 25 h",
          arguments: [("2026-03-28T23:00:00Z", 23.0), ("2026-10-24T22:00:00Z", 25.0), ("2026-06-01T22:00:00Z", 24.0)])
    func dstDay(midnightUTC: String, hours: Double) throws {
        let tmp = try TempStore()
        let start = try #require(ISO8601.date(midnightUTC))
        // One step every hour of the local day, stamped at the half hour.
        let steps = try stride(from: 0.0, to: hours, by: 1).map { h in
            try QuantitySample(type: .stepCount, quantity: Quantity(1, .count),
                               start: start.addingTimeInterval(h * 3600 + 1800), end: start.addingTimeInterval(h * 3600 + 1860),
                               source: .manual)
        }
        try tmp.store.save(steps)
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let b = try tmp.store.statisticsCollection(
            StatisticsQuery(type: .stepCount, options: .cumulativeSum, start: start, end: start.addingTimeInterval(hours * 3600)),
            interval: .days(1), timeZone: berlin)
        #expect(b.count == 1)
        let day = try #require(b.first)
        #expect(day.start == start)
        #expect(day.end!.timeIntervalSince(day.start!) == hours * 3600)
        #expect(day.values.sum == hours)
    }

    /// Days whose midnight the clocks skip (00:00 becomes 01:00), with Python's zoneinfo's
    /// instants: the day's first instant (01:00) and the next local midnight, in UTC.
    @Test("a range starting on a day whose midnight is skipped: that day from 01:00, every later day from 00:00 (they kept 01:00, counting each first hour on the day before)",
          arguments: [("America/Santiago", 1_788_667_200.0, 1_788_750_000.0), ("Africa/Cairo", 1_776_981_600, 1_777_064_400),
                      ("America/Havana", 1_772_946_000, 1_773_028_800), ("Asia/Beirut", 1_774_735_200, 1_774_818_000),
                      ("Atlantic/Azores", 1_774_746_000, 1_774_828_800)])
    func skippedMidnight(zone: String, firstInstant: Double, nextMidnight: Double) throws {
        let tmp = try TempStore()
        let tz = try #require(TimeZone(identifier: zone))
        func steps(_ n: Double, at t: Double) throws -> QuantitySample {
            try QuantitySample(type: .stepCount, quantity: Quantity(n, .count), start: Date(timeIntervalSince1970: t),
                               end: Date(timeIntervalSince1970: t + 600), source: .manual)
        }
        // 50 at noon of the skipped day, 300 in the first hour of the next day; 7 just before
        // the week's end (local midnight six days after the next), 9 just after it.
        try tmp.store.save([try steps(50, at: firstInstant + 11 * 3600), try steps(300, at: nextMidnight + 600),
                            try steps(7, at: nextMidnight + 6 * 86_400 - 1_200), try steps(9, at: nextMidnight + 6 * 86_400 + 1_200)])
        for from in [Date(timeIntervalSince1970: firstInstant), nil] {   // an explicit start, or the first sample's day
            let days = try tmp.store.statisticsCollection(StatisticsQuery(type: .stepCount, options: .cumulativeSum, start: from,
                                                                          end: Date(timeIntervalSince1970: nextMidnight + 2 * 86_400)),
                                                          interval: .days(1), timeZone: tz)
            #expect(days.prefix(3).map { $0.start!.timeIntervalSince1970 } == [firstInstant, nextMidnight, nextMidnight + 86_400], "\(zone)")
            #expect(days.prefix(2).map(\.values.sum) == [50, 300], "\(zone)")
        }
        // Weeks from the skipped day: the next week starts at local midnight seven days on.
        let weeks = try tmp.store.statisticsCollection(StatisticsQuery(type: .stepCount, options: .cumulativeSum,
                                                                       start: Date(timeIntervalSince1970: firstInstant)),
                                                       interval: .weeks(1), timeZone: tz)
        // (No zone here changes its clocks again in the following week.)
        #expect(weeks.first?.end?.timeIntervalSince1970 == nextMidnight + 6 * 86_400, "\(zone)")
        #expect(weeks.prefix(2).map(\.values.sum) == [357, 9], "\(zone)")
    }

    @Test("a month whose first midnight is skipped (Casablanca, 2008-06-01): that month from 01:00, the next from 00:00")
    func skippedMidnightOnTheFirst() throws {
        let tmp = try TempStore()
        let tz = try #require(TimeZone(identifier: "Africa/Casablanca"))
        // zoneinfo: June's first instant 2008-06-01T00:00Z (01:00 +01:00), July's midnight 2008-06-30T23:00Z.
        let (june, july) = (1_212_278_400.0, 1_214_866_800.0)
        func steps(_ n: Double, at t: Double) throws -> QuantitySample {
            try QuantitySample(type: .stepCount, quantity: Quantity(n, .count), start: Date(timeIntervalSince1970: t),
                               end: Date(timeIntervalSince1970: t + 600), source: .manual)
        }
        try tmp.store.save([try steps(5, at: june + 3600), try steps(8, at: july + 1_200)])   // July 1st, 00:20 local
        let months = try tmp.store.statisticsCollection(StatisticsQuery(type: .stepCount, options: .cumulativeSum),
                                                        interval: .months(1), timeZone: tz)
        #expect(months.prefix(2).map { $0.start!.timeIntervalSince1970 } == [june, july])
        #expect(months.prefix(2).map(\.values.sum) == [5, 8])
    }

    @Test("weekly buckets in America/New_York are 7 calendar days across the DST change")
    func week() throws {
        let tmp = try TempStore()
        let anchor = try #require(ISO8601.date("2026-11-02T05:00:00Z"))   // Monday 00:00 EST
        try tmp.store.save([try QuantitySample(type: .stepCount, quantity: Quantity(3, .count),
                                               start: anchor.addingTimeInterval(-3600), end: anchor.addingTimeInterval(-3000), source: .manual)])
        let ny = try #require(TimeZone(identifier: "America/New_York"))
        let b = try tmp.store.statisticsCollection(StatisticsQuery(type: .stepCount, options: .cumulativeSum),
                                                   interval: .weeks(1), anchor: anchor, timeZone: ny)
        let week = try #require(b.first)
        // The week before the anchor contains 2026-11-01, the fall-back day: 7 × 24 + 1 hours.
        #expect(week.end == anchor)
        #expect(week.end!.timeIntervalSince(week.start!) == (7 * 24 + 1) * 3600)
        #expect(week.values.sum == 3)
    }

    @Test("discrete buckets: time-weighted average of the part of a span inside each bucket")
    func discreteBuckets() throws {
        let tmp = try TempStore()
        // 60 bpm over 00:30–01:30 and 120 bpm over 00:45–00:46 (1 min) from the same source.
        try tmp.store.save([try sample(.heartRate, 60, from: 1800, to: 5400), try sample(.heartRate, 120, from: 2700, to: 2760)])
        let b = try tmp.store.statisticsCollection(
            StatisticsQuery(type: .heartRate, options: [.discreteAverage, .discreteMax], start: t(0), end: t(7200)),
            interval: .hours(1), timeZone: TimeZone(identifier: "UTC")!)
        // First hour: 60 weighted 1800 s, 120 weighted 60 s.
        #expect(abs(b[0].values.average! - (60 * 1800 + 120 * 60) / 1860) < 1e-9)
        #expect(b[0].values.maximum == 120 && b[1].values.maximum == 60)
        #expect(b[1].values.average == 60)
    }

    @Test("intervals parse from 30m, 1h, 1d, 1w and refuse nonsense")
    func intervals() throws {
        #expect(try StatisticsInterval(parsing: "30m") == .minutes(30))
        #expect(try StatisticsInterval(parsing: "1h") == .hours(1))
        #expect(try StatisticsInterval(parsing: "1d") == .days(1))
        #expect(try StatisticsInterval(parsing: "2w") == .weeks(2))
        #expect(throws: StoreError.self) { try StatisticsInterval(parsing: "0d") }
        #expect(throws: StoreError.self) { try StatisticsInterval(parsing: "3y") }
    }

    @Test("1M is refused as ambiguous with what to write; 1min and 1mo work; counts are bounded to 100 years")
    func intervalAmbiguityAndBounds() throws {
        #expect(try StatisticsInterval(parsing: "30min") == .minutes(30))
        #expect(try StatisticsInterval(parsing: "1mo") == .months(1))
        #expect(try StatisticsInterval(parsing: "3 months".replacingOccurrences(of: " ", with: "")) == .months(3))
        #expect(try StatisticsInterval(parsing: "1H") == .hours(1))
        do {
            _ = try StatisticsInterval(parsing: "1M")
            Issue.record("1M was accepted")
        } catch let e as StoreError {
            #expect("\(e)".contains("1min") && "\(e)".contains("1mo"), "\(e)")
        }
        #expect(throws: StoreError.self) { try StatisticsInterval(parsing: "1000000000d") }
        #expect(throws: StoreError.self) { try StatisticsInterval(parsing: "99999999999999999999h") }
        #expect(throws: StoreError.self) { try StatisticsInterval(parsing: "\u{FF11}h") }   // a full-width digit
        #expect(try StatisticsInterval(parsing: "36600d") == .days(36600))
        #expect(throws: StoreError.self) { try StatisticsInterval(parsing: "36601d") }
    }

    @Test("without an end, an instant exactly on the last bucket's edge gets its own bucket (bodyMass on three midnights)")
    func openEndInstantOnEdge() throws {
        let tmp = try TempStore()
        // 2026-11-03, -04, -05 at 00:00Z.
        try tmp.store.save([try sample(.bodyMass, 70, from: 86_400), try sample(.bodyMass, 71, from: 2 * 86_400),
                            try sample(.bodyMass, 72, from: 3 * 86_400)])
        let b = try tmp.store.statisticsCollection(
            StatisticsQuery(type: .bodyMass, options: [.mostRecent, .discreteAverage]),
            interval: .days(1), timeZone: TimeZone(identifier: "UTC")!)
        #expect(b.map(\.start) == [t(86_400), t(2 * 86_400), t(3 * 86_400)])
        #expect(b.map(\.values.mostRecent) == [70, 71, 72])
        #expect(b.map(\.values.sampleCount) == [1, 1, 1])
        // The same with --from on the first sample: the first bucket starts there, nothing is lost.
        let from = try tmp.store.statisticsCollection(
            StatisticsQuery(type: .bodyMass, options: .mostRecent, start: t(86_400)),
            interval: .days(1), timeZone: TimeZone(identifier: "UTC")!)
        #expect(from.map(\.values.mostRecent) == [70, 71, 72])
    }

    @Test("without an end, a span ending exactly on an edge adds no empty bucket after it")
    func openEndSpanOnEdge() throws {
        let tmp = try TempStore()
        try tmp.store.save([try sample(.stepCount, 60, from: 0, to: 3600)])
        let b = try tmp.store.statisticsCollection(StatisticsQuery(type: .stepCount, options: .cumulativeSum),
                                                   interval: .hours(1), timeZone: TimeZone(identifier: "UTC")!)
        #expect(b.map(\.start) == [t(0)])
        #expect(b.map(\.values.sum) == [60])
    }

    @Test("--from equal to a sample's start counts the sample; --to equal to a start does not; the first anchored bucket holds --from")
    func boundsOnSampleStarts() throws {
        let tmp = try TempStore()
        try tmp.store.save([try sample(.stepCount, 10, from: 3600), try sample(.stepCount, 20, from: 3600, to: 3660),
                            try sample(.stepCount, 5, from: 7200)])
        let utc = TimeZone(identifier: "UTC")!
        let b = try tmp.store.statisticsCollection(
            StatisticsQuery(type: .stepCount, options: .cumulativeSum, start: t(3600), end: t(7200)),
            interval: .minutes(30), anchor: t(900), timeZone: utc)
        // Anchored at 00:15: the bucket holding 01:00 is 00:45–01:15, clipped to the range.
        #expect(b.first?.start == t(2700))
        #expect(b.last?.end == t(7200 + 900))
        #expect(b.compactMap(\.values.sum).reduce(0, +) == 30)
        let whole = try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: .cumulativeSum, start: t(3600), end: t(7200)))
        #expect(whole.values.sum == 30)
    }

    @Test("an empty range has no buckets; a reversed range is an error, with or without buckets")
    func emptyAndReversedRanges() throws {
        let tmp = try TempStore()
        try tmp.store.save([try sample(.stepCount, 10, from: 3600)])
        let utc = TimeZone(identifier: "UTC")!
        #expect(try tmp.store.statisticsCollection(
            StatisticsQuery(type: .stepCount, options: .cumulativeSum, start: t(3600), end: t(3600)),
            interval: .hours(1), timeZone: utc).isEmpty)
        #expect(throws: StoreError.self) {
            try tmp.store.statisticsCollection(StatisticsQuery(type: .stepCount, options: .cumulativeSum, start: t(7200), end: t(0)),
                                               interval: .hours(1), timeZone: utc)
        }
        #expect(throws: StoreError.self) {
            try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: .cumulativeSum, start: t(7200), end: t(0)))
        }
    }

    @Test("monthly buckets follow the calendar in the zone: January 31 days, February 28, March with its DST change")
    func months() throws {
        let tmp = try TempStore()
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let jan = try #require(ISO8601.date("2025-12-31T23:00:00Z"))   // 2026-01-01 00:00 in Berlin
        try tmp.store.save([try QuantitySample(type: .stepCount, quantity: Quantity(1, .count), start: jan.addingTimeInterval(3600),
                                               end: jan.addingTimeInterval(3660), source: .manual),
                            try QuantitySample(type: .stepCount, quantity: Quantity(2, .count), start: jan.addingTimeInterval(80 * 86_400),
                                               end: jan.addingTimeInterval(80 * 86_400 + 60), source: .manual)])
        let b = try tmp.store.statisticsCollection(StatisticsQuery(type: .stepCount, options: .cumulativeSum),
                                                   interval: .months(1), timeZone: berlin)
        let hours: [Double] = b.map { $0.end!.timeIntervalSince($0.start!) / 3600 }
        let expected: [Double] = [744, 672, 743]   // 31 × 24, 28 × 24, 31 × 24 − 1 (spring forward)
        #expect(hours == expected)
        #expect(b.first?.start == jan)
        #expect(b.map(\.values.sum) == [1, nil, 2])
    }

    @Test("monthly buckets without an anchor start on the first of the month, not on the first sample's day")
    func monthsDefaultAnchor() throws {
        let tmp = try TempStore()
        let utc = try #require(TimeZone(identifier: "UTC"))
        let feb10 = try #require(ISO8601.date("2026-02-10T12:00:00Z")), mar5 = try #require(ISO8601.date("2026-03-05T12:00:00Z"))
        try tmp.store.save([try QuantitySample(type: .bodyMass, quantity: Quantity(70, .kilogram), start: feb10, end: feb10, source: .manual),
                            try QuantitySample(type: .bodyMass, quantity: Quantity(71, .kilogram), start: mar5, end: mar5, source: .manual)])
        let b = try tmp.store.statisticsCollection(StatisticsQuery(type: .bodyMass, options: .mostRecent),
                                                   interval: .months(1), timeZone: utc)
        #expect(b.map(\.start) == [ISO8601.date("2026-02-01T00:00:00Z"), ISO8601.date("2026-03-01T00:00:00Z")])
        #expect(b.map(\.values.mostRecent) == [70, 71])
    }

    @Test("an hourly collection across the fall-back night has 25 one-hour buckets for the local day")
    func hoursAcrossFallBack() throws {
        let tmp = try TempStore()
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let start = try #require(ISO8601.date("2026-10-24T22:00:00Z"))   // 2026-10-25 00:00 CEST
        try tmp.store.save([try QuantitySample(type: .stepCount, quantity: Quantity(1, .count), start: start,
                                               end: start.addingTimeInterval(25 * 3600), source: .manual)])
        let b = try tmp.store.statisticsCollection(StatisticsQuery(type: .stepCount, options: .cumulativeSum),
                                                   interval: .hours(1), timeZone: berlin)
        #expect(b.count == 25)
        #expect(b.allSatisfy { $0.end!.timeIntervalSince($0.start!) == 3600 })
    }

    @Test("statistics over stored values that overflow a Double are an error naming the type, never inf or null")
    func overflowIsAnError() throws {
        let tmp = try TempStore()
        try tmp.store.save([try sample(.stepCount, 1, from: 0, to: 60), try sample(.stepCount, 1, from: 60, to: 120)])
        // What an older HealthGate could store before values had plausible ranges.
        _ = try tmp.store.withConnection { db in try db.prepare("UPDATE samples SET value = 1.5e308", cached: false).run() }
        do {
            _ = try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: .cumulativeSum))
            Issue.record("an overflowing sum was returned")
        } catch let e as StoreError {
            #expect(e.kind == .data && "\(e)".contains("stepCount") && "\(e)".contains("overflows"), "\(e)")
        }
        #expect(throws: StoreError.self) {
            try tmp.store.statisticsCollection(StatisticsQuery(type: .stepCount, options: .cumulativeSum),
                                               interval: .hours(1), timeZone: TimeZone(identifier: "UTC")!)
        }
        // The stored samples stay readable (and so deletable).
        #expect(try tmp.store.samples(SampleQuery(type: .stepCount)).count == 2)
    }

    @Test("a day, week or month count too large for Int arithmetic does not trap the bucket walk", arguments: [
        StatisticsInterval.days(Int.max), .weeks(Int.max), .weeks(Int.max / 7 + 1), .days(Int.max / 2), .months(Int.max),
    ])
    func hugeCalendarIntervals(interval: StatisticsInterval) throws {
        // Issue #17 audit: `stats --interval 9223372036854775807d` trapped in bucketStart (k × n).
        // Whether such an interval should be accepted at all is the option rule's business; the
        // store must answer (one bucket holding everything), not crash.
        let tmp = try TempStore()
        try tmp.store.save([try sample(.stepCount, 5, from: 0, to: 60), try sample(.stepCount, 7, from: 86_400, to: 86_460)])
        let b = try tmp.store.statisticsCollection(StatisticsQuery(type: .stepCount, options: .cumulativeSum),
                                                   interval: interval, timeZone: TimeZone(identifier: "UTC")!)
        #expect(b.count == 1)
        #expect(b.first?.values.sum == 12)
    }
}
