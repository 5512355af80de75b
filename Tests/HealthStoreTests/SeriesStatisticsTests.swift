import Foundation
import HealthGateTesting
import HealthModel
import Testing
@testable import HealthStore

/// Statistics streamed over quantity series (issue #12, docs/queries.md "Quantity series"):
/// the same readings stored as series and as individual samples give the same statistics and
/// collections as the load-everything oracle; chunks inside one bucket that meet no other
/// source are answered from their aggregates, and only the others are decoded.
@Suite("Statistics over quantity series equal individually stored samples and the oracle")
struct SeriesStatisticsTests {

    /// One reading of a random stream.
    struct Reading {
        var source: Int
        var start: Double
        var end: Double
        var value: Double
    }

    static let sources = (0..<3).map { Source(name: "S\($0)", identifier: "com.example.series.s\($0)") }
    static let devices = (0..<3).map { Device(name: "Strap \($0)", localIdentifier: "AA:0\($0)") }

    /// A strap-like stream per source around `base`: mostly one reading a second, with gaps
    /// (a new series after 60 s), reconnects, the clock stepping backwards, duplicate receipt
    /// times, readings exactly on quarter-hour and hour edges, and (with `spans`) readings with a
    /// duration. Appended in this order, per source.
    static func randomStreams(_ rng: inout SplitMix64, base: Double, sources: Int, count: Int, spans: Bool,
                              values: ClosedRange<Int>) -> [Reading] {
        var out: [Reading] = []
        for s in 0..<sources {
            // Streams start within an hour of each other and half of them on the same sub-second
            // phase, so sources overlap and their instants often coincide (the merge drops one).
            var t = base + Double(Int.random(in: -1800...1800, using: &rng)) + (Bool.random(using: &rng) ? 0 : 0.25)
            for _ in 0..<count {
                switch Int.random(in: 0..<60, using: &rng) {
                case 0: t += Double(Int.random(in: 61...900, using: &rng))                       // gap: a new series
                case 1: t -= Double(Int.random(in: 1...300, using: &rng))                        // clock steps back
                case 2: break                                                                     // duplicate receipt time
                case 3: t = ((t / 900).rounded(.up)) * 900                                        // on a quarter-hour edge
                case 4:                                                                           // at / before an hour
                    let hour = (t / 3600).rounded(.up) * 3600
                    t = hour - t < 900 ? hour - Double(Int.random(in: 0...1, using: &rng)) : t + 1
                case 5: t += Double(Int.random(in: 2...59, using: &rng))                          // a short silence
                case 6: t += 0.001 * Double(Int.random(in: 1...999, using: &rng))                 // sub-second
                default: t += 1
                }
                let end = spans && Bool.random(using: &rng) ? t + [0.5, 1, 2, 3.25, 30][Int.random(in: 0..<5, using: &rng)] : t
                let value = Double(Int.random(in: values, using: &rng)) + (Int.random(in: 0..<4, using: &rng) == 0 ? 0.5 : 0)
                out.append(Reading(source: s, start: t, end: end, value: value))
            }
        }
        return out
    }

    /// Stores `readings` as quantity series through the ingest writer (one batch per 50
    /// readings of a source; small chunks so that many chunk edges fall on and near bucket edges).
    static func storeAsSeries(_ store: HealthStore, _ readings: [Reading], type: QuantityType,
                              chunkQuantities: Int, chunkSpan: Double) throws {
        let writer = SeriesWriter(maxChunkQuantities: chunkQuantities, maxChunkSpan: chunkSpan, maxGap: 60)
        var i = 0
        while i < readings.count {
            let batch = readings[i..<min(i + 50, readings.count)]
            try store.write { w in
                for r in batch {
                    let key = SeriesWriter.Key(typeID: try w.typeID(type), sourceID: try w.sourceID(sources[r.source]),
                                               deviceID: try w.deviceID(devices[r.source]))
                    try [UInt16]().withUnsafeBufferPointer { rr in
                        try writer.append(w, key: key, style: type.aggregationStyle, sensorLocation: .chest, start: r.start, end: r.end,
                                          value: r.value, contact: .detected, flags: [], rr: rr)
                    }
                }
                try writer.flush(w)
            }
            i += 50
        }
        try store.write { w in try writer.closeAll(w) }
    }

