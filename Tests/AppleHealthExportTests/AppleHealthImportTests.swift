import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

/// `healthgate import --apple-health` through the binary into a real store, against
/// make_export.py's oracle: every good record stored once per type, the workouts, the date of
/// birth in the profile, bad records listed with their lines (exit 65), and a second import of
/// the same export (zip, then xml) adding nothing.
@Suite struct AppleHealthImportTests {
    @Test("zip then xml: the oracle's records per type, workouts, date of birth; the second import adds nothing")
    func importTwice() async throws {
        let dir = try ExportFixture.directory()
        let summary = try ExportFixture.summary(dir)
        let records = try #require(summary["records"] as? [[String: Any]])
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("ah-import-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let db = work.appendingPathComponent("h.sqlite").path
        func run(_ args: [String]) async throws -> HealthGateExecutable.Result {
            try await offThread { try HealthGateExecutable.run(args + ["--db", db]) }
        }

        let first = try await run(["import", "--apple-health", dir.appendingPathComponent("export.zip").path, "--json"])
        #expect(first.status == 65, "bad records make it exit 65 after importing the rest: \(first.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any])
        let bad = try #require(summary["bad"] as? [[String: Any]])
        #expect(report["badRecordCount"] as? Int == bad.count)
        for b in bad { #expect(first.stderr.contains("export.xml:\(b["line"] as? Int ?? -1): skipped"), "line \(b["line"] ?? "?")") }
        #expect((report["workouts"] as? [String: Int])?["inserted"] == (summary["workouts"] as? [Any])?.count)
        #expect(report["dateOfBirthSet"] as? String == summary["dateOfBirth"] as? String)

        let store = try HealthStore(path: db, mode: .readOnly)
        var perType: [String: Int] = [:]
        for r in records { perType[r["type"] as? String ?? "?", default: 0] += 1 }
        for (type, n) in perType {
            let t = try #require(QuantityTypeRegistry.standard.all.first { $0.identifier == type })
            var stored = try store.count(SampleQuery(type: t))
            if t == .heartRate { stored -= report["heartbeatSamples"] as? Int ?? 0 }
            #expect(stored == n, "\(type): \(stored) stored, the oracle wrote \(n)")
        }
        #expect(try store.workouts().count == (summary["workouts"] as? [Any])?.count)
        #expect(try store.characteristics().dateOfBirthText == summary["dateOfBirth"] as? String)

        let again = try await run(["import", "--apple-health", dir.appendingPathComponent("export.xml").path, "--json"])
        let second = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any], "\(again.stderr)")
        #expect(second["inserted"] as? Int == 0 && second["replaced"] as? Int == 0, "the same export again adds nothing: \(again.stdout)")
        #expect((second["workouts"] as? [String: Int])?["inserted"] == 0)
        #expect(second["dateOfBirthSet"] is NSNull, "the profile has one already")

        let missing = try await run(["import", "--apple-health", work.appendingPathComponent("nope.zip").path])
        #expect(missing.status == 66, "\(missing.stderr)")
        let both = try await run(["import", "--apple-health", "a.zip", "--jsonl", "b.jsonl"])
        #expect(both.status == 64)
    }

    @Test("a save that fails mid-import (the store refuses the second batch) stops the reading thread: the error, the first batch kept, no hang",
          .timeLimit(.minutes(3)))
    func failedSaveStopsTheReader() async throws {
        // About 13,000 records: three batches of 5,000.
        let dir = try await offThread { try ExportFixture.generate(["--seed", "3", "--big", "6000000"]) }
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("h.sqlite").path
        let store = try HealthStore(path: db)
        try store.withConnection { c in
            try c.execute("""
                CREATE TRIGGER simulated_full_disk BEFORE INSERT ON samples WHEN (SELECT count(*) FROM samples) >= 7000
                BEGIN SELECT RAISE(ABORT, 'simulated: the disk is full'); END
                """)
        }
        let r = try await offThread {
            try HealthGateExecutable.run(["import", "--apple-health", dir.appendingPathComponent("export.xml").path, "--db", db],
                                         timeout: .seconds(120))
        }
        // SQLite refused the rows (a constraint: 65, as for data a store refuses).
        #expect(r.status == 65 && r.stderr.contains("simulated: the disk is full"), "\(r.status): \(r.stderr.suffix(2000))")
        // The first batch was committed before the failing one; the failing one rolled back whole.
        #expect(try store.count(SampleQuery()) == 5000)
    }
}
