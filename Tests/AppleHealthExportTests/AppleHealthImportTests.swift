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
    /// A temporary directory for one test, its store `h.sqlite`, and the binary run on that store.
    struct Scratch {
        let url: URL
        var db: String { url.appendingPathComponent("h.sqlite").path }

        init(_ prefix: String) throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }

        /// `healthgate args --db db`, off the cooperative pool.
        func run(_ args: [String]) async throws -> HealthGateExecutable.Result {
            let db = db
            return try await offThread { try HealthGateExecutable.run(args + ["--db", db]) }
        }

        func remove() { try? FileManager.default.removeItem(at: url) }
    }

    @Test("zip then xml: the oracle's records per type, workouts, date of birth; the second import adds nothing")
    func importTwice() async throws {
        let dir = try ExportFixture.directory()
        let summary = try ExportFixture.summary(dir)
        let records = try #require(summary["records"] as? [[String: Any]])
        let scratch = try Scratch("ah-import")
        defer { scratch.remove() }
        let (db, run) = (scratch.db, scratch.run)

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

        let missing = try await run(["import", "--apple-health", scratch.url.appendingPathComponent("nope.zip").path])
        #expect(missing.status == 66, "\(missing.stderr)")
        let both = try await run(["import", "--apple-health", "a.zip", "--jsonl", "b.jsonl"])
        #expect(both.status == 64)
    }

    @Test("--apple-health - reads the XML from standard input: the same samples as the file; a zip on standard input is refused with what to do (65)")
    func fromStandardInput() async throws {
        let dir = try ExportFixture.directory()
        let scratch = try Scratch("ah-stdin")
        defer { scratch.remove() }
        let xml = try Data(contentsOf: dir.appendingPathComponent("export.xml"))
        let piped = try await offThread {
            try HealthGateExecutable.run(["import", "--apple-health", "-", "--db", scratch.db, "--json"], stdin: xml)
        }
        let file = try await offThread {
            try HealthGateExecutable.run(["import", "--apple-health", dir.appendingPathComponent("export.xml").path,
                                          "--db", scratch.url.appendingPathComponent("file.sqlite").path, "--json"])
        }
        #expect(piped.status == file.status && piped.status == 65, "bad records in the fixture: \(piped.stderr)")
        let stored = try HealthStore(path: scratch.db, mode: .readOnly).count(SampleQuery())
        let fromFile = try HealthStore(path: scratch.url.appendingPathComponent("file.sqlite").path, mode: .readOnly).count(SampleQuery())
        #expect(stored > 0 && stored == fromFile)
        // The bad records keep their export.xml lines (the bytes read to tell XML from zip are not lost).
        func badLines(_ stderr: String) -> [Substring] {
            stderr.split(separator: "\n").compactMap { l in l.range(of: "export.xml:", options: .backwards).map { l[$0.lowerBound...] } }
        }
        #expect(!badLines(piped.stderr).isEmpty && badLines(piped.stderr) == badLines(file.stderr), "\(piped.stderr)")
        let zip = try Data(contentsOf: dir.appendingPathComponent("export.zip"))
        let refused = try await offThread {
            try HealthGateExecutable.run(["import", "--apple-health", "-", "--db", scratch.db], stdin: zip)
        }
        #expect(refused.status == 65 && refused.stderr.contains("a zip arriving through a pipe"), "\(refused.stderr)")
    }

    /// Issue 15: "afterwards statistics merge iPhone, Watch and strap by source priority without
    /// double counting". The phone and the watch both counted one walk; a strap (HealthGate's
    /// BLE source) measured heart rate over a span that holds one of the watch's readings.
    @Test("after an import, statistics merge iPhone, Watch and a strap by source priority: the overlap counted once, from the higher source")
    func mergedWithAStrap() async throws {
        let scratch = try Scratch("ah-merge")
        defer { scratch.remove() }
        let (work, run) = (scratch.url, scratch.run)
        func record(_ type: String, _ source: String, _ unit: String, _ from: String, _ to: String, _ value: Int) -> String {
            #" <Record type="HKQuantityTypeIdentifier\#(type)" sourceName="Anna’s \#(source)" unit="\#(unit)" startDate="2026-11-02 \#(from):00 +0000" endDate="2026-11-02 \#(to):00 +0000" value="\#(value)"/>"#
        }
        let xml = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "<HealthData locale=\"en_US\">",
                   record("StepCount", "iPhone", "count", "10:00", "10:10", 1000),
                   record("StepCount", "Apple Watch", "count", "10:00", "10:10", 800),
                   record("StepCount", "iPhone", "count", "11:00", "11:10", 300),   // the watch was off: counts
                   record("HeartRate", "Apple Watch", "count/min", "10:05", "10:05", 150),   // inside the strap's span
                   record("HeartRate", "Apple Watch", "count/min", "12:00", "12:00", 70),
                   "</HealthData>", ""].joined(separator: "\n")
        try Data(xml.utf8).write(to: work.appendingPathComponent("export.xml"))
        let strap = #"{"end":"2026-11-02T10:10:00Z","source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"2026-11-02T10:00:00Z","type":"heartRate","unit":"count/min","uuid":"01a20b71-4e41-70f2-a4b5-972ae7629206","value":130}"#
        try Data((strap + "\n").utf8).write(to: work.appendingPathComponent("strap.jsonl"))
        #expect(try await run(["import", "--apple-health", work.appendingPathComponent("export.xml").path]).status == 0)
        #expect(try await run(["import", "--jsonl", work.appendingPathComponent("strap.jsonl").path]).status == 0)
        func stats(_ args: [String]) async throws -> [String: Any] {
            let r = try await run(["stats", "--json"] + args)
            return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stderr)")
        }
        // The strap (HealthGate's own, tier 2) ranks above imported sources; the watch, seen after
        // the phone, above the phone (docs/queries.md, "Default priority").
        let sources = try await run(["sources", "--json"])
        #expect(sources.stdout.range(of: "HealthGate BLE")!.lowerBound < sources.stdout.range(of: "Apple Watch")!.lowerBound)
        #expect(sources.stdout.range(of: "Apple Watch")!.lowerBound < sources.stdout.range(of: "iPhone")!.lowerBound)
        #expect(try await stats(["--type", "stepCount"])["sum"] as? Double == 800 + 300, "the walk once, from the watch; never 2100")
        let hr = try await stats(["--type", "heartRate", "--option", "discreteMin,discreteMax"])
        #expect(hr["max"] as? Double == 130, "the watch's 150 inside the strap's span is the strap's: \(hr)")
        #expect(hr["min"] as? Double == 70, "the watch's reading outside it counts: \(hr)")
        // The owner prefers the phone: the same walk is now the phone's 1000.
        #expect(try await run(["sources", "priority", "Anna’s iPhone", "1"]).status == 0)
        #expect(try await stats(["--type", "stepCount"])["sum"] as? Double == 1000 + 300)
    }

    /// docs/apple-health.md, "Identity": a store keeps one way of deriving sample UUIDs.
    @Test("sample identity: a new store records time-ordered UUIDs; a store with an earlier import keeps content hashes, so a re-import adds nothing; an unknown scheme is 65")
    func sampleIdentityPerStore() async throws {
        let dir = try ExportFixture.directory()
        let xml = dir.appendingPathComponent("export.xml").path
        let scratch = try Scratch("ah-identity")
        defer { scratch.remove() }
        let work = scratch.url
        let key = "apple-health.sample-identity"
        func importInto(_ db: String) async throws -> (status: Int32, stderr: String, report: [String: Any]?) {
            let r = try await offThread { try HealthGateExecutable.run(["import", "--apple-health", xml, "--db", db, "--json"]) }
            return (r.status, r.stderr, try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        }
        func startMilliseconds(_ u: UUID) -> Int64 {
            let b = u.uuid
            return [b.0, b.1, b.2, b.3, b.4, b.5].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        }

        // A new store: time-ordered UUIDs (the start's milliseconds first), recorded.
        let fresh = work.appendingPathComponent("fresh.sqlite").path
        let first = try await importInto(fresh)
        #expect(first.report?["inserted"] as? Int ?? 0 > 0, "\(first.stderr)")
        var store = try HealthStore(path: fresh, mode: .readOnly)
        #expect(try store.stateString(key) == "2")
        let steps = try store.samples(SampleQuery(type: .stepCount))
        #expect(!steps.isEmpty && steps.allSatisfy { startMilliseconds($0.uuid) == Int64(($0.startDate.timeIntervalSince1970 * 1000).rounded()) })

        // A store whose export was imported before the scheme was recorded (content hashes, no
        // state key): the import finds those samples and keeps content hashes.
        let legacy = work.appendingPathComponent("legacy.sqlite").path
        try HealthStore(path: legacy).setState(key, string: "1")
        let old = try await importInto(legacy)
        #expect(old.report?["inserted"] as? Int == first.report?["inserted"] as? Int, "\(old.stderr)")
        store = try HealthStore(path: legacy)
        let oldUUIDs = Set(try store.samples(SampleQuery(type: .stepCount)).map(\.uuid))
        #expect(oldUUIDs.isDisjoint(with: steps.map(\.uuid)), "content-hash UUIDs differ from time-ordered ones")
        try store.setState(key, nil)
        let again = try await importInto(legacy)
        #expect(again.report?["inserted"] as? Int == 0 && again.report?["replaced"] as? Int == 0,
                "the same export into a store imported before adds nothing: \(again.report ?? [:]) \(again.stderr)")
        #expect(try HealthStore(path: legacy, mode: .readOnly).stateString(key) == "1")

        // A scheme a newer version recorded: refused with a sentence, nothing imported.
        let newer = work.appendingPathComponent("newer.sqlite").path
        try HealthStore(path: newer).setState(key, string: "3")
        let refused = try await importInto(newer)
        #expect(refused.status == 65 && refused.stderr.contains("scheme \"3\""), "\(refused.status): \(refused.stderr)")
        #expect(try HealthStore(path: newer, mode: .readOnly).count(SampleQuery()) == 0)
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
