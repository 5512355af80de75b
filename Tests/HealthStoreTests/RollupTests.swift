import CSQLite
import Foundation
import HealthModel
import Testing
@testable import HealthStore

/// The per-source 15-minute rollups (Statistics/Rollups.swift): kept right by every write path,
/// backfilled by the migration, and used by statistics exactly where the rules allow.
@Suite("Sample rollups: maintenance, migration, and where statistics use them")
struct RollupTests {
    /// Every rollup row, as text, for comparison.
    static func rollups(_ store: HealthStore) throws -> [String] {
        try store.withConnection { db in
            let st = try db.prepare("SELECT \(Rollups.columns) FROM sample_rollups ORDER BY type_id, slot, source_id", cached: false)
            var out: [String] = []
            while try st.step() {
                out.append((0..<17).map { st.isNull(Int32($0)) ? "null" : "\(st.double(Int32($0)))" }.joined(separator: " "))
            }
            return out
        }
    }

    /// The rollups rebuilt from the rows alone.
    static func rebuilt(_ store: HealthStore) throws -> [String] {
        try store.withConnection { db in
            try db.transaction {
                try db.execute("DELETE FROM sample_rollups")
                try db.execute(Rollups.rebuildSQL(where: "1"))
            }
        }
        return try rollups(store)
    }

    @Test("rollups equal a rebuild from the rows after saves, the bulk writer, sync replacements and deletes")
    func maintainedByEveryWritePath() throws {
        let tmp = try TempStore()
        let a = Source(name: "A", identifier: "com.example.a"), b = Source(name: "B", identifier: "com.example.b")
        var samples: [QuantitySample] = []
        for i in 0..<300 {
            let start = Double(i * 37 % 7000) + (i % 3 == 0 ? 0.5 : 0)
            samples.append(try sample(.heartRate, Double(50 + i % 90), from: start, to: i % 4 == 0 ? start : start + Double(i % 50),
                                      source: i % 2 == 0 ? a : b))
        }
        try tmp.store.save(samples)
        // The bulk writer (the ingest path).
        try tmp.store.write { w in
            let type = try w.typeID(.heartRate), source = try w.sourceID(a)
            try w.insertNew(count: 120) { i, binder in
                binder.bind(SampleRow(typeID: type, sourceID: source, value: Double(60 + i % 30),
                                      start: t(Double(i) * 1.5).timeIntervalSince1970, end: t(Double(i) * 1.5).timeIntervalSince1970))
            }
        }
        // Sync-identifier replacement (delete + insert inside the writer).
        var m = Metadata(); m.syncIdentifier = "x"; m.syncVersion = 1
        try tmp.store.save([try sample(.heartRate, 70, from: 100, to: 160, metadata: m)])
        m.syncVersion = 2
        try tmp.store.save([try sample(.heartRate, 80, from: 2000, to: 2100, metadata: m)])
        // Deletes by UUID and by predicate.
        _ = try tmp.store.delete(uuids: samples.enumerated().filter { $0.offset % 5 == 0 }.map(\.element.uuid))
        _ = try tmp.store.delete(matching: SampleQuery(type: .heartRate, start: t(3000), end: t(3600)))
        let kept = try Self.rollups(tmp.store)
        #expect(!kept.isEmpty)
        #expect(try scalar(tmp.store, "SELECT count(*) FROM sample_rollups WHERE stale <> 0") == 0)
        #expect(try scalar(tmp.store, "SELECT sum(count) FROM sample_rollups") == scalar(tmp.store, "SELECT count(*) FROM samples"))
        #expect(kept == (try Self.rebuilt(tmp.store)))
    }

    @Test("the bulk writer sums a call per slot; a call that fails half way leaves rollups equal to its rows")
    func bulkWriterBatches() throws {
        let tmp = try TempStore()
        let a = Source(name: "A", identifier: "com.example.a"), b = Source(name: "B", identifier: "com.example.b")
        try tmp.store.save([try sample(.heartRate, 70, from: 10, source: a), try sample(.heartRate, 71, from: 10, source: a)])
        func rows(_ w: StoreWriter, count: Int, from: Double, failAt: Int? = nil) throws {
            let type = try w.typeID(.heartRate), sa = try w.sourceID(a), sb = try w.sourceID(b)
            try w.insertNew(count: count) { i, binder in
                if i == failAt { throw StoreError.invalidQuery("row \(i) refused") }
                // Two sources interleaved, instants and spans, equal ends (the later row is the most recent).
                let t = from + Double(i / 2) * 7
                binder.bind(SampleRow(typeID: type, sourceID: i % 2 == 0 ? sa : sb, value: Double(50 + i % 60),
                                      start: t, end: i % 3 == 0 ? t : t + 30))
            }
        }
        try tmp.store.write { w in try rows(w, count: 1234, from: t(0).timeIntervalSince1970) }
        #expect(try scalar(tmp.store, "SELECT deferred FROM rollup_control") == 0)
        #expect(try Self.rollups(tmp.store) == (try Self.rebuilt(tmp.store)))
        // A row that throws after two full statements: the caller keeps what was inserted.
        try tmp.store.write { w in
            do { try rows(w, count: 500, from: t(3000).timeIntervalSince1970, failAt: 120) } catch {}
        }
        #expect(try scalar(tmp.store, "SELECT count(*) FROM samples") == 2 + 1234 + 100)
        #expect(try scalar(tmp.store, "SELECT deferred FROM rollup_control") == 0)
        #expect(try Self.rollups(tmp.store) == (try Self.rebuilt(tmp.store)))
        // And the single-row path still goes through the trigger.
        try tmp.store.save([try sample(.heartRate, 99, from: 20_000, source: b)])
        #expect(try Self.rollups(tmp.store) == (try Self.rebuilt(tmp.store)))
    }

