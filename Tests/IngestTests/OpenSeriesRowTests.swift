import Foundation
import HealthGateTesting
import HealthModel
@testable import HealthStore
import Testing
@testable import Ingest

/// An open series' row is rewritten only when a chunk fills (docs/store.md, "Writes"): between,
/// a commit writes the open chunk alone, and the row holds the totals of the chunks before
/// `pending_seq`. Every reader that takes a series' count, end or change position from its row
/// must add the pending chunks: these tests read a store whose series are open mid-chunk, then
/// the same store once the writer closed them (the row exact), and the same readings stored one
/// row each, and want the same answers from all three.
@Suite struct OpenSeriesRowTests {
    static let t0: Double = 1_790_000_000

    struct Feed {
        let slots = SlotTable()
        let hr: UInt16, energy: UInt16, source: UInt16, straps: [UInt16]

        init() throws {
            let slots = self.slots
            hr = try slots.slot(for: .heartRate)
            energy = try slots.slot(for: .activeEnergyBurned)
            source = try slots.slot(for: Source(name: "HealthGate BLE", identifier: "org.healthgate.ble"))
            straps = try (0..<2).map { try slots.slot(for: Device(name: "Strap \($0)", localIdentifier: "AA:00:0\($0)")) }
        }

        /// Second `s`: each strap's heart rate, and strap 0's energy every 10 s.
        func batch(_ s: Int) -> [SampleRecord] {
            let t = OpenSeriesRowTests.t0 + Double(s)
            var out = straps.enumerated().map { k, strap in
                SampleRecord(typeSlot: hr, value: Double(60 + (s * 7 + k * 13) % 50), start: t, end: t, sourceSlot: source, deviceSlot: strap)
            }
            if s % 10 == 9 {
                out.append(SampleRecord(typeSlot: energy, value: 1.5, start: t - 10, end: t, sourceSlot: source, deviceSlot: straps[0]))
            }
            return out
        }
    }

    /// Everything a reader answers about the store that a series row's totals feed.
    struct Answers: Equatable {
        var sources: [SourceInfo]
        var devices: [String: [SourceDevice]]
        var newest: Double?
        var count: Int
        var counts: [Int]
        var samples: [QuantitySample]
        var lastTen: [QuantitySample]
        var daily: [Statistics]
        var deletion: Int

        init(_ store: HealthStore) throws {
            sources = try store.sources(type: .heartRate)
            devices = try store.devicesBySource()
            newest = try store.newestSampleEnd()?.end.timeIntervalSince1970
            count = try store.count(SampleQuery())
            // The range's edges at reading times, so a series' `end` decides what matches.
            counts = try [(0.0, 650.0), (650, 1e9), (700, 1e9), (699.5, 1e9)].map { lo, hi in
                try store.count(SampleQuery(type: .heartRate, start: Date(timeIntervalSince1970: t0 + lo),
                                            end: Date(timeIntervalSince1970: t0 + hi)))
            }
            samples = try store.samples(SampleQuery(type: .heartRate, start: Date(timeIntervalSince1970: t0 + 640)))
            lastTen = try store.samples(SampleQuery(type: .heartRate, sortBy: .endDate, ascending: false, limit: 10))
            daily = try store.statisticsCollection(StatisticsQuery(type: .heartRate, options: [.discreteAverage, .discreteMax, .mostRecent]),
                                                   interval: try StatisticsInterval(parsing: "1min"),
                                                   timeZone: TimeZone(identifier: "UTC")!)
            deletion = try store.deletionCount(matching: SampleQuery(type: .heartRate, start: Date(timeIntervalSince1970: t0 + 699)))
        }
    }

