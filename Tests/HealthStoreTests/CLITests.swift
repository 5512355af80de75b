import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

/// Runs the built `healthgate` binary against a temporary store.
struct CLI {
    let dir: URL
    var db: String { dir.appendingPathComponent("h.sqlite").path }

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("healthgate-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    struct Result { var code: Int32; var out: String; var err: String }

    /// Runs `healthgate args… --db <temp>` with stdin from /dev/null (never a terminal).
    func run(_ args: [String], db useDB: Bool = true) throws -> Result {
        let r = try HealthGateExecutable.run(args + (useDB ? ["--db", db] : []))
        return Result(code: r.status, out: r.stdout, err: r.stderr)
    }

    func json(_ args: [String]) throws -> Any {
        let r = try run(args)
        #expect(r.code == 0, "\(args): \(r.err)")
        return try JSONSerialization.jsonObject(with: Data(r.out.utf8))
    }

    func write(_ name: String, _ text: String) throws -> String {
        let url = dir.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    func cleanup() { try? FileManager.default.removeItem(at: dir) }
}

@Suite("CLI end to end: the built healthgate binary against a real store", .serialized)
struct CLITests {
    @Test("add then stats --json gives heart-rate average, min and max; --unit count/s converts")
    func addAndStats() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        for (i, v) in [60.0, 90, 75].enumerated() {
            let r = try cli.run(["add", "--type", "heartRate", "--value", String(v), "--unit", "count/min",
                                 "--start", "2026-11-02T08:0\(i):00Z", "--sensor-location", "chest"])
            #expect(r.code == 0, "\(r.err)")
        }
        let o = try #require(try cli.json(["stats", "--type", "heartRate", "--option", "discreteAverage,discreteMin,discreteMax", "--json"]) as? [String: Any])
        #expect(o["average"] as? Double == 75 && o["min"] as? Double == 60 && o["max"] as? Double == 90)
        #expect(o["unit"] as? String == "count/min")
        #expect(Set(o.keys) == ["average", "min", "max", "unit"])
        let hz = try #require(try cli.json(["stats", "--type", "heartRate", "--option", "discreteMax", "--unit", "count/s", "--json"]) as? [String: Any])
        #expect(hz["max"] as? Double == 1.5 && hz["unit"] as? String == "count/s")
    }

    @Test("an incompatible --unit is a usage error (64) naming the flag and both units")
    func incompatibleUnit() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let add = try cli.run(["add", "--type", "heartRate", "--value", "70", "--unit", "kg"])
        #expect(add.code == 64)
        #expect(add.err.contains("--unit") && add.err.contains("kg") && add.err.contains("count/min"))
        let stats = try cli.run(["stats", "--type", "stepCount", "--unit", "kJ"])
        #expect(stats.code == 64)
        #expect(stats.err.contains("--unit") && stats.err.contains("kJ") && stats.err.contains("count"))
        let option = try cli.run(["stats", "--type", "stepCount", "--option", "discreteMax"])
        #expect(option.code == 64 && option.err.contains("--option") && option.err.contains("discreteMax"), "\(option.err)")
    }