    @Test("a store of schema 3 migrates to 4: the bulk writer's rollups from then on match the rows")
    func migrationFromSchema3() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rollup-migration3-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("old.sqlite").path
        try sqliteExec(path, Schema.migrations[0] + Schema.migrations[1] + Schema.migrations[2] + """
            PRAGMA user_version = 3;
            INSERT INTO types(id, identifier, unit, aggregation) VALUES (1, 'heartRate', 'count/min', 'discreteTemporallyWeighted');
            INSERT INTO sources(id, identifier, name, tier, rank, first_seen) VALUES (1, 'com.example.a', 'A', 2, 1, 0);
            INSERT INTO samples(uuid, type_id, value, start, "end", source_id) VALUES
                (randomblob(16), 1, 60, 1793577600, 1793577600, 1), (randomblob(16), 1, 65, 1793577601, 1793577601, 1);
            """)
        let store = try HealthStore(path: path)
        #expect(try store.schemaVersion == Schema.version)
        #expect(try scalar(store, "SELECT sum(count) FROM sample_rollups") == 2)
        try store.write { w in
            let type = try w.typeID(.heartRate), s = try w.sourceID(Source(name: "A", identifier: "com.example.a"))
            try w.insertNew(count: 60) { i, b in
                b.bind(SampleRow(typeID: type, sourceID: s, value: Double(70 + i % 5), start: 1_793_577_602 + Double(i), end: 1_793_577_602 + Double(i)))
            }
        }
        #expect(try scalar(store, "SELECT sum(count) FROM sample_rollups") == 62)
        #expect(try Self.rollups(store) == (try Self.rebuilt(store)))
    }

    @Test("deleting every sample of a slot removes its rollup row")
    func emptySlotDropped() throws {
        let tmp = try TempStore()
        let s = try sample(.stepCount, 10, from: 60, to: 120)
        try tmp.store.save([s, try sample(.stepCount, 4, from: 5000, to: 5060)])
        _ = try tmp.store.delete(uuids: [s.uuid])
        #expect(try scalar(tmp.store, "SELECT count(*) FROM sample_rollups") == 1)
    }

    /// Tampers with one slot's rollup so a use of it shows in the result.
    static func tamper(_ store: HealthStore, slotOf time: Double, source: String) throws {
        _ = try store.withConnection { db in
            let st = try db.prepare("""
                UPDATE sample_rollups SET sum = sum + 1000 WHERE slot = ? AND source_id = (SELECT id FROM sources WHERE identifier = ?)
                """, cached: false)
            st.bind(1, Rollups.slot(t(time).timeIntervalSince1970)); st.bind(2, source)
            try st.run()
            #expect(db.changes == 1)
        }
    }

    @Test("an isolated slot inside one bucket is answered from its rollup")
    func isolatedSlotUsesRollup() throws {
        let tmp = try TempStore()
        let a = Source(name: "A", identifier: "com.example.a")
        try tmp.store.save([try sample(.stepCount, 10, from: 60, to: 120, source: a)])
        try Self.tamper(tmp.store, slotOf: 60, source: "com.example.a")
        let q = StatisticsQuery(type: .stepCount, options: .cumulativeSum, start: t(0), end: t(3600))
        // Proof the rollup is what answers (the oracle reads rows).
        #expect(try tmp.store.statistics(q).values.sum == 1010)
        #expect(try tmp.store.statistics(q, path: .loadAll).values.sum == 10)
        #expect(try tmp.store.statistics(q, path: .streamingRowsOnly).values.sum == 10)
    }

    @Test("a slot meeting another source's sample, crossing a bucket edge, partly outside the range, or stale is decoded",
          arguments: ["overlap", "touch", "bucket", "range", "instantAtEdge", "stale"])
    func decodedSlots(reason: String) throws {
        let tmp = try TempStore()
        let a = Source(name: "A", identifier: "com.example.a"), b = Source(name: "B", identifier: "com.example.b")
        var q = StatisticsQuery(type: .stepCount, options: .cumulativeSum, start: t(0), end: t(3600))
        var interval = StatisticsInterval.hours(1)
        switch reason {
        case "overlap":   // B's sample (in the next slot) reaches back into A's span
            try tmp.store.save([try sample(.stepCount, 10, from: 60, to: 120, source: a),
                                try sample(.stepCount, 6, from: 100, to: 1000, source: b)])
        case "touch":     // an instant of B exactly at the end of A's span (closed intervals meet)
            try tmp.store.save([try sample(.stepCount, 10, from: 60, to: 120, source: a),
                                try sample(.stepCount, 6, from: 120, source: b)])
        case "bucket":    // 10-minute buckets: the span crosses 00:10
            try tmp.store.save([try sample(.stepCount, 10, from: 300, to: 900, source: a)])
            interval = .minutes(10)
        case "range":     // the range starts inside the span
            try tmp.store.save([try sample(.stepCount, 10, from: 60, to: 120, source: a)])
            q.start = t(90)
        case "instantAtEdge":   // an instant at the bucket's end belongs to the next bucket
            try tmp.store.save([try sample(.stepCount, 10, from: 600, source: a), try sample(.stepCount, 1, from: 0, to: 60, source: a)])
            interval = .minutes(10)
        default:          // stale: a delete outside the store's write path
            try tmp.store.save([try sample(.stepCount, 10, from: 60, to: 120, source: a),
                                try sample(.stepCount, 6, from: 200, to: 300, source: a)])
            _ = try tmp.store.withConnection { db in try db.prepare("DELETE FROM samples WHERE start = \(t(200).timeIntervalSince1970)", cached: false).run() }
        }
        let want = try tmp.store.statisticsCollection(q, interval: interval, timeZone: TimeZone(identifier: "UTC")!, path: .loadAll)
        let slot = reason == "bucket" ? 300.0 : reason == "instantAtEdge" ? 600 : 60
        try Self.tamper(tmp.store, slotOf: slot, source: "com.example.a")
        let got = try tmp.store.statisticsCollection(q, interval: interval, timeZone: TimeZone(identifier: "UTC")!)
        #expect(got.map(\.values.sum) == want.map(\.values.sum))
    }

    @Test("a store of schema 2 migrates once: every sample rolled up, statistics unchanged")
    func migrationFromSchema2() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rollup-migration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("old.sqlite").path
        // What today's code made before this migration: migrations 1 and 2, then samples.
        try sqliteExec(path, Schema.migrations[0] + Schema.migrations[1] + """
            PRAGMA user_version = 2;
            INSERT INTO types(id, identifier, unit, aggregation) VALUES (1, 'stepCount', 'count', 'cumulative');
            INSERT INTO sources(id, identifier, name, tier, rank, first_seen) VALUES (1, 'com.example.a', 'A', 2, 1, 0), (2, 'com.example.b', 'B', 2, 2, 0);
            """)
        var rows: [String] = []
        for i in 0..<400 {
            let start = 1_793_577_600.0 + Double(i) * 60 + (i % 7 == 0 ? -30 : 0)
            rows.append("(randomblob(16), 1, \(i % 13), \(start), \(start + 60), \(1 + i % 2))")
        }
        try sqliteExec(path, "INSERT INTO samples(uuid, type_id, value, start, \"end\", source_id) VALUES " + rows.joined(separator: ",") + ";")
        try sqliteExec(path, "DELETE FROM samples WHERE id % 10 = 3;")   // tombstones, as a real store has
        let tombstones = try sqliteInt(path, "SELECT count(*) FROM deleted_samples")
        let store = try HealthStore(path: path)
        #expect(try store.schemaVersion == Schema.version)
        #expect(try scalar(store, "SELECT count(*) FROM samples") == 360)
        #expect(try scalar(store, "SELECT count(*) FROM deleted_samples") == tombstones)
        #expect(try scalar(store, "SELECT sum(count) FROM sample_rollups") == 360)
        let backfilled = try Self.rollups(store)
        #expect(backfilled == (try Self.rebuilt(store)))
        let q = StatisticsQuery(type: .stepCount, options: [.cumulativeSum, .mostRecent, .separateBySource])
        let utc = try #require(TimeZone(identifier: "UTC"))
        let want = try store.statisticsCollection(q, interval: .minutes(15), timeZone: utc, path: .loadAll)
        let got = try store.statisticsCollection(q, interval: .minutes(15), timeZone: utc)
        StreamingStatisticsTests.expectSame(got, want, "migrated store")
    }
}
