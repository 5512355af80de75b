import Foundation
import HealthGateTesting
import HealthModel
import Testing
@testable import HealthStore

/// Migration 9 and what statistics do with it (docs/queries.md "How statistics are computed"):
/// a rollup row says whether its samples' spans make one interval (`contiguous`), so a slot of
/// a lower-priority source that a higher one's contiguous slots cover whole counts nothing and
/// is not read, and only the higher source's rows that a decoded lower one needs are read, as
/// coverage. The numbers stay the oracle's.
@Suite("Rollup coverage: contiguous slots, covered slots unread, numbers unchanged")
struct RollupCoverageTests {
    static let phone = Source(name: "iPhone", identifier: "com.example.phone")
    static let watch = Source(name: "Watch", identifier: "com.example.watch")

    /// Every rollup row whose `contiguous` is set: (type, slot, source) and whether the union of
    /// its rows' closed spans really is one interval equal to its hull.
    static func contiguityClaims(_ store: HealthStore) throws -> [(slot: Int64, truth: Bool)] {
        try store.withConnection { db in
            let st = try db.prepare("SELECT type_id, slot, source_id, min_start, max_end FROM sample_rollups WHERE contiguous <> 0", cached: false)
            var claims: [(Int64, Int64, Int64, Double, Double)] = []
            while try st.step() { claims.append((st.int64(0), st.int64(1), st.int64(2), st.double(3), st.double(4))) }
            let rows = try db.prepare("""
                SELECT start, "end" FROM samples WHERE type_id = ? AND source_id = ? AND \(Rollups.slotSQL("start")) = ? ORDER BY start
                """, cached: false)
            return try claims.map { type, slot, source, lo, hi in
                rows.bind(1, type); rows.bind(2, source); rows.bind(3, slot)
                defer { rows.reset() }
                var reach = -Double.infinity, first = Double.infinity, ok = true
                while try rows.step() {
                    let (s, e) = (rows.double(0), rows.double(1))
                    if reach > -.infinity, s > reach { ok = false }
                    first = min(first, s)
                    reach = max(reach, e)
                }
                return (slot, ok && first == lo && reach == hi)
            }
        }
    }

    /// Per-minute steps of `source` from `from` for `minutes`, each one minute long.
    static func minutes(_ source: Source, from: Double, count minutes: Int, value: (Int) -> Double) throws -> [QuantitySample] {
        try (0..<minutes).map { m in
            try sample(.stepCount, value(m), from: from + Double(m) * 60, to: from + Double(m + 1) * 60, source: source)
        }
    }

