import Foundation
import HealthGateTesting
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

    @Test("an incompatible unit exits 65 with a message naming both units")
    func incompatibleUnit() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let add = try cli.run(["add", "--type", "heartRate", "--value", "70", "--unit", "kg"])
        #expect(add.code == 65)
        #expect(add.err.contains("kg") && add.err.contains("count/min"))
        let stats = try cli.run(["stats", "--type", "stepCount", "--unit", "kJ"])
        #expect(stats.code == 65)
        #expect(stats.err.contains("kJ") && stats.err.contains("count"))
        #expect(try cli.run(["stats", "--type", "stepCount", "--option", "discreteMax"]).code == 65)
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
}
