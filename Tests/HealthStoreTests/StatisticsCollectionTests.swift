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
}