    /// The same readings as individually stored samples, in the same order.
    static func storeIndividually(_ store: HealthStore, _ readings: [Reading], type: QuantityType) throws {
        var meta = Metadata()
        meta.heartRateSensorLocation = type == .heartRate ? .chest : nil
        try store.save(readings.map { r in
            try QuantitySample(type: type, quantity: Quantity(r.value, type.canonicalUnit),
                               start: Date(timeIntervalSince1970: r.start), end: Date(timeIntervalSince1970: r.end),
                               source: sources[r.source], device: devices[r.source], metadata: meta)
        })
    }

    /// Every query shape: the series store's streaming paths and the individual store's paths
    /// against the oracle over the series store.
    static func compare(series: HealthStore, rows: HealthStore, type: QuantityType, options: StatisticsOptions,
                        base: Double, zone: TimeZone, rng: inout SplitMix64, what: String) throws {
        let edges: [Double?] = [nil, 0, 900, 3600, -1800, 7200.5, 86_400, Double(Int.random(in: -5000...20_000, using: &rng))]
        for round in 0..<5 {
            var from = edges[Int.random(in: 0..<edges.count, using: &rng)]
            var to = edges[Int.random(in: 0..<edges.count, using: &rng)]
            if let f = from, let t = to, t < f { swap(&from, &to) }
            var q = StatisticsQuery(type: type, options: options, start: from.map { Date(timeIntervalSince1970: base + $0) },
                                    end: to.map { Date(timeIntervalSince1970: base + $0) })
            switch round {
            case 3: q.source = "S1"
            case 4: q.device = "Strap 0"
            default: break
            }
            let label = "\(what) from \(from.map { "\($0)" } ?? "-") to \(to.map { "\($0)" } ?? "-") source \(q.source ?? "all") device \(q.device ?? "all")"
            let want = try series.statistics(q, path: .loadAll)
            StreamingStatisticsTests.expectSame([try series.statistics(q)], [want], label + " (series, default)")
            StreamingStatisticsTests.expectSame([try series.statistics(q, path: .streamingRowsOnly)], [want], label + " (series, decoding all)")
            StreamingStatisticsTests.expectSame([try rows.statistics(q)], [want], label + " (individual samples)")
            StreamingStatisticsTests.expectSame([try rows.statistics(q, path: .loadAll)], [want], label + " (individual samples, oracle)")
            for interval in [StatisticsInterval.days(1), .hours(1), .minutes(15), .minutes(7)] {
                let anchor: Date? = Bool.random(using: &rng) ? nil : Date(timeIntervalSince1970: base + Double(Int.random(in: -7200...7200, using: &rng)))
                let wantC = try series.statisticsCollection(q, interval: interval, anchor: anchor, timeZone: zone, path: .loadAll)
                let l = "\(label) \(interval) anchor \(anchor.map(ISO8601.string) ?? "-")"
                StreamingStatisticsTests.expectSame(
                    try series.statisticsCollection(q, interval: interval, anchor: anchor, timeZone: zone), wantC, l + " (series)")
                StreamingStatisticsTests.expectSame(
                    try series.statisticsCollection(q, interval: interval, anchor: anchor, timeZone: zone, path: .streamingRowsOnly),
                    wantC, l + " (series, decoding all)")
                StreamingStatisticsTests.expectSame(
                    try rows.statisticsCollection(q, interval: interval, anchor: anchor, timeZone: zone), wantC, l + " (individual)")
                StreamingStatisticsTests.expectSame(
                    try rows.statisticsCollection(q, interval: interval, anchor: anchor, timeZone: zone, path: .loadAll),
                    wantC, l + " (individual, oracle)")
            }
        }
    }

    static let cases: [(QuantityType, StatisticsOptions, ClosedRange<Int>, Bool)] = [
        (.heartRate, [.discreteAverage, .discreteMin, .discreteMax, .mostRecent, .separateBySource], 40...180, false),
        (.heartRate, [.discreteAverage, .discreteMin, .discreteMax, .mostRecent], 40...180, true),
        (.stepCount, [.cumulativeSum, .mostRecent, .separateBySource], 0...30, true),
    ]

