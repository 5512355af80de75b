import Foundation
import HealthGateTesting
import HealthModel
import Testing
@testable import HealthStore

/// The streaming engine (with and without rollups) against the engine it replaced, kept as the
/// oracle (`StatisticsPath.loadAll`): random samples from three overlapping sources, instants and
/// spans with edges on bucket and slot boundaries, DST days in several time zones, bounded and
/// open ranges, every option, `separateBySource`, and deletes (stale rollups).
@Suite("Streaming statistics equal the load-everything engine on random data")
struct StreamingStatisticsTests {
    /// A DST day in each zone (local midnight, UTC), and the zone. Lord Howe shifts by 30 min,
    /// Kathmandu is +05:45, Adelaide +09:30/+10:30.
    static let zones: [(String, String)] = [
        ("Europe/Berlin", "2026-03-28T23:00:00Z"), ("America/New_York", "2026-11-01T04:00:00Z"),
        ("Australia/Lord_Howe", "2026-04-04T13:00:00Z"), ("Asia/Kathmandu", "2026-11-01T18:15:00Z"),
        ("Australia/Adelaide", "2026-10-03T14:30:00Z"), ("UTC", "2026-11-02T00:00:00Z"),
    ]

    static let types: [(QuantityType, StatisticsOptions, ClosedRange<Int>)] = [
        (.stepCount, [.cumulativeSum, .mostRecent, .separateBySource], 0...400),
        (.heartRate, [.discreteAverage, .discreteMin, .discreteMax, .mostRecent, .separateBySource], 40...180),
        (.restingHeartRate, [.discreteAverage, .discreteMin, .discreteMax, .mostRecent, .separateBySource], 40...90),
    ]