    @Test("every bad option value exits 64 with a sentence naming the flag", arguments: [
        (["stats", "--type", "nope"], "--type"),
        (["samples", "--type", "nope"], "--type"),
        (["add", "--type", "nope", "--value", "1"], "--type"),
        (["stats", "--type", "heartRate", "--option", "bogus"], "--option"),
        (["stats", "--type", "heartRate", "--tz", "Mars/Olympus"], "--tz"),
        (["stats", "--type", "heartRate", "--tz", "UTC+2"], "--tz"),
        (["stats", "--type", "stepCount", "--interval", "1M"], "--interval"),
        (["stats", "--type", "stepCount", "--interval", "1000000000d"], "--interval"),
        (["stats", "--type", "stepCount", "--interval", "1d", "--from", "2026-11-05", "--to", "2026-11-03"], "--to"),
        (["stats", "--type", "stepCount", "--from", "2026-11-05", "--to", "2026-11-03"], "--to"),
        (["stats", "--type", "stepCount", "--from", "2026-11-05", "--to", "2026-11-05"], "--to"),
        (["stats", "--type", "stepCount", "--anchor", "2026-11-05"], "--anchor"),
        (["samples", "--from", "2026-11-05", "--to", "2026-11-03"], "--to"),
        (["samples", "--limit", "-1"], "--limit"),
        (["samples", "--limit", "0"], "--limit"),
        (["add", "--type", "stepCount", "--value", "-5"], "--value"),
        (["add", "--type", "stepCount", "--value", "1.5e308"], "--value"),
        (["add", "--type", "heartRate", "--value", "100000"], "--value"),
        (["add", "--type", "heartRate", "--value", "70", "--start", "2026-11-05T00:00:00Z", "--end", "2026-11-04T00:00:00Z"], "--start"),
        (["sources", "priority", "Manual entry", "0"], "rank"),
        (["changes", "--limit", "-1"], "limit"),
    ] as [([String], String)])
    func badOptionValuesAreUsageErrors(args: [String], flag: String) throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        #expect(try cli.run(["add", "--type", "stepCount", "--value", "3"]).code == 0)
        let r = try cli.run(args)
        #expect(r.code == 64, "\(args): \(r.code) \(r.err)")
        #expect(r.err.hasPrefix("healthgate: ") && r.err.contains(flag), "\(args): \(r.err)")
        #expect(r.err.split(separator: "\n").count == 1, "one sentence: \(r.err)")
    }

    @Test("import skips a line with an implausible value (heart rate 100000), naming its line, and keeps the others")
    func importImplausibleValue() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let file = try cli.write("hr.jsonl", """
            {"type":"heartRate","value":70,"unit":"count/min","start":"2026-11-02T08:00:00Z","end":"2026-11-02T08:00:00Z","source":{"name":"W"}}
            {"type":"heartRate","value":100000,"unit":"count/min","start":"2026-11-02T08:01:00Z","end":"2026-11-02T08:01:00Z","source":{"name":"W"}}
            {"type":"heartRate","value":72,"unit":"count/min","start":"2026-11-02T08:02:00Z","end":"2026-11-02T08:02:00Z","source":{"name":"W"}}

            """)
        let r = try cli.run(["import", "--jsonl", file])
        #expect(r.code == 65)
        #expect(r.err.contains(":2:") && r.err.contains("100000") && r.err.contains("plausible"), "\(r.err)")
        let all = try #require(try cli.json(["samples", "--json"]) as? [[String: Any]])
        #expect(all.map { $0["value"] as? Double } == [70, 72])
    }

    @Test("types lists each type's plausible range (JSON and table)")
    func typesShowRanges() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let r = try cli.run(["types", "--json"], db: false)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [[String: Any]])
        let hr = try #require(list.first { $0["identifier"] as? String == "heartRate" })
        #expect(hr["plausibleRange"] as? [Double] == [0, 500])
        #expect(list.allSatisfy { $0["plausibleRange"] != nil })
        #expect(try cli.run(["types"], db: false).out.contains("0–1000000"))
    }

    @Test("import --batch 0 is refused (64) before anything is read")
    func importBatchZero() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        for n in ["0", "-1"] {
            let r = try cli.run(["import", "--jsonl", "/nonexistent.jsonl", "--batch", n])
            #expect(r.code == 64 && r.err.contains("--batch"), "\(r.err)")
        }
    }

    @Test("--tz takes IANA names in any case (utc, europe/berlin) and tz database names like Etc/UTC")
    func timeZoneNames() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        #expect(try cli.run(["add", "--type", "stepCount", "--value", "3", "--start", "2026-11-02T12:00:00Z"]).code == 0)
        for zone in ["utc", "UTC", "europe/berlin", "Europe/Berlin", "Etc/UTC"] {
            let r = try cli.run(["stats", "--type", "stepCount", "--interval", "1d", "--tz", zone, "--json"])
            #expect(r.code == 0, "\(zone): \(r.err)")
        }
    }

    @Test("stats --interval 1d without --to lists the bucket of a sample on the last edge (bodyMass on three midnights)")
    func lastBucketNotDropped() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        for (day, kg) in [("03", "70"), ("04", "71"), ("05", "72")] {
            #expect(try cli.run(["add", "--type", "bodyMass", "--value", kg, "--start", "2026-11-\(day)T00:00:00Z"]).code == 0)
        }
        let b = try #require(try cli.json(["stats", "--type", "bodyMass", "--interval", "1d", "--tz", "UTC",
                                           "--option", "mostRecent", "--json"]) as? [[String: Any]])
        #expect(b.map { $0["start"] as? String } == ["2026-11-03T00:00:00Z", "2026-11-04T00:00:00Z", "2026-11-05T00:00:00Z"])
        #expect(b.map { $0["mostRecent"] as? Double } == [70, 71, 72])
    }

    @Test("stats over stored values that overflow exits 65 with a sentence, never null or inf")
    func overflowingSum() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        for _ in 0..<2 { #expect(try cli.run(["add", "--type", "stepCount", "--value", "1000000"]).code == 0) }
        // Values an older HealthGate accepted, before plausible ranges.
        let store = try HealthStore(path: cli.db)
        try store.withConnection { db in try db.prepare("UPDATE samples SET value = 1.5e308", cached: false).run() }
        for args in [["stats", "--type", "stepCount", "--json"], ["stats", "--type", "stepCount"],
                     ["stats", "--type", "stepCount", "--interval", "1d", "--json"]] {
            let r = try cli.run(args)
            #expect(r.code == 65, "\(args): \(r.out)")
            #expect(r.err.contains("overflows") && !r.out.contains("null") && !r.out.contains("inf"), "\(r.err)")
        }
    }

    @Test("samples over a huge stored value: the table shows it (not inf); converting it past a Double exits 65, not a bare null")
    func hugeStoredValues() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        #expect(try cli.run(["add", "--type", "activeEnergyBurned", "--value", "5", "--start", "2026-11-02T08:00:00Z",
                             "--end", "2026-11-02T08:10:00Z"]).code == 0)
        let store = try HealthStore(path: cli.db)
        try store.withConnection { db in try db.prepare("UPDATE samples SET value = 1.5e308", cached: false).run() }
        let table = try cli.run(["samples"])
        #expect(table.code == 0 && table.out.contains("1.5e+308") && !table.out.contains("inf"), "\(table.out)")
        for args in [["samples", "--type", "activeEnergyBurned", "--unit", "J", "--json"],
                     ["samples", "--type", "activeEnergyBurned", "--unit", "J"]] {
            let r = try cli.run(args)
            #expect(r.code == 65 && r.err.contains("overflows") && !r.out.contains("null") && !r.out.contains("inf"), "\(args): \(r.out) \(r.err)")
        }
        let stats = try cli.run(["stats", "--type", "activeEnergyBurned", "--option", "mostRecent", "--unit", "J", "--json"])
        #expect(stats.code == 65 && stats.out.isEmpty, "\(stats.out)")
    }

    @Test("tables show times in --tz with the offset (samples and stats); JSON stays UTC")
    func tablesInTimeZone() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        #expect(try cli.run(["add", "--type", "stepCount", "--value", "5", "--start", "2026-11-02T23:30:00Z"]).code == 0)
        let samples = try cli.run(["samples", "--tz", "Europe/Berlin"])
        #expect(samples.code == 0 && samples.out.contains("2026-11-03T00:30:00+01:00"), "\(samples.out)")
        let utc = try cli.run(["samples", "--tz", "UTC"])
        #expect(utc.out.contains("2026-11-02T23:30:00Z"), "\(utc.out)")
        let stats = try cli.run(["stats", "--type", "stepCount", "--interval", "1d", "--tz", "Europe/Berlin"])
        #expect(stats.out.contains("2026-11-03T00:00:00+01:00 … 2026-11-04T00:00:00+01:00"), "\(stats.out)")
        let json = try #require(try cli.json(["stats", "--type", "stepCount", "--interval", "1d", "--tz", "Europe/Berlin", "--json"]) as? [[String: Any]])
        #expect(json.first?["start"] as? String == "2026-11-02T23:00:00Z")
        // A bare --from with --tz is local midnight in samples too.
        let local = try cli.run(["samples", "--tz", "Europe/Berlin", "--from", "2026-11-03", "--json"])
        #expect(local.out.contains("2026-11-02T23:30:00"), "\(local.out)")
    }

    @Test("samples --help names the sort values it takes, start and end, and its default by the same name")
    func sortHelp() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let r = try cli.run(["samples", "--help"], db: false)
        // (The help may wrap between the two.)
        #expect(r.out.contains("values: start, end") && r.out.contains("default: start") && !r.out.contains("startDate"), "\(r.out)")
    }

    @Test("import skips a bad line, names its line number, keeps every good line, and exits 65")
    func importBadLine() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        try #require(try cli.run(["add", "--type", "stepCount", "--value", "5", "--start", "2026-11-01T08:00:00Z"]).code == 0)
        let file = try cli.write("in.jsonl", """
            {"type":"stepCount","value":1000,"unit":"count","start":"2026-11-02T08:00:00Z","end":"2026-11-02T08:10:00Z","source":"iPhone"}
            {"type":"stepCount","value":"lots","start":"2026-11-02T08:00:00Z"}
            {"type":"stepCount","value":300,"start":"2026-11-02T08:10:00Z","end":"2026-11-02T08:15:00Z","source":"Watch"}

            """)
        let r = try cli.run(["import", "--jsonl", file])
        #expect(r.code == 65)
        #expect(r.err.contains("in.jsonl:2"))
        let all = try #require(try cli.json(["samples", "--type", "stepCount", "--json"]) as? [[String: Any]])
        #expect(all.compactMap { $0["value"] as? Double }.sorted() == [5, 300, 1000])
        // Importing again stores nothing new (UUIDs derive from the lines).
        _ = try cli.run(["import", "--jsonl", file])
        #expect((try cli.json(["samples", "--json"]) as? [Any])?.count == 3)
        // --all-or-nothing refuses the file and saves nothing.
        let strict = try cli.write("strict.jsonl", """
            {"type":"stepCount","value":7,"start":"2026-11-03T08:00:00Z"}
            {"type":"nope","value":1,"start":"2026-11-03T08:00:00Z"}
            """)
        let refused = try cli.run(["import", "--jsonl", strict, "--all-or-nothing"])
        #expect(refused.code == 65 && refused.err.contains("strict.jsonl:2"))
        #expect((try cli.json(["samples", "--json"]) as? [Any])?.count == 3)
    }

    @Test("two overlapping sources: stats sums each span once; --separate-by-source lists both")
    func mergedSteps() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let file = try cli.write("walk.jsonl", """
            {"type":"stepCount","value":1000,"start":"2026-11-02T08:00:00Z","end":"2026-11-02T08:10:00Z","source":"iPhone"}
            {"type":"stepCount","value":1100,"start":"2026-11-02T08:00:00Z","end":"2026-11-02T08:10:00Z","source":"Watch"}
            {"type":"stepCount","value":300,"start":"2026-11-02T08:10:00Z","end":"2026-11-02T08:15:00Z","source":"Watch"}
            """)
        #expect(try cli.run(["import", "--jsonl", file]).code == 0)
        let o = try #require(try cli.json(["stats", "--type", "stepCount", "--option", "cumulativeSum", "--json"]) as? [String: Any])
        #expect(o["sum"] as? Double == 1400)
        #expect(try cli.run(["sources", "priority", "iPhone", "1"]).code == 0)
        let s = try #require(try cli.json(["stats", "--type", "stepCount", "--separate-by-source", "--json"]) as? [String: Any])
        #expect(s["sum"] as? Double == 1300)
        let per = try #require(s["sources"] as? [[String: Any]])
        #expect(per.map { $0["name"] as? String } == ["iPhone", "Watch"])
        #expect(per.map { $0["sum"] as? Double } == [1000, 1400])
    }

    @Test("stats --interval 1d --tz Europe/Berlin: the DST day bucket is 23 hours")
    func dstBucket() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        #expect(try cli.run(["add", "--type", "stepCount", "--value", "10", "--start", "2026-03-29T10:00:00Z",
                             "--end", "2026-03-29T10:10:00Z"]).code == 0)
        let b = try #require(try cli.json(["stats", "--type", "stepCount", "--from", "2026-03-28", "--to", "2026-03-31",
                                           "--interval", "1d", "--tz", "Europe/Berlin", "--json"]) as? [[String: Any]])
        #expect(b.map { $0["start"] as? String } == ["2026-03-27T23:00:00Z", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"])
        #expect(b.map { $0["end"] as? String } == ["2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z", "2026-03-30T22:00:00Z"])
        #expect(b[1]["sum"] as? Double == 10)
        #expect(b[0]["sum"] is NSNull)
    }

    @Test("export jsonl re-imports into another store unchanged; csv has a header and one row per sample")
    func exportRoundTrip() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        #expect(try cli.run(["add", "--type", "heartRate", "--value", "72", "--sensor-location", "wrist",
                             "--metadata", "note=after, run", "--start", "2026-11-02T08:00:00Z"]).code == 0)
        let jsonl = try cli.run(["export", "--format", "jsonl"])
        let file = try cli.write("out.jsonl", jsonl.out)
        let other = cli.dir.appendingPathComponent("other.sqlite").path
        let imp = try cli.run(["import", "--jsonl", file, "--db", other], db: false)
        #expect(imp.code == 0, "\(imp.err)")
        let back = try cli.run(["export", "--format", "jsonl", "--db", other], db: false)
        #expect(back.out == jsonl.out)
        let csv = try cli.run(["export", "--format", "csv"]).out.split(separator: "\n")
        #expect(csv.count == 2 && csv[0].hasPrefix("uuid,type,value,unit,start,end"))
        #expect(csv[1].contains("\"{\"\"note\"\":\"\"after, run\"\""))
    }

    @Test("delete by filter needs --yes off a terminal; deletes by UUID at once")
    func delete() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let a = try #require(try cli.json(["add", "--type", "heartRate", "--value", "72", "--json"]) as? [String: Any])
        _ = try cli.run(["add", "--type", "heartRate", "--value", "80"])
        #expect(try cli.run(["delete", "--type", "heartRate"]).code == 64)
        #expect(try cli.run(["delete"]).code == 64)
        let byUUID = try #require(try cli.json(["delete", "--uuid", a["uuid"] as! String, "--json"]) as? [String: Any])
        #expect(byUUID["deleted"] as? Int == 1)
        let rest = try #require(try cli.json(["delete", "--type", "heartRate", "--yes", "--json"]) as? [String: Any])
        #expect(rest["deleted"] as? Int == 1)
    }

    // MARK: Open modes, foreign files, help (issue 17, items 13, 20, 21)

    /// The commands that only read the store.
    static let readOnlyCommands: [[String]] = [
        ["samples"], ["samples", "--json"], ["stats", "--type", "stepCount"], ["stats", "--type", "stepCount", "--interval", "1d"],
        ["changes"], ["devices"], ["devices", "--json"], ["sources", "list"], ["export", "--format", "jsonl"], ["tombstones"],
        ["check"], ["check", "--json"],
    ]

    @Test("read-only commands on a missing path exit 66 with a sentence and create no file or directory")
    func readOnlyMissingStore() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let path = cli.dir.appendingPathComponent("not/yet/health.sqlite").path
        for args in Self.readOnlyCommands {
            let r = try cli.run(args + ["--db", path], db: false)
            #expect(r.code == 66, "\(args): \(r.code) \(r.err)")
            #expect(r.err.contains(path) && r.err.contains("never creates"), "\(args): \(r.err)")
        }
        #expect(!FileManager.default.fileExists(atPath: cli.dir.appendingPathComponent("not").path))
    }

    @Test("another application's SQLite file: read-only and writing commands exit 65 and leave it byte for byte")
    func foreignDatabaseIsRefused() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let other = cli.dir.appendingPathComponent("app.sqlite").path
        try sqliteExec(other, "CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES ('keep');")
        let before = try #require(FileManager.default.contents(atPath: other))
        for args in Self.readOnlyCommands + [["add", "--type", "stepCount", "--value", "5"], ["migrate"]] {
            let r = try cli.run(args + ["--db", other], db: false)
            #expect(r.code == 65, "\(args): \(r.code) \(r.err)")
            #expect(r.err.contains("is not a HealthGate store"), "\(args): \(r.err)")
        }
        #expect(FileManager.default.contents(atPath: other) == before)
    }

    @Test("a store whose user_version was reset to 0 gets one sentence (no SQL) and exit 65")
    func userVersionReset() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        #expect(try cli.run(["add", "--type", "stepCount", "--value", "5"]).code == 0)
        try sqliteExec(cli.db, "PRAGMA user_version = 0")
        for args in [["samples"], ["add", "--type", "stepCount", "--value", "1"]] {
            let r = try cli.run(args)
            #expect(r.code == 65, "\(args): \(r.err)")
            #expect(!r.err.contains("CREATE") && r.err.split(separator: "\n").count == 1, "\(args): \(r.err)")
            #expect(r.err.contains("user_version"))
        }
    }

    @Test("migrate creates a store, then says it is current; a read-only command then reads it")
    func migrateCommand() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let first = try #require(try cli.json(["migrate", "--json"]) as? [String: Any])
        // The version this build writes: what a store the library itself creates has.
        let current = try HealthStore(path: cli.dir.appendingPathComponent("reference.sqlite").path).schemaVersion
        #expect(first["created"] as? Bool == true && first["to"] as? Int == current && current >= 3)
        let second = try cli.run(["migrate"])
        #expect(second.code == 0 && second.out.contains("already at schema version"))
        #expect(try cli.json(["samples", "--json"]) as? [Any] != nil)
    }

    @Test("the top-level help lists every exit code the commands use, and --version prints the version")
    func helpAndVersion() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let help = try cli.run(["--help"], db: false)
        #expect(help.code == 0)
        let flat = help.out.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "  ", with: " ")
        for code in ["0 ok", "64 usage", "65 bad data", "66 no input", "69 unavailable", "70 internal", "74 I/O",
                     "75 temporary", "77 no permission", "78 configuration"] {
            #expect(flat.contains(code), "help lacks '\(code)'")
        }
        #expect(flat.contains("--generate-completion-script"))
        let v = try cli.run(["--version"], db: false)
        #expect(v.code == 0)
        #expect(v.out.trimmingCharacters(in: .whitespacesAndNewlines).range(of: #"^\d+\.\d+\.\d+"#, options: .regularExpression) != nil,
                "\(v.out)")
    }

    @Test("completion scripts are generated for bash, zsh and fish")
    func completions() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        for shell in ["bash", "zsh", "fish"] {
            let r = try cli.run(["--generate-completion-script", shell], db: false)
            #expect(r.code == 0 && r.out.contains("healthgate"), "\(shell): \(r.err)")
        }
    }

    // MARK: devices (issue 17, items 17 and 21)

    /// A store with a paired strap (long name, battery) and a pedometer with counter state.
    static func registry(_ cli: CLI) throws -> HealthStore {
        let store = try HealthStore(path: cli.db)
        try store.upsertDevice(DeviceRecord(
            device: Device(name: "Polar H10 A1B2C3D4 long name", manufacturer: "Polar Electro Oy", model: "H10",
                           localIdentifier: "ble:C0:FF:EE:12:34:56"),
            kind: .ble, address: "C0:FF:EE:12:34:56", addressType: "public", alias: "chest-strap",
            lastSeen: Date(timeIntervalSince1970: 1_793_620_245.123456), battery: 100, sensorLocation: .chest))
        let pedo = Device(name: "USB pedometer", localIdentifier: "serial:PEDO1")
        try store.upsertDevice(DeviceRecord(device: pedo, kind: .serial, address: "/dev/ttyUSB0",
                                            lastSeen: Date(timeIntervalSince1970: 1_793_620_246.9)))
        let steps = try QuantitySample(type: .stepCount, quantity: Quantity(12, .count), start: Date(timeIntervalSince1970: 1_793_620_000),
                                       end: Date(timeIntervalSince1970: 1_793_620_060), source: Source(name: "HealthGate serial", identifier: "org.healthgate.serial"),
                                       device: pedo)
        try store.save([steps], state: ["serial.counter.PEDO1": Data("{}".utf8)])
        return store
    }

    @Test("devices: columns sized to their cells, LAST SEEN in whole seconds with its zone, BATTERY apart from MODEL")
    func devicesTable() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        _ = try Self.registry(cli)
        let r = try HealthGateExecutable.run(["devices", "--db", cli.db], environment: ["TZ": "Europe/Berlin"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 3, "\(r.stdout)")
        let header = lines[0]
        // Every column starts where its header starts, in every row.
        for name in ["KIND", "ADDRESS", "LAST SEEN", "LOCATION", "BATTERY", "MODEL"] {
            let col = try #require(header.range(of: name)).lowerBound.utf16Offset(in: header)
            for row in lines.dropFirst() {
                let before = row.utf16.index(row.utf16.startIndex, offsetBy: col - 2)
                #expect(row[before..<row.index(before, offsetBy: 2)] == "  ", "column \(name) is not separated in: \(row)")
            }
        }
        let strap = try #require(lines.first { $0.hasPrefix("chest-strap") })
        #expect(strap.contains("Polar H10 A1B2C3D4 long name") == false)   // the alias names it
        #expect(strap.contains("2026-11-02T12:50:45+01:00 "), "\(strap)")   // whole seconds, with the zone
        #expect(strap.range(of: "100% {2,}Polar Electro Oy H10$", options: .regularExpression) != nil, "\(strap)")
        #expect(strap.contains("C0:FF:EE:12:34:56"))
    }

    @Test("devices forget: the device leaves the registry with its counter state; its samples stay")
    func devicesForget() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        _ = try Self.registry(cli)
        let gone = try #require(try cli.json(["devices", "forget", "/dev/ttyUSB0", "--json"]) as? [String: Any])
        #expect(gone["samples"] as? Int == 1 && gone["rowDeleted"] as? Bool == false)
        #expect(gone["removedState"] as? [String] == ["serial.counter.PEDO1"])
        #expect((gone["device"] as? [String: Any])?["localIdentifier"] as? String == "serial:PEDO1")
        let left = try #require(try cli.json(["devices", "--json"]) as? [[String: Any]])
        #expect(left.map { $0["alias"] as? String } == ["chest-strap"])
        let samples = try #require(try cli.json(["samples", "--json"]) as? [[String: Any]])
        #expect(samples.count == 1 && (samples.first?["device"] as? [String: Any])?["name"] as? String == "USB pedometer")
        let store = try HealthStore(path: cli.db, mode: .readOnly)
        #expect(try store.state("serial.counter.PEDO1") == nil)
        // By alias, in words; a second time it is unknown (65, naming it).
        let words = try cli.run(["devices", "forget", "chest-strap"])
        #expect(words.code == 0 && words.out.contains("Forgot chest-strap") && words.out.contains("0 samples stay"), "\(words.out)")
        let again = try cli.run(["devices", "forget", "chest-strap"])
        #expect(again.code == 65 && again.err.contains("chest-strap"))
        #expect((try cli.json(["devices", "--json"]) as? [Any])?.isEmpty == true)
        let help = try cli.run(["devices", "forget", "--help"], db: false)
        #expect(help.out.contains("samples stay") && help.out.contains("counter state"))
    }
}