    @Test("random streams (gaps, reconnects, clock steps back, duplicate times, overlapping sources) as series and as samples: same statistics in every zone, DST days included",
          arguments: Array(zip(1...12, (0..<12).map { StreamingStatisticsTests.zones[$0 % StreamingStatisticsTests.zones.count] })))
    func randomStreams(seed: Int, zone: (String, String)) async throws {
        try await offThreadOneAtATime {
            var rng = SplitMix64(seed: UInt64(seed) &* 0xD1B5_4A32_D192_ED03 &+ 5)
            let tz = try #require(TimeZone(identifier: zone.0))
            let base = try #require(ISO8601.date(zone.1)).timeIntervalSince1970
            let (type, options, values, spans) = Self.cases[seed % Self.cases.count]
            // One to three sources: with one, nothing merges (chunks read in storage order);
            // with more, their streams overlap and the priority merge decides.
            let sourceCount = [1, 2, 2, 3][seed % 4]
            let readings = Self.randomStreams(&rng, base: base, sources: sourceCount, count: 500, spans: spans, values: values)
            let seriesStore = try TempStore(), rowStore = try TempStore()
            try Self.storeAsSeries(seriesStore.store, readings, type: type, chunkQuantities: [4, 10, 120][seed % 3],
                                   chunkSpan: [7, 20, 60][seed % 3])
            try Self.storeIndividually(rowStore.store, readings, type: type)
            // A few individually stored samples of another source beside the series (a phone).
            let phone = Source(name: "Phone", identifier: "com.example.series.phone")
            var extra: [QuantitySample] = []
            for _ in 0..<(seed % 2 == 0 ? 12 : 0) {
                let s = base + Double(Int.random(in: -1800...2400, using: &rng))
                let e = s + [0, 60, 300, 900][Int.random(in: 0..<4, using: &rng)]
                extra.append(try QuantitySample(type: type, quantity: Quantity(Double(Int.random(in: values, using: &rng)), type.canonicalUnit),
                                                start: Date(timeIntervalSince1970: s), end: Date(timeIntervalSince1970: e), source: phone))
            }
            try seriesStore.store.save(extra)
            try rowStore.store.save(extra)
            #expect(try scalar(seriesStore.store, "SELECT count(*) FROM samples") == extra.count)
            #expect(try scalar(seriesStore.store, "SELECT sum(count) FROM series") == readings.count)
            let ranking = (Array(Self.sources.prefix(sourceCount)) + (extra.isEmpty ? [] : [phone])).shuffled(using: &rng)
            for store in [seriesStore.store, rowStore.store] {
                for (i, s) in ranking.enumerated() { try store.setPriority(source: s.identifier, rank: i + 1) }
            }
            try Self.compare(series: seriesStore.store, rows: rowStore.store, type: type, options: options, base: base, zone: tz,
                             rng: &rng, what: "seed \(seed) \(zone.0) \(type.identifier) \(sourceCount) sources")
        }
    }

    /// Readings at `times` of one source as one series with chunks of `chunk` readings.
    static func oneSeries(_ store: HealthStore, times: [Double], values: (Int) -> Double = { Double(60 + $0 % 50) },
                          source: Int = 0, chunk: Int = 60, span: Double = 60) throws {
        try storeAsSeries(store, times.enumerated().map { Reading(source: source, start: $1, end: $1, value: values($0)) },
                          type: .heartRate, chunkQuantities: chunk, chunkSpan: span)
    }

    static let hrOptions: StatisticsOptions = [.discreteAverage, .discreteMin, .discreteMax, .mostRecent]
    static let utc = TimeZone(identifier: "UTC")!

