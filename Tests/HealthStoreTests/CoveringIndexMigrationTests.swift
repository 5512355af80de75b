import Foundation
import HealthModel
import Testing
@testable import HealthStore

/// Migration 8 (docs/queries.md "How statistics are computed"): `samples_type_start` becomes
/// covering — (type, start, end, value, source) — so the rows statistics decode are read from
/// the index alone. A schema-7 store, written here as schema 7 wrote it (migrations 1–7 applied
/// to an empty file, samples inserted by SQL, the rollup triggers keeping their slots), keeps
/// every sample, rollup and anchor, and its statistics equal the load-everything oracle.
@Suite("Migration 7 → 8 (covering start index): every sample kept, statistics read the index alone")
struct CoveringIndexMigrationTests {
    static let base = 1_790_035_200.0   // 2026-09-22T00:00:00Z

    static func schema7Store() throws -> (dir: URL, path: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("covering-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("v7.sqlite").path
        // A phone's minutes over a day and a watch's overlapping them by half a minute for two
        // hours (the merge decides there), plus an instant and a span across midnight.
        var rows: [String] = []
        for m in 0..<1440 {
            let t = base + Double(m) * 60
            rows.append("(randomblob(16), 1, \(m % 37), \(t), \(t + 60), 2)")
        }
        for m in 0..<120 {
            let t = base + 8 * 3600 + 30 + Double(m) * 60
            rows.append("(randomblob(16), 1, \(m % 11), \(t), \(t + 60), 1)")
        }
        rows.append("(randomblob(16), 1, 5, \(base + 3600), \(base + 3600), 1)")
        rows.append("(randomblob(16), 1, 90, \(base - 300), \(base + 300), 1)")
        try sqliteExec(path, Schema.migrations.prefix(7).joined(separator: "\n") + """

            INSERT INTO types(id, identifier, unit, aggregation) VALUES (1, 'stepCount', 'count', 'cumulative');
            INSERT INTO sources(id, identifier, name, version, tier, rank, first_seen) VALUES
                (1, 'com.example.watch', 'Watch', NULL, 2, 1, 0), (2, 'com.example.phone', 'iPhone', NULL, 2, 2, 0);
            INSERT INTO samples(uuid, type_id, value, start, "end", source_id) VALUES \(rows.joined(separator: ",\n"));
            PRAGMA user_version = 7;
            """)
        return (dir, path)
    }

    static let samplesSQL = "SELECT id || '|' || hex(uuid) || '|' || quote(value) || '|' || quote(start) || '|' || quote(\"end\") || '|' || source_id FROM samples ORDER BY id"
    static let rollupsSQL = "SELECT slot || '|' || source_id || '|' || count || '|' || quote(sum) || '|' || quote(min_start) || '|' || quote(max_end) FROM sample_rollups ORDER BY type_id, slot, source_id"
    static let decodeSQL = "EXPLAIN QUERY PLAN SELECT s.value, s.start, s.\"end\", s.source_id, s.id FROM samples s WHERE s.type_id = 1 AND s.start >= 0 AND s.start < 1e10 ORDER BY s.start, s.id"

    /// The `detail` column of `EXPLAIN QUERY PLAN sql`, every step.
    static func plan(_ path: String, _ sql: String) -> [String] { SeriesMigrationTests.strings(path, sql, column: 3) }

    static let samplesPlanSQL = "EXPLAIN QUERY PLAN SELECT s.uuid, s.metadata FROM samples s WHERE s.type_id = 1 AND s.start >= 0 ORDER BY s.start DESC, s.id DESC LIMIT 5"

    @Test("samples, rollups and anchor are the same; the start index covers what statistics decode")
    func keepsEverything() throws {
        let (dir, path) = try Self.schema7Store()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try sqliteInt(path, "PRAGMA user_version") == 7)
        let samples = SeriesMigrationTests.strings(path, Self.samplesSQL)
        let rollups = SeriesMigrationTests.strings(path, Self.rollupsSQL)
        #expect(samples.count == 1440 + 120 + 2 && rollups.count > 96)
        // Before: the index has no value, so a decoded row is a seek into the table.
        let before = Self.plan(path, Self.decodeSQL).joined()
        #expect(before.contains("USING INDEX samples_type_start") && !before.contains("COVERING"), "\(before)")

        let store = try HealthStore(path: path)
        #expect(try store.schemaVersion >= 8)
        #expect(SeriesMigrationTests.strings(path, Self.samplesSQL) == samples)
        #expect(SeriesMigrationTests.strings(path, Self.rollupsSQL) == rollups)
        #expect(SeriesMigrationTests.strings(path, "SELECT name FROM pragma_index_info('samples_type_start') ORDER BY seqno")
                == ["type_id", "start", "id", "end", "value", "source_id"])
        // Read from the index alone, in its order: no table seek, no sort.
        let plan = Self.plan(path, Self.decodeSQL).joined()
        #expect(plan.contains("COVERING INDEX samples_type_start") && !plan.contains("TEMP B-TREE"), "\(plan)")
        let samplesPlan = Self.plan(path, Self.samplesPlanSQL).joined()
        #expect(!samplesPlan.contains("TEMP B-TREE"), "\(samplesPlan)")
        #expect(SeriesMigrationTests.strings(path, "PRAGMA integrity_check") == ["ok"])
        #expect(try store.changes(since: nil).anchor.sampleID == Int64(samples.count))

        // Statistics over the migrated store: the streaming engine (rollups, decoded rows from
        // the index) equals the oracle, hourly and daily, merged and by source.
        let q = StatisticsQuery(type: .stepCount, options: [.cumulativeSum, .mostRecent, .separateBySource])
        for interval in [StatisticsInterval.hours(1), .days(1), .minutes(15)] {
            let want = try store.statisticsCollection(q, interval: interval, timeZone: TimeZone(identifier: "Europe/Berlin")!, path: .loadAll)
            StreamingStatisticsTests.expectSame(
                try store.statisticsCollection(q, interval: interval, timeZone: TimeZone(identifier: "Europe/Berlin")!), want, "\(interval)")
        }
    }
}