    @Test("contiguous is set for gap-free slots and never claimed wrongly: saves, the bulk writer, out-of-order inserts, deletes")
    func contiguityIsSound() throws {
        let tmp = try TempStore()
        // Gap-free minutes (every slot one interval), then a slot with a hole, out-of-order
        // samples that bridge a gap (the union is one interval, found only by a recompute),
        // overlapping spans and instants.
        try tmp.store.save(try Self.minutes(Self.phone, from: 0, count: 120) { _ in 10 })
        try tmp.store.save([try sample(.stepCount, 1, from: 7200, to: 7260, source: Self.phone),
                            try sample(.stepCount, 1, from: 7400, to: 7460, source: Self.phone)])
        try tmp.store.save([try sample(.stepCount, 1, from: 9000, to: 9060, source: Self.phone),
                            try sample(.stepCount, 1, from: 9120, to: 9180, source: Self.phone),
                            try sample(.stepCount, 1, from: 9060, to: 9120, source: Self.phone),
                            try sample(.stepCount, 1, from: 9100, source: Self.phone)])
        let byTrigger = try Self.contiguityClaims(tmp.store)
        #expect(byTrigger.allSatisfy { $0.truth }, "\(byTrigger)")
        // The eight slots of the gap-free minutes are claimed (not only "never wrong").
        #expect(byTrigger.filter { $0.slot < Rollups.slot(t(7200).timeIntervalSince1970) }.count == 8)
        #expect(try scalar(tmp.store, "SELECT contiguous FROM sample_rollups WHERE slot = \(Rollups.slot(t(7200).timeIntervalSince1970))") == 0)

        // The bulk writer: a call's rows per slot, then upserted into slots that exist.
        let watchSlots = try tmp.store.write { w -> [Int64: Bool] in
            let type = try w.typeID(.stepCount), source = try w.sourceID(Self.watch)
            func call(_ rows: [(Double, Double)]) throws {
                try w.insertNew(count: rows.count) { i, binder in
                    binder.bind(SampleRow(typeID: type, sourceID: source, value: 5, start: t(rows[i].0).timeIntervalSince1970,
                                          end: t(rows[i].1).timeIntervalSince1970))
                }
            }
            let gapFree: [(Double, Double)] = (0..<90).map { k -> (Double, Double) in
                let s = Double(k) * 60 + 30
                return (s, s + 60)
            }
            try call(gapFree)                                                         // slots 0–5, gap-free
            try call([(5430, 5490), (5490, 5550), (6300, 6360)])                      // slots 6 and 7 begin
            try call([(5550, 5610), (6500, 6560)])                                    // 6 continues; 7 gets a hole
            let st = try w.connection.prepare("SELECT slot, contiguous FROM sample_rollups WHERE source_id = ? ORDER BY slot", cached: false)
            st.bind(1, source)
            var out: [Int64: Bool] = [:]
            while try st.step() { out[st.int64(0)] = st.int(1) != 0 }
            return out
        }
        let s0 = Rollups.slot(t(0).timeIntervalSince1970)
        #expect((0...6).allSatisfy { watchSlots[s0 + $0] == true }, "\(watchSlots)")
        #expect(watchSlots[s0 + 7] == false, "a slot the third call left a hole in")
        #expect(try Self.contiguityClaims(tmp.store).allSatisfy { $0.truth })

        // A delete recomputes the slot from its rows: a hole clears it.
        let all = try tmp.store.samples(SampleQuery(type: .stepCount, source: "com.example.phone"))
        _ = try tmp.store.delete(uuids: all.filter { $0.startDate == t(600) || $0.startDate == t(9100) }.map(\.uuid))
        #expect(try scalar(tmp.store, "SELECT contiguous FROM sample_rollups WHERE slot = \(s0) AND source_id = (SELECT id FROM sources WHERE identifier = 'com.example.phone')") == 0)
        #expect(try scalar(tmp.store, "SELECT count(*) FROM sample_rollups WHERE stale <> 0") == 0)
        #expect(try Self.contiguityClaims(tmp.store).allSatisfy { $0.truth })
    }

    /// A day of phone minutes (rank 2) and twelve hours of watch minutes (rank 1) from 08:00:30
    /// Berlin time: the watch covers the phone's 08:15–19:45 slots (47) whole.
    static func walkDay() throws -> TempStore {
        let tmp = try TempStore()
        try tmp.store.save(try Self.minutes(Self.phone, from: -3600, count: 1440) { 5 + Double($0 % 17) })
        try tmp.store.save(try Self.minutes(Self.watch, from: 7 * 3600 + 30, count: 720) { 3 + Double($0 % 13) })
        try tmp.store.setPriority(source: Self.watch.identifier, rank: 1)
        return tmp
    }