    @Test("whole chunks inside one bucket are answered from their aggregates; only the chunks across an edge are decoded")
    func aggregatesAreUsed() throws {
        let tmp = try TempStore()
        // Two hours at 1 Hz from 10:00:30 (chunks of 60 readings: 10:00:30–10:01:29, …), so the
        // chunk holding 11:00:00 straddles the hour edge.
        let start = 1_790_071_230.0   // 2026-09-22T10:00:30Z
        try Self.oneSeries(tmp.store, times: (0..<7200).map { start + Double($0) })
        #expect(try scalar(tmp.store, "SELECT count(*) FROM series_chunks") == 120)
        let q = StatisticsQuery(type: .heartRate, options: Self.hrOptions)
        let work = StatisticsWork()
        let got = try tmp.store.statisticsCollection(q, interval: .hours(1), timeZone: Self.utc, path: .streaming, work: work)
        let want = try tmp.store.statisticsCollection(q, interval: .hours(1), timeZone: Self.utc, path: .loadAll)
        StreamingStatisticsTests.expectSame(got, want, "hourly")
        #expect(got.count == 3 && got.map(\.values.sampleCount).reduce(0, +) == 7200)
        // The chunks straddling 11:00 and 12:00 are decoded; the other 118 are not.
        #expect(work.chunksDecoded == 2, "decoded \(work.chunksDecoded)")
        #expect(work.chunksFromAggregates == 118, "from aggregates \(work.chunksFromAggregates)")

        // Decoding everything (the rows-only path) gives the same numbers, bit for bit for one source.
        let all = StatisticsWork()
        let decoded = try tmp.store.statisticsCollection(q, interval: .hours(1), timeZone: Self.utc, path: .streamingRowsOnly, work: all)
        #expect(all.chunksDecoded == 120 && all.chunksFromAggregates == 0)
        StreamingStatisticsTests.expectSame(decoded, want, "hourly, all decoded")

        // A range that starts inside a chunk decodes that chunk too.
        let partial = StatisticsWork()
        let q2 = StatisticsQuery(type: .heartRate, options: Self.hrOptions, start: Date(timeIntervalSince1970: start + 90),
                                 end: Date(timeIntervalSince1970: start + 7200))
        StreamingStatisticsTests.expectSame([try tmp.store.statistics(q2, path: .streaming, work: partial)],
                                            [try tmp.store.statistics(q2, path: .loadAll)], "partial range")
        #expect(partial.chunksDecoded == 1 && partial.chunksFromAggregates == 118)
    }

    @Test("a second source overlapping five minutes decodes only the chunks it meets; the merge decides there")
    func overlapDecodesOnlyTheChunksItMeets() throws {
        let tmp = try TempStore()
        let start = 1_790_071_200.0   // 2026-09-22T10:00:00Z
        try Self.oneSeries(tmp.store, times: (0..<3600).map { start + Double($0) })
        // Source 1 from 10:20:00 to 10:24:59, ranked first.
        try Self.oneSeries(tmp.store, times: (0..<300).map { start + 1200 + Double($0) }, values: { _ in 200 }, source: 1)
        try tmp.store.setPriority(source: Self.sources[1].identifier, rank: 1)
        try tmp.store.setPriority(source: Self.sources[0].identifier, rank: 2)
        let q = StatisticsQuery(type: .heartRate, options: Self.hrOptions.union(.separateBySource))
        let work = StatisticsWork()
        let got = try tmp.store.statisticsCollection(q, interval: .minutes(15), timeZone: Self.utc, path: .streaming, work: work)
        let want = try tmp.store.statisticsCollection(q, interval: .minutes(15), timeZone: Self.utc, path: .loadAll)
        StreamingStatisticsTests.expectSame(got, want, "15 min")
        // Source 1 wins 10:20:00–10:24:59: source 0's readings there are dropped.
        #expect(got[1].values.sampleCount == 900 && got[1].values.maximum == 200)
        #expect(got.map(\.values.sampleCount).reduce(0, +) == 3600)
        // The merged pass decodes source 0's five chunks that meet source 1 (10:20–10:24) and
        // source 1's five, and answers source 0's other 55 from aggregates; the per-source passes
        // (separateBySource) decode nothing, each source being alone there.
        #expect(work.chunksDecoded == 10, "decoded \(work.chunksDecoded)")
        #expect(work.chunksFromAggregates == 55 + 60 + 5, "from aggregates \(work.chunksFromAggregates)")
    }

