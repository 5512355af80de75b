import CSQLite
import Foundation
import HealthStore
import Testing

/// `healthgate check`: SQLite's integrity check of the store, read-only (what to run after a power
/// cut; the real-stack `power-cut` scenario runs it after killing the guest).
@Suite("healthgate check: an intact store is 0, a damaged one 65 with SQLite's findings", .serialized)
struct CheckCommandTests {
    @Test("an intact store: one line, or JSON with ok, the schema, the sample count and the WAL's size; the file is not written")
    func intact() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        for v in [60.0, 61, 62] { #expect(try cli.run(["add", "--type", "heartRate", "--value", String(v)]).code == 0) }
        let before = try #require(FileManager.default.contents(atPath: cli.db))
        let line = try cli.run(["check"])
        #expect(line.code == 0 && line.out.contains("is intact (SQLite's integrity_check: ok; schema ") && line.out.contains("3 samples"), "\(line.out) \(line.err)")
        let o = try #require(try cli.json(["check", "--json", "--quick"]) as? [String: Any])
        #expect(o["ok"] as? Bool == true && (o["problems"] as? [Any])?.isEmpty == true && o["samples"] as? Int == 3)
        #expect((o["schema"] as? Int ?? 0) >= 8 && o["walBytes"] is Int && o["path"] as? String == cli.db)
        #expect(FileManager.default.contents(atPath: cli.db) == before)
    }

    @Test("a damaged index: exit 65, SQLite's findings and what to do; --json still prints ok false first")
    func damaged() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        for v in 60..<90 { #expect(try cli.run(["add", "--type", "heartRate", "--value", String(v)]).code == 0) }
        // Scribble over the cells of the samples table's start-time index (its root page: a leaf
        // this small), keeping the page header: the file still opens, the index no longer matches.
        var db: OpaquePointer?
        #expect(rawOpen(cli.db, &db, SQLITE_OPEN_READONLY) == SQLITE_OK)
        var st: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'samples' AND sql LIKE '%start%' LIMIT 1", -1, &st, nil)
        #expect(sqlite3_step(st) == SQLITE_ROW)
        let root = Int(sqlite3_column_int64(st, 0))
        sqlite3_finalize(st)
        sqlite3_close(db)
        #expect(root > 1)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: cli.db))
        try handle.seek(toOffset: UInt64(root * 4096 - 600))
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 600))
        try handle.close()

        let r = try cli.run(["check"])
        #expect(r.code == 65, "\(r.out) \(r.err)")
        #expect(r.err.contains("is damaged: SQLite's integrity_check found") && r.err.contains(".recover"), "\(r.err)")
        let j = try cli.run(["check", "--json"])
        #expect(j.code == 65)
        let o = try #require(try JSONSerialization.jsonObject(with: Data(j.out.utf8)) as? [String: Any])
        #expect(o["ok"] as? Bool == false && ((o["problems"] as? [String])?.isEmpty == false), "\(j.out)")
    }
}
