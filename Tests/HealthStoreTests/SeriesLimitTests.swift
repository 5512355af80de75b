import Foundation
import HealthGateTesting
import HealthModel
import Testing
@testable import HealthStore

/// `samples` with a limit and `mostRecentSample` over quantity series (issue #12, docs/queries.md
/// "Sample queries"): they decode only the chunks that can hold one of the first `limit`
/// quantities — counted exactly, as `SeriesStatisticsTests` counts statistics' chunks — and
/// return exactly the first `limit` samples of the unlimited answer, ties included.
@Suite("A limit over quantity series decodes only the chunks it needs, and answers as without it")
struct SeriesLimitTests {
    typealias Streams = SeriesStatisticsTests

    /// Two hours at 1 Hz from 10:00:30 in chunks of 60 (120 chunks).
    static let start = 1_790_071_230.0   // 2026-09-22T10:00:30Z

    static func twoHours() throws -> TempStore {
        let tmp = try TempStore()
        try Streams.oneSeries(tmp.store, times: (0..<7200).map { start + Double($0) })
        #expect(try scalar(tmp.store, "SELECT count(*) FROM series_chunks") == 120)
        return tmp
    }

    static func samples(_ store: HealthStore, _ q: SampleQuery) throws -> (samples: [QuantitySample], decoded: Int) {
        let work = StatisticsWork()
        let got = try store.samples(q, work: work)
        return (got, work.chunksDecoded)
    }

    @Test("mostRecentSample decodes one chunk of 120, none when an individually stored sample ends later")
    func mostRecentDecodesOneChunk() throws {
        let tmp = try Self.twoHours()
        let (got, decoded) = try Self.samples(tmp.store, .mostRecent(.heartRate))
        #expect(got.count == 1 && got[0].endDate.timeIntervalSince1970 == Self.start + 7199 && got[0].seriesIndex == 7199)
        #expect(decoded == 1, "decoded \(decoded)")
        #expect(try tmp.store.mostRecentSample(of: .heartRate)?.seriesIndex == 7199)

        // A reading saved on its own, ending after the series: no chunk can beat it.
        let later = try QuantitySample(type: .heartRate, quantity: Quantity(70, .countPerMinute),
                                       start: Date(timeIntervalSince1970: Self.start + 7200),
                                       end: Date(timeIntervalSince1970: Self.start + 7200), source: Streams.sources[1])
        try tmp.store.save([later])
        let (after, none) = try Self.samples(tmp.store, .mostRecent(.heartRate))
        #expect(after.map(\.uuid) == [later.uuid] && none == 0, "decoded \(none)")

        // One ending exactly with the last quantity: the tie is decoded, and the series
        // quantity orders first when descending (series after rows at the same date).
        let tmp2 = try Self.twoHours()
        let tie = try QuantitySample(type: .heartRate, quantity: Quantity(70, .countPerMinute),
                                     start: Date(timeIntervalSince1970: Self.start + 7199),
                                     end: Date(timeIntervalSince1970: Self.start + 7199), source: Streams.sources[1])
        try tmp2.store.save([tie])
        let (tied, one) = try Self.samples(tmp2.store, .mostRecent(.heartRate))
        #expect(tied.first?.seriesIndex == 7199 && one == 1, "decoded \(one)")
    }

    @Test("a limit decodes the chunks that hold the first N, in either order and by either date")
    func limitDecodesOnlyWhatItNeeds() throws {
        let tmp = try Self.twoHours()
        // Ascending: chunk k holds readings 60k…60k+59.
        for (limit, chunks) in [(1, 1), (5, 1), (60, 1), (61, 2), (120, 2), (121, 3), (7200, 120), (9999, 120)] {
            for sort in SampleQuery.SortKey.allCases {
                let (got, decoded) = try Self.samples(tmp.store, SampleQuery(type: .heartRate, sortBy: sort, limit: limit))
                #expect(got.map(\.seriesIndex) == Array(0..<min(limit, 7200)), "limit \(limit) \(sort)")
                #expect(decoded == chunks, "limit \(limit) \(sort): decoded \(decoded), want \(chunks)")
                let (down, decodedDown) = try Self.samples(tmp.store, SampleQuery(type: .heartRate, sortBy: sort, ascending: false, limit: limit))
                #expect(down.map(\.seriesIndex) == Array((max(0, 7200 - limit)..<7200).reversed()), "limit \(limit) \(sort) descending")
                #expect(decodedDown == chunks, "limit \(limit) \(sort) descending: decoded \(decodedDown), want \(chunks)")
            }
        }
        // Inside a range: the first chunk that meets it onwards (10:30:00 is inside chunk 29).
        let from = Date(timeIntervalSince1970: Self.start + 1770)
        let (ranged, decoded) = try Self.samples(tmp.store, SampleQuery(type: .heartRate, start: from, limit: 31))
        #expect(ranged.map(\.seriesIndex) == Array(1770..<1801) && decoded == 2, "decoded \(decoded)")
        // Limit 0 decodes nothing; no limit decodes every chunk.
        #expect(try Self.samples(tmp.store, SampleQuery(type: .heartRate, limit: 0)).decoded == 0)
        let (all, every) = try Self.samples(tmp.store, SampleQuery(type: .heartRate))
        #expect(all.count == 7200 && every == 120, "decoded \(every)")
    }

