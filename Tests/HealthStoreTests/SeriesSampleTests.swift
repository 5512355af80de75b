import Foundation
import HealthGateTesting
import HealthModel
import Testing
@testable import HealthStore

/// Quantity series as samples (issue #12, docs/store.md "Quantity series"): how `samples`
/// identifies their quantities, delete, the change feed's growth, export → import.
@Suite struct SeriesSampleTests {
    static let strap = Source(name: "HealthGate BLE", identifier: "org.healthgate.ble")
    static let device = Device(name: "Strap A", manufacturer: "Acme", localIdentifier: "AA:01")

    /// Appends readings at `times` (value = 60 + i) to the strap's series in one transaction
    /// (one ingest batch).
    static func append(_ store: HealthStore, _ writer: SeriesWriter, times: [Double], rr: [UInt16] = [],
                       contact: SensorContact? = .detected, location: HeartRateSensorLocation? = .chest) throws {
        try store.write { w in
            let key = SeriesWriter.Key(typeID: try w.typeID(.heartRate), sourceID: try w.sourceID(strap), deviceID: try w.deviceID(device))
            for (i, t) in times.enumerated() {
                try rr.withUnsafeBufferPointer { rr in
                    try writer.append(w, key: key, style: .discreteTemporallyWeighted, sensorLocation: location, start: t, end: t,
                                      value: Double(60 + i % 100), contact: contact, flags: i % 7 == 0 ? .rrPrecededByGap : [], rr: rr)
                }
            }
            try writer.flush(w)
        }
    }

    @Test("samples lists every quantity with the series' UUID and its index; JSON says \"series\": {\"index\": n}")
    func identity() throws {
        let tmp = try TempStore()
        let writer = SeriesWriter()
        try Self.append(tmp.store, writer, times: (0..<5).map { 1_790_000_000 + Double($0) }, rr: [800, 810])
        try tmp.store.save([try sample(.heartRate, 99, from: 0)])   // an individually stored one beside it
        let hr = try tmp.store.samples(SampleQuery(type: .heartRate, start: Date(timeIntervalSince1970: 1_700_000_000)))
        let series = hr.filter { $0.seriesIndex != nil }
        #expect(series.count == 5)
        #expect(Set(series.map(\.uuid)).count == 1)
        #expect(series.map(\.seriesIndex) == [0, 1, 2, 3, 4])
        let first = try #require(series.first)
        #expect(first.metadata.heartRateSensorLocation == .chest && first.metadata.sensorContact == .detected)
        #expect(first.rrIntervals == RRIntervals(ticks: [800, 810], precededByGap: true))
        #expect(first.device == Self.device && first.source == Self.strap)
        let json = try SampleJSON.object(series[3])
        #expect((json["series"] as? [String: Any])?["index"] as? Int == 3)
        #expect(json["uuid"] as? String == first.uuid.uuidString.lowercased())
        #expect(try SampleJSON.object(hr.first { $0.seriesIndex == nil }!)["series"] == nil)
        // Asking by the series' UUID gives all its quantities.
        #expect(try tmp.store.samples(SampleQuery(uuids: [first.uuid])).count == 5)
        #expect(try tmp.store.count(SampleQuery(uuids: [first.uuid])) == 5)
    }