    /// Random samples around `base`: times on minute, quarter-hour and hour edges or anywhere,
    /// spans of seconds to hours, some instants, some duplicates of another source's span.
    static func randomSamples(_ rng: inout SplitMix64, type: QuantityType, values: ClosedRange<Int>, base: Date,
                              sources: [Source], count: Int) throws -> [QuantitySample] {
        var out: [QuantitySample] = []
        var spans: [(Double, Double)] = []
        for _ in 0..<count {
            let which = Int.random(in: 0..<sources.count, using: &rng)
            let source = sources[which]
            var start: Double
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: start = Double(Int.random(in: -4...100, using: &rng)) * 900        // slot edges
            case 1: start = Double(Int.random(in: -1...25, using: &rng)) * 3600       // hour edges
            case 2: start = Double(Int.random(in: -60...1500, using: &rng)) * 60      // minutes
            default: start = Double.random(in: -3600...90_000, using: &rng)
            }
            // Half the samples keep to their source's own eight hours, so some slots meet no other
            // source (answered from rollups) and others do (decoded).
            if Bool.random(using: &rng) { start = Double(which) * 28_800 + abs(start).truncatingRemainder(dividingBy: 25_200) }
            var end: Double
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: end = start                                                         // instant
            case 1: end = start + Double(Int.random(in: 1...15, using: &rng)) * 60
            case 2: end = start + Double.random(in: 0.5...1800, using: &rng)
            case 3 where !spans.isEmpty:                                              // another's span again
                let s = spans[Int.random(in: 0..<spans.count, using: &rng)]
                start = s.0; end = s.1
            default: end = (start / 900).rounded(.up) * 900 + 900                     // to a slot edge
            }
            spans.append((start, end))
            let value = Double(Int.random(in: values, using: &rng)) + (Bool.random(using: &rng) ? 0.25 : 0)
            out.append(try QuantitySample(type: type, quantity: Quantity(value, type.canonicalUnit),
                                          start: base.addingTimeInterval(start), end: base.addingTimeInterval(end),
                                          source: source))
        }
        return out
    }

    static func close(_ a: Double?, _ b: Double?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (x?, y?): return x == y || abs(x - y) <= 1e-9 * max(1, abs(x), abs(y))
        default: return false
        }
    }

    static func expectSame(_ got: StatisticValues, _ want: StatisticValues, _ what: String) {
        #expect(close(got.sum, want.sum), "sum \(what): \(String(describing: got.sum)) vs \(String(describing: want.sum))")
        #expect(close(got.average, want.average), "average \(what): \(String(describing: got.average)) vs \(String(describing: want.average))")
        #expect(got.minimum == want.minimum, "min \(what)")
        #expect(got.maximum == want.maximum, "max \(what)")
        #expect(got.mostRecent == want.mostRecent && got.mostRecentStart == want.mostRecentStart
                && got.mostRecentEnd == want.mostRecentEnd, "most recent \(what)")
        #expect(got.sampleCount == want.sampleCount, "count \(what): \(got.sampleCount) vs \(want.sampleCount)")
    }

    static func expectSame(_ got: [Statistics], _ want: [Statistics], _ what: String) {
        #expect(got.count == want.count, "bucket count \(what)")
        for (g, w) in zip(got, want) {
            #expect(g.start == w.start && g.end == w.end, "bucket edges \(what)")
            expectSame(g.values, w.values, "\(what) bucket \(g.start.map(ISO8601.string) ?? "-")")
            #expect(g.sources?.map(\.source) == w.sources?.map(\.source), "sources \(what)")
            #expect(g.sources?.map(\.rank) == w.sources?.map(\.rank), "ranks \(what)")
            for (gs, ws) in zip(g.sources ?? [], w.sources ?? []) {
                expectSame(gs.values, ws.values, "\(what) source \(gs.source.name)")
            }
        }
    }

    /// Every query shape over one store, streaming paths against the oracle.
    static func compareAll(_ store: HealthStore, type: QuantityType, options: StatisticsOptions, base: Date,
                           zone: TimeZone, rng: inout SplitMix64, what: String) throws {
        let edges: [Double?] = [nil, 0, 900, 3600, -1800, 86_400, 43_200.5, Double(Int.random(in: 0...90_000, using: &rng))]
        for _ in 0..<6 {
            var from = edges[Int.random(in: 0..<edges.count, using: &rng)]
            var to = edges[Int.random(in: 0..<edges.count, using: &rng)]
            if let f = from, let t = to, t < f { swap(&from, &to) }
            var q = StatisticsQuery(type: type, options: options, start: from.map { base.addingTimeInterval($0) },
                                    end: to.map { base.addingTimeInterval($0) })
            if Int.random(in: 0..<5, using: &rng) == 0 { q.source = "S1" }
            let label = "\(what) from \(from.map { "\($0)" } ?? "-") to \(to.map { "\($0)" } ?? "-") source \(q.source ?? "all")"
            let want = try store.statistics(q, path: .loadAll)
            expectSame([try store.statistics(q, path: .streaming)], [want], label + " (rollups)")
            expectSame([try store.statistics(q, path: .streamingRowsOnly)], [want], label + " (rows)")
            for interval in [StatisticsInterval.days(1), .hours(1), .minutes(15), .minutes(7), .weeks(1)] {
                let anchor: Date? = Bool.random(using: &rng) ? nil : base.addingTimeInterval(Double(Int.random(in: -7200...7200, using: &rng)))
                let wantC = try store.statisticsCollection(q, interval: interval, anchor: anchor, timeZone: zone, path: .loadAll)
                let gotR = try store.statisticsCollection(q, interval: interval, anchor: anchor, timeZone: zone, path: .streaming)
                let gotS = try store.statisticsCollection(q, interval: interval, anchor: anchor, timeZone: zone, path: .streamingRowsOnly)
                expectSame(gotR, wantC, "\(label) \(interval) (rollups)")
                expectSame(gotS, wantC, "\(label) \(interval) (rows)")
            }
        }
    }

    @Test("random overlapping sources, DST days, every option: streaming equals the oracle",
          arguments: Array(zip(1...12, (0..<12).map { zones[$0 % zones.count] })))
    func randomStores(seed: Int, zone: (String, String)) async throws {
        // Heavy and synchronous: off the cooperative pool, whose threads the other suites' async
        // tests (simulated straps with wall-clock watchdogs) need meanwhile.
        try await offThreadOneAtATime {
            var rng = SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15)
            let tz = try #require(TimeZone(identifier: zone.0))
            let base = try #require(ISO8601.date(zone.1))
            let (type, options, values) = Self.types[seed % Self.types.count]
            let sources = (0..<3).map { Source(name: "S\($0)", identifier: "com.example.s\($0)") }
            let tmp = try TempStore()
            try tmp.store.save(try Self.randomSamples(&rng, type: type, values: values, base: base, sources: sources, count: 160))
            for (i, s) in sources.shuffled(using: &rng).enumerated() { try tmp.store.setPriority(source: s.identifier, rank: i + 1) }
            try Self.compareAll(tmp.store, type: type, options: options, base: base, zone: tz, rng: &rng, what: "seed \(seed) \(zone.0)")

            // Delete a third at random: rollups go stale and are recomputed in the same transaction.
            let all = try tmp.store.samples(SampleQuery(type: type))
            _ = try tmp.store.delete(uuids: all.filter { _ in Int.random(in: 0..<3, using: &rng) == 0 }.map(\.uuid))
            #expect(try scalar(tmp.store, "SELECT count(*) FROM sample_rollups WHERE stale <> 0") == 0)
            try Self.compareAll(tmp.store, type: type, options: options, base: base, zone: tz, rng: &rng, what: "seed \(seed) after delete")
        }
    }

    @Test("one source: the streaming engine without rollups gives bit-for-bit the oracle's numbers", arguments: 1...4)
    func singleSourceExact(seed: Int) async throws {
        // Heavy and synchronous: off the cooperative pool, whose threads the other suites' async
        // tests (simulated straps with wall-clock watchdogs) need meanwhile.
        try await offThreadOneAtATime {
            var rng = SplitMix64(seed: UInt64(seed) &+ 77)
            let base = try #require(ISO8601.date("2026-03-28T23:00:00Z"))
            let tmp = try TempStore()
            try tmp.store.save(try Self.randomSamples(&rng, type: .heartRate, values: 40...180, base: base,
                                                      sources: [Source(name: "S0", identifier: "com.example.s0")], count: 200))
            let q = StatisticsQuery(type: .heartRate, options: [.discreteAverage, .discreteMin, .discreteMax, .mostRecent])
            let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
            let want = try tmp.store.statisticsCollection(q, interval: .hours(1), timeZone: berlin, path: .loadAll)
            let got = try tmp.store.statisticsCollection(q, interval: .hours(1), timeZone: berlin, path: .streamingRowsOnly)
            #expect(got == want)
        }
    }

    @Test("a stale rollup (a delete outside the store's write path) is decoded from rows, never trusted")
    func staleRollupIsNotTrusted() throws {
        let tmp = try TempStore()
        try tmp.store.save([try sample(.stepCount, 10, from: 60, to: 120), try sample(.stepCount, 5, from: 180, to: 240)])
        _ = try tmp.store.withConnection { db in
            try db.prepare("DELETE FROM samples WHERE start = (SELECT min(start) FROM samples)", cached: false).run()
        }
        #expect(try scalar(tmp.store, "SELECT count(*) FROM sample_rollups WHERE stale <> 0") == 1)
        let q = StatisticsQuery(type: .stepCount, options: .cumulativeSum)
        #expect(try tmp.store.statistics(q).values.sum == 5)
        // The next write transaction recomputes it.
        try tmp.store.save([try sample(.stepCount, 1, from: 86_400, to: 86_460)])
        #expect(try scalar(tmp.store, "SELECT count(*) FROM sample_rollups WHERE stale <> 0") == 0)
        #expect(try scalar(tmp.store, "SELECT sum(count) FROM sample_rollups") == 2)
        #expect(try tmp.store.statistics(q).values.sum == 6)
    }
}