    static func tempPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("open-series-\(name)-\(UUID().uuidString)")
            .appendingPathComponent("health.sqlite").path
    }

    static func scalar(_ store: HealthStore, _ sql: String) throws -> Int {
        try store.withConnection { db in
            let st = try db.prepare(sql, cached: false)
            defer { st.reset() }
            return try st.step() ? st.int(0) : -1
        }
    }

    @Test("a series open mid-chunk reads as it does once closed and as rows: counts, ends, samples, statistics, sources, devices")
    func openSeriesReadsAsClosed() async throws {
        try await offThreadOneAtATime {
            let feed = try Feed()
            let open = try HealthStore(path: Self.tempPath("open"))
            let rows = try HealthStore(path: Self.tempPath("rows"))
            let sink = try StoreSink(store: open), rowSink = try StoreSink(store: rows, storage: .individual)
            // 701 s: each strap's heart rate fills two chunks of 300 and holds 101 in the open one.
            for s in 0...700 {
                let b = feed.batch(s)
                try b.withUnsafeBufferPointer { try sink.write($0, slots: feed.slots) }
                try b.withUnsafeBufferPointer { try rowSink.write($0, slots: feed.slots) }
            }
            // The rows hold the two full chunks only: the open chunk's readings are its own.
            let hrSeries = "FROM series WHERE type_id = (SELECT id FROM types WHERE identifier = 'heartRate')"
            #expect(try Self.scalar(open, "SELECT count(*) \(hrSeries) AND open = 1 AND pending_seq = 2 AND count = 600") == 2)
            #expect(try Self.scalar(open, "SELECT sum(\(SeriesTotalsSQL.count("series"))) \(hrSeries)") == 1402)
            let whileOpen = try Answers(open)
            #expect(whileOpen.count == 1402 + 70 && whileOpen.counts.dropFirst() == [102, 2, 2])
            let asRows = try Answers(rows)
            #expect(whileOpen.sources == asRows.sources)
            #expect(whileOpen.devices == asRows.devices)
            #expect(whileOpen.newest == asRows.newest)
            #expect(whileOpen.count == asRows.count && whileOpen.counts == asRows.counts)
            // Rows have UUIDs of their own, and a delete takes a series whole (1402), rows one by one.
            func content(_ s: [QuantitySample]) -> [String] { s.map { "\($0.startDate.timeIntervalSince1970) \($0.quantity.value) \($0.device?.name ?? "")" } }
            #expect(content(whileOpen.samples) == content(asRows.samples) && whileOpen.samples.count == 122)
            #expect(Set(content(whileOpen.lastTen)) == Set(content(asRows.lastTen)))
            #expect(whileOpen.daily == asRows.daily)
            #expect(whileOpen.deletion == 1402 && asRows.deletion == 4)
            // Closed: the rows are exact, and every answer stays.
            _ = try sink.finish()
            #expect(try Self.scalar(open, "SELECT count(*) \(hrSeries) AND open = 0 AND pending_seq IS NULL AND count = 701") == 2)
            #expect(try Answers(open) == whileOpen)
        }
    }

    @Test("the change feed finds an open series' growth by its open chunk, and the same anchors once it is closed")
    func changeFeedFollowsAnOpenSeries() async throws {
        try await offThreadOneAtATime {
            let feed = try Feed()
            let store = try HealthStore(path: Self.tempPath("feed"))
            let sink = try StoreSink(store: store)
            func write(_ range: ClosedRange<Int>) throws {
                for s in range { let b = feed.batch(s); try b.withUnsafeBufferPointer { try sink.write($0, slots: feed.slots) } }
            }
            try write(0...349)
            let first = try store.changes(types: [.heartRate], since: nil)
            #expect(first.samples.count == 700 && !first.hasMore)
            #expect(first.anchor == (try store.currentAnchor()))
            // Growth inside the open chunk (no row write): the feed sends the open chunk again,
            // whole, and nothing of the two sealed before the anchor.
            try write(350...399)
            let grown = try store.changes(types: [.heartRate], since: first.anchor)
            #expect(grown.samples.count == 2 * 100, "the open chunks, 300…399 of each strap")
            #expect(Set(grown.samples.compactMap(\.seriesIndex)) == Set(300..<400))
            let idle = try store.changes(types: [.heartRate], since: grown.anchor)
            #expect(idle.samples.isEmpty && idle.anchor == grown.anchor)
            // Paged by two: every quantity once, in position order, across the page cuts.
            var paged: [QuantitySample] = []
            var anchor = first.anchor
            for _ in 0..<500 {
                let page = try store.changes(types: [.heartRate], since: anchor, limit: 2)
                paged += page.samples
                anchor = page.anchor
                if !page.hasMore { break }
            }
            #expect(paged.count == grown.samples.count && anchor == grown.anchor)
            // Closing moves no position: the anchor before it is the anchor after it.
            _ = try sink.finish()
            #expect(try store.currentAnchor() == grown.anchor)
            #expect(try store.changes(types: [.heartRate], since: grown.anchor).samples.isEmpty)
        }
    }
}