    @Test("bucket and range edges: an instant at a bucket's end counts in the next bucket; at the range's end not at all",
          arguments: [0, 1])
    func edges(clockBack: Int) throws {
        let tmp = try TempStore()
        let hour = 1_790_071_200.0   // 10:00Z
        // Chunks of four readings; the first chunk ends exactly at 11:00:00 (an instant on the edge).
        var times = [hour + 3597, hour + 3598, hour + 3599, hour + 3600, hour + 3601, hour + 3602, hour + 7200]
        if clockBack == 1 { times += [hour + 3600, hour + 3599] }   // a step back, duplicating receipt times
        try Self.oneSeries(tmp.store, times: times, chunk: 4, span: 60)
        let q = StatisticsQuery(type: .heartRate, options: Self.hrOptions)
        let got = try tmp.store.statisticsCollection(q, interval: .hours(1), timeZone: Self.utc)
        StreamingStatisticsTests.expectSame(got, try tmp.store.statisticsCollection(q, interval: .hours(1), timeZone: Self.utc, path: .loadAll), "edges")
        // No range: the collection reaches the bucket holding the last instant (12:00:00).
        #expect(got.map { $0.start!.timeIntervalSince1970 } == [hour, hour + 3600, hour + 7200])
        #expect(got.map(\.values.sampleCount) == (clockBack == 1 ? [4, 4, 1] : [3, 3, 1]))
        // A range ending at 11:00:00 leaves out the instant there; one starting there takes it.
        let before = StatisticsQuery(type: .heartRate, options: .discreteMax, end: Date(timeIntervalSince1970: hour + 3600))
        #expect(try tmp.store.statistics(before).values.sampleCount == (clockBack == 1 ? 4 : 3))
        let after = StatisticsQuery(type: .heartRate, options: .discreteMax, start: Date(timeIntervalSince1970: hour + 3600))
        #expect(try tmp.store.statistics(after).values.sampleCount == (clockBack == 1 ? 5 : 4))
        // A range from the last instant on: one bucket, holding it.
        let last = StatisticsQuery(type: .heartRate, options: .discreteMax, start: Date(timeIntervalSince1970: hour + 7200))
        let lastBuckets = try tmp.store.statisticsCollection(last, interval: .hours(1), timeZone: Self.utc)
        #expect(lastBuckets.count == 1 && lastBuckets[0].values.sampleCount == 1)
        // An empty range at an instant: no bucket, nothing counted.
        let empty = StatisticsQuery(type: .heartRate, options: .discreteMax, start: Date(timeIntervalSince1970: hour + 3600),
                                    end: Date(timeIntervalSince1970: hour + 3600))
        #expect(try tmp.store.statistics(empty).values.sampleCount == 0)
        #expect(try tmp.store.statisticsCollection(empty, interval: .hours(1), timeZone: Self.utc).isEmpty)
    }

    @Test("a daily collection over DST days from series equals the oracle, chunks inside each 23 h / 25 h day from aggregates")
    func dstDays() throws {
        let tmp = try TempStore()
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        // 2026-03-28 00:00 CET to 2026-03-30 00:00 CEST, a reading every 10 s.
        let from = 1_774_652_400.0, to = 1_774_821_600.0
        try Self.oneSeries(tmp.store, times: stride(from: from, to: to, by: 10).map { $0 }, chunk: 30, span: 600)
        let q = StatisticsQuery(type: .heartRate, options: Self.hrOptions, start: Date(timeIntervalSince1970: from),
                                end: Date(timeIntervalSince1970: to))
        let work = StatisticsWork()
        let got = try tmp.store.statisticsCollection(q, interval: .days(1), timeZone: berlin, path: .streaming, work: work)
        StreamingStatisticsTests.expectSame(got, try tmp.store.statisticsCollection(q, interval: .days(1), timeZone: berlin, path: .loadAll), "DST")
        #expect(got.map { $0.end!.timeIntervalSince($0.start!) } == [86_400, 82_800])
        #expect(got.map(\.values.sampleCount) == [8640, 8280])
        #expect(work.chunksDecoded == 0 && work.chunksFromAggregates > 500)
    }
}