    @Test("deleting a series' UUID removes it whole and leaves one tombstone; delete by a filter takes whole series")
    func deleteWhole() throws {
        let tmp = try TempStore()
        let writer = SeriesWriter()
        try Self.append(tmp.store, writer, times: (0..<300).map { 1_790_000_000 + Double($0) })
        let uuid = try #require(try tmp.store.samples(SampleQuery(limit: 1)).first?.uuid)
        let anchor = try tmp.store.currentAnchor()
        #expect(try tmp.store.delete(uuids: [uuid]) == 300)
        #expect(try tmp.store.samples(SampleQuery()).isEmpty)
        #expect(try scalar(tmp.store, "SELECT count(*) FROM series_chunks") == 0)
        let changes = try tmp.store.changes(since: anchor)
        #expect(changes.deleted.map(\.uuid) == [uuid])
        #expect(changes.deleted.first?.typeIdentifier == "heartRate")
        // The series was still open: the writer's next readings start a new series.
        try Self.append(tmp.store, writer, times: [1_790_000_300, 1_790_000_301])
        let after = try tmp.store.samples(SampleQuery())
        #expect(after.map(\.seriesIndex) == [0, 1] && after.allSatisfy { $0.uuid != uuid } && Set(after.map(\.uuid)).count == 1)
        try tmp.store.delete(uuids: [after[0].uuid])

        // A filter that reaches one quantity of a series deletes that series whole (HealthKit
        // deletes objects); an individual sample outside the range stays.
        let writer2 = SeriesWriter()
        try Self.append(tmp.store, writer2, times: (0..<10).map { 1_790_000_000 + Double($0) })
        try Self.append(tmp.store, writer2, times: (0..<10).map { 1_790_001_000 + Double($0) })   // after a gap: a second series
        try tmp.store.save([try sample(.heartRate, 99, from: 0)])
        #expect(Set(try tmp.store.samples(SampleQuery(start: Date(timeIntervalSince1970: 1_790_000_000))).map(\.uuid)).count == 3)
        let removed = try tmp.store.delete(matching: SampleQuery(type: .heartRate, start: Date(timeIntervalSince1970: 1_790_000_008.5),
                                                                  end: Date(timeIntervalSince1970: 1_790_000_100)))
        #expect(removed == 10)
        #expect(try tmp.store.samples(SampleQuery(type: .heartRate)).count == 11)
        // With a limit, quantities count toward it in the query's order.
        #expect(try tmp.store.delete(matching: SampleQuery(type: .heartRate, sortBy: .startDate, ascending: true, limit: 1)) == 10)
        #expect(try tmp.store.samples(SampleQuery(type: .heartRate)).count == 1)
    }

    @Test("the change feed reports a created and a grown series with the quantities written since the anchor; a replica keyed by (uuid, index) equals the store")
    func changeFeedGrowth() throws {
        let tmp = try TempStore()
        let writer = SeriesWriter()
        var replica: [String: QuantitySample] = [:]
        func key(_ s: QuantitySample) -> String { "\(s.uuid)/\(s.seriesIndex.map(String.init) ?? "-")" }
        var anchor: ChangeAnchor?
        func sync(limit: Int?) throws {
            while true {
                let page = try tmp.store.changes(since: anchor, limit: limit)
                for d in page.deleted { replica = replica.filter { $0.value.uuid != d.uuid } }
                for s in page.samples { replica[key(s)] = s }
                anchor = page.anchor
                if !page.hasMore { break }
            }
        }
        var t = 1_790_000_000.0
        for round in 0..<40 {
            let n = 1 + round % 5
            try Self.append(tmp.store, writer, times: (0..<n).map { t + Double($0) })
            t += Double(n)
            if round % 9 == 8 { t += 120 }   // a silence: the next readings open a new series
            if round % 4 == 0 { try tmp.store.save([try sample(.heartRate, 50 + Double(round), from: Double(round))]) }
            if round == 20 {
                let victim = try #require(try tmp.store.samples(SampleQuery(limit: 1)).first)
                try tmp.store.delete(uuids: [victim.uuid])
            }
            let before = try tmp.store.currentAnchor()
            try sync(limit: [nil, 1, 2, 3, 50][round % 5])
            #expect(anchor == before)
            let all = try tmp.store.samples(SampleQuery())
            #expect(Set(replica.keys) == Set(all.map(key)), "round \(round)")
            #expect(replica.count == all.count)
        }
        // Growth re-sends only the chunks written since the anchor, not the whole series.
        let grownFrom = try tmp.store.currentAnchor()
        try Self.append(tmp.store, writer, times: [t + 1])
        let grown = try tmp.store.changes(since: grownFrom)
        #expect(grown.samples.count <= SeriesWriter.chunkQuantities && grown.samples.contains { $0.startDate.timeIntervalSince1970 == t + 1 })
        #expect(Set(grown.samples.map(\.uuid)).count == 1)
    }