    @Test("rows and series interleaved: the individually stored samples set the threshold too")
    func rowsSetTheThreshold() throws {
        let tmp = try Self.twoHours()
        // Five individual readings before the series starts: limit 5 needs no chunk at all.
        let early = try (1...5).map { k in
            try QuantitySample(type: .heartRate, quantity: Quantity(70, .countPerMinute),
                               start: Date(timeIntervalSince1970: Self.start - Double(k)),
                               end: Date(timeIntervalSince1970: Self.start - Double(k)), source: Streams.sources[1])
        }
        try tmp.store.save(early)
        let (got, decoded) = try Self.samples(tmp.store, SampleQuery(type: .heartRate, limit: 5))
        #expect(got.allSatisfy { $0.seriesIndex == nil } && decoded == 0, "decoded \(decoded)")
        let (six, one) = try Self.samples(tmp.store, SampleQuery(type: .heartRate, limit: 6))
        #expect(six.last?.seriesIndex == 0 && one == 1, "decoded \(one)")
    }

    @Test("random streams (clock steps back, duplicate times, overlapping series, rows beside them): every limit, order and range gives the unlimited answer's first N",
          arguments: 1...6)
    func sameAsUnlimited(seed: Int) async throws {
        try await offThreadOneAtATime {
            var rng = SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 11)
            let base = 1_790_071_200.0
            let readings = Streams.randomStreams(&rng, base: base, sources: 1 + seed % 3, count: 400, spans: seed % 2 == 0, values: 40...180)
            let tmp = try TempStore()
            try Streams.storeAsSeries(tmp.store, readings, type: .heartRate, chunkQuantities: [4, 10, 60][seed % 3], chunkSpan: [7, 20, 60][seed % 3])
            // Individually stored samples among them, some at the same instants as quantities.
            var extra: [QuantitySample] = []
            for k in 0..<20 {
                let t = k % 4 == 0 ? readings[Int.random(in: 0..<readings.count, using: &rng)].start
                                   : base + Double(Int.random(in: -2000...3000, using: &rng))
                extra.append(try QuantitySample(type: .heartRate, quantity: Quantity(Double(60 + k), .countPerMinute),
                                                start: Date(timeIntervalSince1970: t),
                                                end: Date(timeIntervalSince1970: t + (k % 3 == 0 ? 30 : 0)), source: Streams.sources[k % 3]))
            }
            try tmp.store.save(extra)
            let all = try tmp.store.count(SampleQuery(type: .heartRate))
            #expect(all == readings.count + extra.count)
            let bounds: [Double?] = [nil, -600, 0, 900, 1800.5]
            for _ in 0..<40 {
                var q = SampleQuery(type: .heartRate, sortBy: Bool.random(using: &rng) ? .startDate : .endDate,
                                    ascending: Bool.random(using: &rng))
                if let b = bounds[Int.random(in: 0..<bounds.count, using: &rng)] { q.start = Date(timeIntervalSince1970: base + b) }
                if Bool.random(using: &rng) { q.end = Date(timeIntervalSince1970: base + 2400) }
                q.strictStartDate = Int.random(in: 0..<4, using: &rng) == 0
                if Int.random(in: 0..<4, using: &rng) == 0 { q.source = Streams.sources[0].name }
                let unlimited = try tmp.store.samples(q)
                for limit in [0, 1, 2, 3, 7, 50, 399, 2000] {
                    var l = q
                    l.limit = limit
                    let got = try tmp.store.samples(l)
                    #expect(got == Array(unlimited.prefix(limit)), "seed \(seed) limit \(limit) \(q)")
                }
            }
        }
    }

    @Test("delete with a limit reaches the same series as before, decoding only what the limit needs")
    func deleteWithLimit() throws {
        let tmp = try Self.twoHours()
        try Streams.oneSeries(tmp.store, times: (0..<600).map { Self.start + 7200 + Double($0) }, source: 1)
        // The first 10 by start are in the first series: it goes whole, the later one stays.
        #expect(try tmp.store.delete(matching: SampleQuery(type: .heartRate, limit: 10)) == 7200)
        #expect(try tmp.store.count(SampleQuery(type: .heartRate)) == 600)
    }
}
