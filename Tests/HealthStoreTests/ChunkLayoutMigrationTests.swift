import CSQLite
import Foundation
import HealthModel
import Testing
@testable import HealthStore

/// Migration 6 (docs/store.md "Writes"): `series_chunks` from a WITHOUT ROWID table keyed by
/// (series_id, seq) to a rowid table in append order with a unique (series_id, seq) index. A
/// schema-5 store, written here as schema 5 wrote it (migrations 1–5 applied to an empty file,
/// then a series of 150 heart-rate quantities in two chunks through the schema-5 chunk upsert),
/// keeps every chunk row, quantity and anchor.
@Suite("Migration 5 → 6 (chunks in append order): every chunk, quantity and anchor kept")
struct ChunkLayoutMigrationTests {
    static let uuid = UUID(uuidString: "01A20B71-4E40-7001-ADFB-CFA7953A614F")!

    static func quantities() -> [SeriesQuantity] {
        (0..<150).map { k in
            let t = 1_790_000_000 + Double(k) + Double(k % 7) / 1000
            return SeriesQuantity(start: t, end: t, value: Double(60 + k % 40), attributes: 3, rr: k % 3 == 0 ? [] : [UInt16(700 + k), 690])
        }
    }

    static func schema5Store() throws -> (dir: URL, path: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("chunk-layout-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("v5.sqlite").path
        try sqliteExec(path, Schema.migrations.prefix(5).joined(separator: "\n") + """

            INSERT INTO types(id, identifier, unit, aggregation) VALUES (1, 'heartRate', 'count/min', 'discreteTemporallyWeighted');
            INSERT INTO sources(id, identifier, name, version, tier, rank, first_seen) VALUES (1, 'org.healthgate.ble', 'HealthGate BLE', NULL, 1, 1, 0);
            INSERT INTO series(id, uuid, type_id, source_id, device_id, sensor_location, start, "end", count, first_index, open, change_seq)
                VALUES (1, X'\(uuid.uuidString.replacingOccurrences(of: "-", with: ""))', 1, 1, NULL, 1, 1790000000, 1790000149.002, 150, 0, 0, 3);
            INSERT INTO sqlite_sequence(name, seq) VALUES ('samples', 3);
            PRAGMA user_version = 5;
            """)
        // The chunks through the schema-5 upsert (same columns by name).
        let db = try Connection(path: path)
        let q = quantities()
        try db.transaction {
            try SeriesChunkSQL.write(db, seriesID: 1, seq: 0, firstIndex: 0, quantities: Array(q[0..<120]), style: .discreteTemporallyWeighted, changeSeq: 2)
            try SeriesChunkSQL.write(db, seriesID: 1, seq: 1, firstIndex: 120, quantities: Array(q[120...]), style: .discreteTemporallyWeighted, changeSeq: 3)
        }
        return (dir, path)
    }

    static let rowsSQL = """
        SELECT series_id || '|' || seq || '|' || first_index || '|' || quote(start) || '|' || quote("end") || '|' || count || '|' ||
               quote(sum) || quote(min) || quote(max) || quote(weighted) || quote(weight) || quote(first) || quote(last) ||
               quote(recent) || quote(recent_start) || quote(recent_end) || '|' || change_seq || '|' || hex(data)
        FROM series_chunks ORDER BY series_id, seq
        """

    @Test("the chunks, the quantities and the anchor are the same; the table is in append order with a unique key")
    func keepsEverything() throws {
        let (dir, path) = try Self.schema5Store()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try sqliteInt(path, "PRAGMA user_version") == 5)
        let before = SeriesMigrationTests.strings(path, Self.rowsSQL)
        #expect(before.count == 2)
        #expect(SeriesMigrationTests.strings(path, "SELECT sql FROM sqlite_master WHERE name = 'series_chunks'").first?.contains("WITHOUT ROWID") == true)

        let store = try HealthStore(path: path)
        #expect(try store.schemaVersion >= 6)
        #expect(SeriesMigrationTests.strings(path, Self.rowsSQL) == before)
        let sql = SeriesMigrationTests.strings(path, "SELECT sql FROM sqlite_master WHERE name = 'series_chunks'").first ?? ""
        #expect(!sql.contains("WITHOUT ROWID") && sql.contains("id INTEGER PRIMARY KEY"))
        #expect(SeriesMigrationTests.strings(path, "SELECT name FROM pragma_index_list('series_chunks') WHERE \"unique\"") == ["series_chunks_key"])
        // In append order: the rowids follow the chunks' change positions.
        #expect(SeriesMigrationTests.strings(path, "SELECT seq FROM series_chunks ORDER BY id") == ["0", "1"])

        let got = try store.samples(SampleQuery(type: .heartRate))
        let q = Self.quantities()
        #expect(got.count == 150)
        for (k, s) in got.enumerated() {
            #expect(s.uuid == Self.uuid && s.seriesIndex == k)
            #expect(s.startDate.timeIntervalSince1970 == q[k].start && s.quantity.value == q[k].value)
            #expect((s.rrIntervals?.ticks ?? []) == q[k].rr && s.metadata.sensorContact == .detected)
        }
        let all = try store.changes(since: nil)
        #expect(all.anchor.sampleID == 3 && all.samples.count == 150)

        // The schema-5 upsert still finds its row by (series_id, seq): rewriting chunk 1 replaces it.
        try store.write { w in
            try SeriesChunkSQL.write(w.connection, seriesID: 1, seq: 1, firstIndex: 120, quantities: Array(q[120..<140]),
                                     style: .discreteTemporallyWeighted, changeSeq: 4)
        }
        #expect(try sqliteInt(path, "SELECT count(*) FROM series_chunks") == 2)
        #expect(try sqliteInt(path, "SELECT count FROM series_chunks WHERE seq = 1") == 20)
        // A delete of the series still takes its chunks (the foreign key's cascade).
        _ = try store.delete(uuids: [Self.uuid])
        #expect(try sqliteInt(path, "SELECT count(*) FROM series_chunks") == 0)
    }
}