    @Test("export → import round-trips series: same JSON (UUIDs and indices), a second import adds nothing")
    func exportImport() throws {
        let tmp = try TempStore()
        let writer = SeriesWriter()
        // Clock steps backwards and duplicate times: export order (by start) is not index order.
        try Self.append(tmp.store, writer, times: [1_790_000_000, 1_790_000_001, 1_789_999_999.5, 1_790_000_001, 1_790_000_002.125], rr: [1024])
        try Self.append(tmp.store, writer, times: (0..<200).map { 1_790_000_003 + Double($0) * 0.5 }, contact: .notSupported)
        try tmp.store.save([try sample(.stepCount, 12, from: 0, to: 60)])
        let lines = try tmp.store.samples(SampleQuery()).map { s -> String in
            let data = try JSONSerialization.data(withJSONObject: try SampleJSON.object(s), options: [.sortedKeys])
            return String(decoding: data, as: UTF8.self)
        }
        let other = try TempStore()
        // In batches, as import saves them.
        var parsed = try lines.map { try SampleJSON.sample(fromLine: $0) }
        let summary1 = try other.store.save(Array(parsed.prefix(70)))
        let summary2 = try other.store.save(Array(parsed.dropFirst(70)))
        #expect(summary1.inserted + summary2.inserted == lines.count)
        let back = try other.store.samples(SampleQuery()).map { s -> String in
            String(decoding: try JSONSerialization.data(withJSONObject: try SampleJSON.object(s), options: [.sortedKeys]), as: UTF8.self)
        }
        #expect(back == lines)
        parsed.shuffle()
        let again = try other.store.save(parsed)
        #expect(again.inserted == 0 && again.duplicates == lines.count)
        #expect(try other.store.samples(SampleQuery()).count == lines.count)
    }

    @Test("the CLI: replay stores strap heart rate as series; export → import into a new store → export is the same file; a second import adds nothing")
    func cliRoundTrip() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        // The repository's strap capture (300 notifications at 1 Hz with RR), from the package root.
        let capture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/strap-session.capture.jsonl").path
        let replay = try cli.run(["replay", capture, "--max"])
        #expect(replay.code == 0, "\(replay.err)")
        let exported = try cli.run(["export", "--format", "jsonl"])
        #expect(exported.code == 0, "\(exported.err)")
        let lines = exported.out.split(separator: "\n")
        #expect(lines.filter { $0.contains(#""series":{"index":"#) }.count >= 290, "heart rate exported as series quantities")
        let file = try cli.write("export.jsonl", exported.out)
        let other = cli.dir.appendingPathComponent("other.sqlite").path
        let imported = try HealthGateExecutable.run(["import", "--jsonl", file, "--db", other, "--json"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let again = try HealthGateExecutable.run(["export", "--format", "jsonl", "--db", other])
        #expect(again.stdout == exported.out)
        let second = try HealthGateExecutable.run(["import", "--jsonl", file, "--db", other, "--json"])
        #expect(second.status == 0 && second.stdout.contains(#""inserted":0"#), "\(second.stdout)")
        #expect(try HealthGateExecutable.run(["export", "--format", "jsonl", "--db", other]).stdout == exported.out)
    }

    @Test("import refuses series quantities that cannot be one series, in one sentence")
    func importRefusals() throws {
        let tmp = try TempStore()
        let u = UUID.timeOrdered()
        func q(_ i: Int, value: Double = 70, source: Source = Self.strap, meta: Metadata = Metadata()) throws -> QuantitySample {
            try sample(.heartRate, value, from: Double(i), source: source, metadata: meta, uuid: u).inSeries(index: i)
        }
        // Two sources under one series UUID.
        #expect(throws: StoreError.self) { try tmp.store.save([try q(0), try q(1, source: Source(name: "Other"))]) }
        // Metadata a series quantity cannot hold.
        #expect(throws: StoreError.self) { try tmp.store.save([try q(0, meta: Metadata(wasUserEntered: true))]) }
        #expect(try tmp.store.samples(SampleQuery()).isEmpty)
        // A part of a series (an export with a time range) is stored from its first index on and continued later.
        #expect(try tmp.store.save([try q(3), try q(4)]).inserted == 2)
        #expect(try tmp.store.save([try q(4), try q(5)]).inserted == 1)
        #expect(try tmp.store.samples(SampleQuery()).map(\.seriesIndex) == [3, 4, 5])
        // A JSON line with "series" but without the series' UUID.
        #expect(throws: SampleJSON.DecodeError.self) {
            _ = try SampleJSON.sample(fromLine: #"{"type":"heartRate","value":70,"start":"2026-11-02T00:00:00Z","series":{"index":0}}"#)
        }
        #expect(throws: SampleJSON.DecodeError.self) {
            _ = try SampleJSON.sample(fromLine: #"{"uuid":"\#(u.uuidString)","type":"heartRate","value":70,"start":"2026-11-02T00:00:00Z","series":{"index":-1}}"#)
        }
    }
    @Test("import takes the series quantities it is given: index gaps, parts before, between and after the stored ones; each keeps its index")
    func importGaps() throws {
        let tmp = try TempStore()
        let u = UUID.timeOrdered()
        func q(_ i: Int) throws -> QuantitySample {
            try sample(.heartRate, Double(60 + i), from: Double(i), source: Self.strap, uuid: u).inSeries(index: i)
        }
        func indices() throws -> [Int?] { try tmp.store.samples(SampleQuery()).map(\.seriesIndex) }
        // A gap inside one import (a line dropped from an export): stored, one chunk per run of indices.
        #expect(try tmp.store.save([try q(3), try q(4), try q(6), try q(7), try q(8)]).inserted == 5)
        #expect(try indices() == [3, 4, 6, 7, 8])
        #expect(try scalar(tmp.store, "SELECT count(*) FROM series_chunks") == 2)
        #expect(try scalar(tmp.store, "SELECT first_index FROM series") == 3)
        // Before the stored part, into its gap, after it with a gap: all added; what is stored is a duplicate.
        let more = try tmp.store.save([try q(0), try q(5), try q(6), try q(11)])
        #expect(more.inserted == 3 && more.duplicates == 1)
        #expect(try indices() == [0, 3, 4, 5, 6, 7, 8, 11])
        #expect(try scalar(tmp.store, "SELECT first_index FROM series") == 0)
        #expect(try scalar(tmp.store, "SELECT count FROM series") == 8)
        // Still one series: its UUID names every quantity, each with its own value and date.
        let all = try tmp.store.samples(SampleQuery(uuids: [u]))
        #expect(all.count == 8 && all.allSatisfy { $0.quantity.value == Double(60 + $0.seriesIndex!) })
        #expect(all.allSatisfy { $0.startDate == t(Double($0.seriesIndex!)) })
        let stats = try tmp.store.statistics(StatisticsQuery(type: .heartRate, options: [.discreteMin, .discreteMax]))
        #expect(stats.values.sampleCount == 8 && stats.values.minimum == 60 && stats.values.maximum == 71)
        // Chunks now lie out of index and time order (the gap filled last): collections still
        // equal the all-rows oracle's.
        let q = StatisticsQuery(type: .heartRate, options: [.discreteAverage, .discreteMin, .discreteMax, .mostRecent])
        for interval in [StatisticsInterval.minutes(1), .hours(1)] {
            let utc = TimeZone(identifier: "UTC")!
            #expect(try tmp.store.statisticsCollection(q, interval: interval, timeZone: utc)
                    == tmp.store.statisticsCollection(q, interval: interval, timeZone: utc, path: .loadAll))
        }
        // Saving the same again adds nothing.
        #expect(try tmp.store.save(all).duplicates == 8)
    }