    @Test("a slot covered whole by a higher-priority source is not read; the edges are, with the coverage they need")
    func coveredSlotsAreNotRead() throws {
        let tmp = try Self.walkDay()
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let q = StatisticsQuery(type: .stepCount, options: [.cumulativeSum, .mostRecent])
        for interval in [StatisticsInterval.days(1), .hours(1), .minutes(15)] {
            let want = try tmp.store.statisticsCollection(q, interval: interval, timeZone: berlin, path: .loadAll)
            let work = StatisticsWork()
            let got = try tmp.store.statisticsCollection(q, interval: interval, timeZone: berlin, path: .streaming, work: work)
            StreamingStatisticsTests.expectSame(got, want, "\(interval)")
            // 47 phone slots (08:15–19:45) lie inside the watch's 08:00:30–20:00:30; the edge slots
            // are decoded: the phone's 08:00 and 20:00 slots (half a minute survives) and,
            // as their coverage, the watch's 08:00 and 19:45 slots — 60 rows, not the 1,440 of
            // the overlapped hours.
            #expect(work.rollupRowsCovered == 47, "\(interval): \(work.rollupRowsCovered) covered")
            // Day buckets hold every watch slot whole; hour and 15-minute buckets cut some of
            // them (a slot of 08:00:30–08:15:30 crosses 08:15), which are then decoded.
            if interval == .days(1) { #expect(work.rowsDecoded == 60, "\(work.rowsDecoded) rows decoded") }
        }
        // The merged sum: the phone's day minus what the watch covers, plus the watch's minutes.
        let total = try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: .cumulativeSum)).values.sum
        #expect(total == (try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: .cumulativeSum), path: .loadAll).values.sum))
    }

    @Test("a covered slot's rollup is never used: tampering with it changes nothing")
    func coveredRollupUnused() throws {
        let tmp = try Self.walkDay()
        let q = StatisticsQuery(type: .stepCount, options: .cumulativeSum)
        let want = try tmp.store.statistics(q, path: .loadAll).values.sum
        // A covered phone slot (12:00 Berlin = 11:00Z) and an answered watch slot (it counts).
        try RollupTests.tamper(tmp.store, slotOf: 11 * 3600, source: Self.phone.identifier)
        #expect(try tmp.store.statistics(q).values.sum == want)
        try RollupTests.tamper(tmp.store, slotOf: 11 * 3600, source: Self.watch.identifier)
        #expect(try tmp.store.statistics(q).values.sum == want.map { $0 + 1000 })
    }

    /// Strap-like streams: runs of contiguous samples (minutes, or seconds-long heart-rate
    /// spans, some instants) from up to three sources with gaps, offsets off the slot grid and
    /// runs that overlap another source's, around `base`.
    static func streams(_ rng: inout SplitMix64, type: QuantityType, values: ClosedRange<Int>, base: Date,
                        sources: [Source]) throws -> [QuantitySample] {
        var out: [QuantitySample] = []
        for source in sources {
            var t0 = Double(Int.random(in: -7200...7200, using: &rng)) + (Bool.random(using: &rng) ? 0 : Double.random(in: 0..<60, using: &rng))
            for _ in 0..<Int.random(in: 2...5, using: &rng) {
                let step = [60.0, 30, 300, 7.5][Int.random(in: 0..<4, using: &rng)]
                let count = Int.random(in: 5...180, using: &rng)
                for k in 0..<count {
                    let s = t0 + Double(k) * step
                    let instant = type != .stepCount && Int.random(in: 0..<10, using: &rng) == 0
                    let e = instant ? s : s + step
                    let v = Double(Int.random(in: values, using: &rng))
                    out.append(try QuantitySample(type: type, quantity: Quantity(v, type.canonicalUnit),
                                                  start: base.addingTimeInterval(s), end: base.addingTimeInterval(e), source: source))
                }
                // A gap (or none: the next run continues) before the next run.
                t0 += Double(count) * step + [0, 0, 60, 900, 3600][Int.random(in: 0..<5, using: &rng)]
            }
        }
        return out
    }

    @Test("random contiguous streams from overlapping sources, DST days, saved or bulk-written: streaming equals the oracle",
          arguments: Array(zip(1...12, (0..<12).map { StreamingStatisticsTests.zones[$0 % StreamingStatisticsTests.zones.count] })))
    func randomStreams(seed: Int, zone: (String, String)) async throws {
        try await offThreadOneAtATime {
            var rng = SplitMix64(seed: UInt64(seed) &* 0xD1B5_4A32_D192_ED03)
            let tz = try #require(TimeZone(identifier: zone.0))
            let base = try #require(ISO8601.date(zone.1))
            let (type, options, values) = StreamingStatisticsTests.types[seed % StreamingStatisticsTests.types.count]
            let sources = (0..<(seed % 2 == 0 ? 3 : 2)).map { Source(name: "S\($0)", identifier: "com.example.s\($0)") }
            let samples = try Self.streams(&rng, type: type, values: values, base: base, sources: sources)
            let tmp = try TempStore()
            if seed % 3 == 0 {
                // The bulk writer (the ingest and import path): rollups summed per slot per call.
                try tmp.store.write { w in
                    let typeID = try w.typeID(type)
                    var ids: [String: Int64] = [:]
                    for s in sources { ids[s.identifier] = try w.sourceID(s) }
                    for chunk in stride(from: 0, to: samples.count, by: 97) {
                        let part = Array(samples[chunk..<min(chunk + 97, samples.count)])
                        try w.insertNew(count: part.count) { i, binder in
                            binder.bind(SampleRow(typeID: typeID, sourceID: ids[part[i].source.identifier]!,
                                                  value: try part[i].quantity.doubleValue(for: type.canonicalUnit),
                                                  start: part[i].startDate.timeIntervalSince1970, end: part[i].endDate.timeIntervalSince1970))
                        }
                    }
                }
            } else {
                try tmp.store.save(samples.shuffled(using: &rng))
            }
            for (i, s) in sources.shuffled(using: &rng).enumerated() { try tmp.store.setPriority(source: s.identifier, rank: i + 1) }
            #expect(try Self.contiguityClaims(tmp.store).allSatisfy { $0.truth })
            try StreamingStatisticsTests.compareAll(tmp.store, type: type, options: options, base: base, zone: tz, rng: &rng,
                                                    what: "streams seed \(seed) \(zone.0)")
        }
    }

    @Test("a store of schema 8 migrates to 9: rollups rebuilt with contiguous, samples kept, statistics unchanged")
    func migrationFromSchema8() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("contiguity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("v8.sqlite").path
        let base = t(0).timeIntervalSince1970
        var rows: [String] = []
        for m in 0..<1440 { rows.append("(randomblob(16), 1, \(m % 37), \(base + Double(m) * 60), \(base + Double(m + 1) * 60), 2)") }
        for m in 0..<300 { rows.append("(randomblob(16), 1, \(m % 11), \(base + 28_830 + Double(m) * 60), \(base + 28_890 + Double(m) * 60), 1)") }
        // An instant before the watch's first span in its last slot: that slot is not one interval.
        rows.append("(randomblob(16), 1, 4, \(base + 45_905), \(base + 45_905), 1)")
        try sqliteExec(path, Schema.migrations.prefix(8).joined(separator: "\n") + """

            INSERT INTO types(id, identifier, unit, aggregation) VALUES (1, 'stepCount', 'count', 'cumulative');
            INSERT INTO sources(id, identifier, name, version, tier, rank, first_seen) VALUES
                (1, 'com.example.watch', 'Watch', NULL, 2, 1, 0), (2, 'com.example.phone', 'iPhone', NULL, 2, 2, 0);
            INSERT INTO samples(uuid, type_id, value, start, "end", source_id) VALUES \(rows.joined(separator: ",\n"));
            PRAGMA user_version = 8;
            """)
        let samples = SeriesMigrationTests.strings(path, CoveringIndexMigrationTests.samplesSQL)
        let rollups = SeriesMigrationTests.strings(path, CoveringIndexMigrationTests.rollupsSQL)

        let store = try HealthStore(path: path)
        #expect(try store.schemaVersion >= 9)
        #expect(SeriesMigrationTests.strings(path, CoveringIndexMigrationTests.samplesSQL) == samples)
        #expect(SeriesMigrationTests.strings(path, CoveringIndexMigrationTests.rollupsSQL) == rollups)
        #expect(SeriesMigrationTests.strings(path, "PRAGMA integrity_check") == ["ok"])
        // Every phone slot and every watch slot but the one with the instant is one interval.
        let claims = try Self.contiguityClaims(store)
        #expect(claims.allSatisfy { $0.truth })
        #expect(claims.count == rollups.count - 1, "\(claims.count) of \(rollups.count)")
        // The triggers the migration wrote keep it: a sample that leaves a hole clears it.
        try store.save([try sample(.stepCount, 1, from: 86_400 + 600, to: 86_460 + 600, source: Self.watch),
                        try sample(.stepCount, 1, from: 86_400, to: 86_460, source: Self.watch)])
        #expect(try scalar(store, "SELECT contiguous FROM sample_rollups WHERE slot = \(Rollups.slot(base + 86_400)) AND source_id = 1") == 0)

        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let q = StatisticsQuery(type: .stepCount, options: [.cumulativeSum, .mostRecent, .separateBySource])
        for interval in [StatisticsInterval.hours(1), .days(1), .minutes(15)] {
            let want = try store.statisticsCollection(q, interval: interval, timeZone: berlin, path: .loadAll)
            StreamingStatisticsTests.expectSame(try store.statisticsCollection(q, interval: interval, timeZone: berlin), want, "\(interval)")
        }
    }
}