    @Test("a series its writer still has open is only continued in order by import")
    func importIntoOpenSeries() throws {
        let tmp = try TempStore()
        try Self.append(tmp.store, SeriesWriter(), times: (0..<3).map { 1_790_000_000 + Double($0) })
        let stored = try tmp.store.samples(SampleQuery())
        let u = try #require(stored.first?.uuid)
        func q(_ i: Int) throws -> QuantitySample {
            try sample(.heartRate, 70, from: Double(i), source: Self.strap, device: Self.device,
                       metadata: Metadata(heartRateSensorLocation: .chest), uuid: u).inSeries(index: i)
        }
        do {
            try tmp.store.save([try q(5)])
            Issue.record("a gap in an open series was accepted")
        } catch let e as StoreError {
            #expect(e.kind == .data && !e.description.contains("\n") && e.description.contains("still open"))
        }
        #expect(try tmp.store.save([try q(2), try q(3)]).inserted == 1)
        #expect(try tmp.store.samples(SampleQuery()).map(\.seriesIndex) == [0, 1, 2, 3])
    }

    @Test("the CLI: an export with a series line taken out imports (exit 0) and exports back the same lines")
    func cliImportWithGap() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let capture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/strap-session.capture.jsonl").path
        #expect(try cli.run(["replay", capture, "--max"]).code == 0)
        let exported = try cli.run(["export", "--format", "jsonl"]).out
        var lines = exported.split(separator: "\n").map(String.init)
        let series = lines.indices.filter { lines[$0].contains(#""series":{"index":"#) }
        try #require(series.count > 20)
        lines.remove(at: series[10])   // quantity 10 of the strap's series
        let file = try cli.write("gap.jsonl", lines.joined(separator: "\n") + "\n")
        let other = cli.dir.appendingPathComponent("other.sqlite").path
        let imported = try HealthGateExecutable.run(["import", "--jsonl", file, "--db", other])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try HealthGateExecutable.run(["export", "--format", "jsonl", "--db", other]).stdout == lines.joined(separator: "\n") + "\n")
    }
}
