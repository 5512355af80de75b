import Foundation
import HealthGateTesting
import Testing

/// The input rules end to end through the built binary (docs/input-rules.md): dates on flags and
/// in files, encodings and line ends, identities, reserved keys, exact round trips, file errors,
/// disk full, and output that is safe for terminals and spreadsheets.
@Suite("Input rules end to end: dates, files, round trips, file errors", .serialized)
struct InputFilesCLITests {
    func samples(_ cli: CLI, _ extra: [String] = []) throws -> [[String: Any]] {
        try #require(try cli.json(["samples", "--json"] + extra) as? [[String: Any]])
    }

    @Test("add keeps the time of day: Z, a space separator, an offset, and local time in TZ")
    func addKeepsTimeOfDay() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let starts = ["2026-11-02T08:00:00Z", "2026-11-02 08:30:00Z", "2026-11-02T10:00:00.941+01:00"]
        for s in starts {
            let r = try cli.run(["add", "--type", "stepCount", "--value", "1", "--start", s])
            #expect(r.code == 0, "\(s): \(r.err)")
        }
        // No zone: wall-clock time in the system zone (TZ).
        let local = try HealthGateExecutable.run(["add", "--type", "stepCount", "--value", "1", "--start", "2026-11-02T11:00:00",
                                                  "--db", cli.db], environment: ["TZ": "Europe/Berlin"])
        #expect(local.status == 0, "\(local.stderr)")
        let got = try samples(cli).compactMap { $0["start"] as? String }.sorted()
        #expect(got == ["2026-11-02T08:00:00Z", "2026-11-02T08:30:00Z", "2026-11-02T09:00:00.941Z", "2026-11-02T10:00:00Z"])
    }

    @Test("impossible or zoneless-unknown dates on flags exit 64 naming the flag",
          arguments: [(["add", "--type", "stepCount", "--value", "1", "--start", "2026-02-30T08:00:00Z"], "--start", "February 2026 has 28 days"),
                      (["add", "--type", "stepCount", "--value", "1", "--start", "2026-11-02T08:00:00Z", "--end", "2026-11-02T25:00:00Z"], "--end", "hour 25"),
                      (["samples", "--from", "2026-11-02T08:60:00Z"], "--from", "minute 60"),
                      (["export", "--format", "jsonl", "--to", "2026-11-31"], "--to", "November 2026 has 30 days"),
                      (["stats", "--type", "stepCount", "--interval", "1d", "--anchor", "2026-11-02T08:00:00+25:00"], "--anchor", "offset"),
                      (["stats", "--type", "stepCount", "--from", "2026-03-29T02:30:00", "--tz", "Europe/Berlin"], "--from", "does not exist in Europe/Berlin"),
                      (["delete", "--from", "yesterday", "--yes"], "--from", "not an ISO 8601"),
                      (["add", "--type", "stepCount", "--value", "1", "--start", "9999-12-31T23:30:00-01:00"], "--start", "outside 0001-01-01"),
                      // Values: decimal text only (Double("0x48") is 72).
                      (["add", "--type", "stepCount", "--value", "0x48"], "--value", "decimal number"),
                      (["add", "--type", "stepCount", "--value", "1e-400"], "--value", "decimal number"),
                      (["add", "--type", "stepCount", "--value", "1", "--sync-identifier", "a", "--sync-version", "v2"], "--sync-version", "whole number")])
    func badFlagDates(args: [String], flag: String, mentions: String) throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let r = try cli.run(args)
        #expect(r.code == 64, "\(args): \(r.code) \(r.err)")
        #expect(r.err.contains(flag) && r.err.contains(mentions), "\(r.err)")
    }

    @Test("--from/--to without a zone are read in --tz for stats, and in the system zone elsewhere")
    func flagLocalTime() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        for s in ["2026-11-01T22:30:00Z", "2026-11-01T23:30:00Z"] {
            #expect(try cli.run(["add", "--type", "stepCount", "--value", "10", "--start", s]).code == 0)
        }
        // Berlin's 2026-11-02 starts at 2026-11-01T23:00Z: only the second sample.
        let o = try #require(try cli.json(["stats", "--type", "stepCount", "--from", "2026-11-02", "--tz", "Europe/Berlin", "--json"]) as? [String: Any])
        #expect(o["sum"] as? Double == 10)
        let r = try HealthGateExecutable.run(["samples", "--json", "--from", "2026-11-02 00:00", "--db", cli.db], environment: ["TZ": "Europe/Berlin"])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        #expect(list.map { $0["start"] as? String } == ["2026-11-01T23:30:00Z"])
    }

    @Test("import refuses impossible and zoneless dates line by line, naming the line; the good lines are saved")
    func importBadDates() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let file = try cli.write("d.jsonl", """
            {"type":"stepCount","value":1,"start":"2026-11-02 08:30:00Z"}
            {"type":"stepCount","value":2,"start":"2026-02-30T08:00:00Z"}
            {"type":"stepCount","value":3,"start":"2026-11-02T25:00:00Z"}
            {"type":"stepCount","value":4,"start":"2026-11-02T08:00:00"}

            """)
        let r = try cli.run(["import", "--jsonl", file])
        #expect(r.code == 65)
        #expect(r.err.contains("d.jsonl:2: skipped: \"start\": day 30"))
        #expect(r.err.contains("d.jsonl:3: skipped: \"start\": hour 25"))
        #expect(r.err.contains("d.jsonl:4: skipped: \"start\": '2026-11-02T08:00:00' has no time zone"))
        #expect(try samples(cli).map { $0["start"] as? String } == ["2026-11-02T08:30:00Z"])
    }

    /// Samples with everything that can go wrong in a round trip: millisecond (and finer)
    /// fractions, values that are not short decimals, user metadata of each kind, devices, RR.
    static let richFile = """
        {"uuid":"019a4a5c-0000-7000-8000-000000000001","type":"heartRate","value":1.2,"unit":"count/s","start":"2026-11-02T08:00:00.941Z","end":"2026-11-02T08:00:01.941Z","source":{"name":"Strap","identifier":"org.healthgate.ble","version":"1"},"device":{"name":"H10","manufacturer":"Polar","model":"H10","hardwareVersion":"1","firmwareVersion":"3.1","softwareVersion":"2","localIdentifier":"ble:AA","udiDeviceIdentifier":"udi"},"metadata":{"heartRateSensorLocation":"chest","heartRateMotionContext":"active","sensorContact":"detected","syncIdentifier":"x","syncVersion":2,"note":"n","when":"2026-11-02T08:00:00.123Z","k":0.30000000000000004,"HGTimingUncertain":1},"rrIntervals":{"ticks":[1000,1010,65534],"precededByGap":true}}
        {"uuid":"019a4a5c-0000-7000-8000-000000000002","type":"stepCount","value":0.1,"start":"2026-11-02T08:00:00.001Z","end":"2026-11-02T08:10:00.999Z","source":"Watch"}
        {"uuid":"019a4a5c-0000-7000-8000-000000000003","type":"activeEnergyBurned","value":0.3333333333333333,"unit":"kcal","start":"2026-11-02T08:20:00.123456Z","end":"2026-11-02T08:21:00.123456789Z","source":"Watch","metadata":{"wasUserEntered":true}}
        {"uuid":"019a4a5c-0000-7000-8000-000000000004","type":"bodyMass","value":72.45,"unit":"kg","start":"2026-11-02T07:00:00Z"}

        """

    @Test("export jsonl → import into a new store → export is byte-identical (ms fractions, metadata, devices, RR)")
    func exactRoundTrip() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let imp = try cli.run(["import", "--jsonl", try cli.write("rich.jsonl", Self.richFile)])
        #expect(imp.code == 0, "\(imp.err)")
        let first = try cli.run(["export", "--format", "jsonl"])
        #expect(first.code == 0)
        #expect(first.out.contains("\"start\":\"2026-11-02T08:00:00.941Z\""))
        #expect(first.out.contains("\"start\":\"2026-11-02T08:20:00.123456Z\""))
        #expect(first.out.contains("\"k\":0.30000000000000004"))
        var previous = first.out
        for trip in 1...3 {
            let db = cli.dir.appendingPathComponent("trip\(trip).sqlite").path
            let file = try cli.write("trip\(trip).jsonl", previous)
            let r = try cli.run(["import", "--jsonl", file, "--db", db], db: false)
            #expect(r.code == 0, "\(r.err)")
            let again = try cli.run(["export", "--format", "jsonl", "--db", db], db: false)
            #expect(again.out == first.out, "trip \(trip) drifted")
            previous = again.out
        }
        #expect(first.out.split(separator: "\n").count == 4)
    }

    @Test("reserved metadata keys given through --metadata exit 64 with the flag to use instead",
          arguments: [("syncIdentifier=zz", "--sync-identifier"), ("heartRateSensorLocation=elbow", "--sensor-location"),
                      ("HKMetadataKeyHeartRateMotionContext=active", "--motion-context"), ("wasUserEntered=1", "add sets it")])
    func reservedMetadata(pair: String, advice: String) throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let r = try cli.run(["add", "--type", "heartRate", "--value", "70", "--metadata", pair])
        #expect(r.code == 64, "\(r.err)")
        #expect(r.err.contains("reserved") && r.err.contains(advice), "\(r.err)")
        // Nothing stored: refused before the store was even created (read-only `samples` would exit 66).
        if FileManager.default.fileExists(atPath: cli.db) { #expect(try samples(cli).isEmpty) }
    }

    @Test("the same sample imported twice with its keys in another order is stored once")
    func reorderedImportStoredOnce() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let a = try cli.write("a.jsonl", #"{"type":"stepCount","value":700,"start":"2026-11-02T08:00:00Z","end":"2026-11-02T09:00:00Z","source":"Watch"}"# + "\n")
        let b = try cli.write("b.jsonl", #"{"source":"Watch", "end":"2026-11-02T09:00:00Z", "start":"2026-11-02T08:00:00Z", "value":7e2, "type":"stepCount"}"# + "\n")
        #expect(try cli.run(["import", "--jsonl", a]).code == 0)
        let second = try cli.run(["import", "--jsonl", b, "--json"])
        let o = try #require(try JSONSerialization.jsonObject(with: Data(second.out.utf8)) as? [String: Any])
        #expect(o["inserted"] as? Int == 0 && o["duplicates"] as? Int == 1)
        let stats = try #require(try cli.json(["stats", "--type", "stepCount", "--json"]) as? [String: Any])
        #expect(stats["sum"] as? Double == 700)
    }

    @Test("CRLF line ends and a UTF-8 byte-order mark import every line")
    func crlfAndBOM() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let lines = (0..<3).map { #"{"type":"stepCount","value":\#($0 + 1),"start":"2026-11-02T08:0\#($0):00Z"}"# }
        let url = cli.dir.appendingPathComponent("crlf.jsonl")
        try Data([0xEF, 0xBB, 0xBF] + Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)).write(to: url)
        let r = try cli.run(["import", "--jsonl", url.path])
        #expect(r.code == 0, "\(r.err)")
        #expect(r.out.contains("3 inserted"))
        #expect(try samples(cli).count == 3)
    }

    @Test("one Latin-1 byte on line 1001 of 2,000 skips that line by number; the other 1,999 are saved")
    func latin1Line() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        var bytes: [UInt8] = []
        for i in 1...2000 {
            let line = #"{"type":"stepCount","value":1,"start":"2026-11-02T08:00:00Z","source":"S\#(i)"}"#
            var b = Array(line.utf8)
            if i == 1001 { b = Array(#"{"type":"stepCount","value":1,"start":"2026-11-02T08:00:00Z","source":"Caf"#.utf8) + [0xE9] + Array(#""}"#.utf8) }
            bytes += b + [0x0A]
        }
        let url = cli.dir.appendingPathComponent("latin1.jsonl")
        try Data(bytes).write(to: url)
        let r = try cli.run(["import", "--jsonl", url.path, "--json"])
        #expect(r.code == 65)
        #expect(r.err.contains("latin1.jsonl:1001: skipped: not UTF-8 text (byte 0xE9 at byte 75 of the line)"), "\(r.err)")
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        #expect(o["inserted"] as? Int == 1999)
        #expect((o["skippedLines"] as? [[String: Any]])?.map { $0["line"] as? Int } == [1001])
    }

    @Test("a UTF-16 file: every line is refused saying why (Foundation read the lines after the first as UTF-16BE and imported them)")
    func utf16File() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let text = (1...3).map { #"{"type":"stepCount","value":\#($0),"start":"2026-11-02T08:00:00Z","source":"S"}"# + "\n" }.joined()
        let url = cli.dir.appendingPathComponent("utf16.jsonl")
        try #require(text.data(using: .utf16LittleEndian).map { Data([0xFF, 0xFE]) + $0 }).write(to: url)
        let r = try cli.run(["import", "--jsonl", url.path, "--json"])
        #expect(r.code == 65)
        #expect(r.err.contains("utf16.jsonl:1: skipped: not UTF-8 text"), "\(r.err)")
        #expect(r.err.contains("utf16.jsonl:2: skipped: a NUL byte (0x00) at byte 1 of the line") && r.err.contains("is the file UTF-16?"), "\(r.err)")
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        #expect(o["inserted"] as? Int == 0)
    }

    @Test("file errors are one sentence with the right sysexits code, never a Foundation error")
    func fileErrors() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        #expect(try cli.run(["add", "--type", "stepCount", "--value", "1", "--start", "2026-11-02T08:00:00Z"]).code == 0)
        let cases: [([String], Int32, String)] = [
            (["import", "--jsonl", cli.dir.path], 66, "is a directory; give a file"),
            (["import", "--jsonl", cli.dir.appendingPathComponent("missing.jsonl").path], 66, "does not exist"),
            (["export", "--format", "jsonl", "--output", cli.dir.path], 73, "is a directory; give a file name"),
            (["export", "--format", "csv", "--output", cli.dir.appendingPathComponent("no/such/out.csv").path], 73, "parent directory does not exist"),
            (["simulate", "--straps", "1", "--pedometers", "0", "--dir", "/proc/x"], 73, "does not allow creating files"),
        ]
        for (args, code, mentions) in cases {
            let r = try cli.run(args, db: args[0] != "simulate")
            #expect(r.code == code, "\(args): \(r.code) \(r.err)")
            #expect(r.err.contains(mentions), "\(args): \(r.err)")
            #expect(!r.err.contains("NSCocoaErrorDomain") && !r.err.contains("error 256") && !r.err.contains("error 512"), "\(r.err)")
            #expect(r.err.split(separator: "\n").count == 1, "\(r.err)")
        }
        // --json still prints the summary when the file cannot be read.
        let j = try cli.run(["import", "--jsonl", cli.dir.path, "--json"])
        let o = try #require(try JSONSerialization.jsonObject(with: Data(j.out.utf8)) as? [String: Any])
        #expect(o["inserted"] as? Int == 0 && o["complete"] as? Bool == false && (o["error"] as? String)?.contains("directory") == true)
        // Export to a full device: 74, one sentence.
        let full = try cli.run(["export", "--format", "jsonl", "--output", "/dev/full"])
        #expect(full.code == 74 && full.err.contains("disk is full"), "\(full.err)")
    }

    @Test("a NUL in a source name is refused with a sentence, not cut short")
    func nulInSource() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let file = try cli.write("nul.jsonl", #"{"type":"stepCount","value":1,"start":"2026-11-02T08:00:00Z","source":"Watch\u0000Evil"}"# + "\n")
        let r = try cli.run(["import", "--jsonl", file])
        #expect(r.code == 65)
        #expect(r.err.contains("nul.jsonl:1: skipped: source contains a NUL character"), "\(r.err)")
        #expect(try samples(cli).isEmpty)
    }

    @Test("human output shows control characters from names as escapes, never raw")
    func controlCharactersEscaped() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let file = try cli.write("esc.jsonl", #"{"type":"stepCount","value":1,"start":"2026-11-02T08:00:00Z","source":"\u001b[2J\u001b[31mEvil","device":{"name":"dev\u0007\u009b"}}"# + "\n")
        #expect(try cli.run(["import", "--jsonl", file]).code == 0)
        for args in [["samples"], ["sources"], ["stats", "--type", "stepCount", "--separate-by-source"],
                     ["changes"]] {
            let r = try cli.run(args)
            #expect(!r.out.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x9B }, "\(args): raw control in \(r.out.debugDescription)")
            #expect(r.code == 0, "\(args): \(r.err)")
            #expect(r.out.contains("\\u{1B}[2J\\u{1B}[31mEvil"), "\(args): \(r.out) \(r.err)")
        }
        // JSON keeps the exact text (JSON escapes it).
        #expect(try samples(cli).first?["source"] as? String == "\u{1B}[2J\u{1B}[31mEvil")
    }

    @Test("CSV export: text cells starting with = + - @ or a tab get a leading apostrophe; numbers stay numbers")
    func csvInjection() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let sources = ["=cmd|' /C calc'!A0", "+1", "-2", "@SUM(A1)", "\tx", "plain"]
        for (i, s) in sources.enumerated() {
            #expect(try cli.run(["add", "--type", "heartRate", "--value", "70", "--start", "2026-11-02T08:0\(i):00Z",
                                 "--source=\(s)", "--device-name", "=HYPERLINK(\"x\")"]).code == 0)
        }
        let csv = try cli.run(["export", "--format", "csv"]).out.split(separator: "\n").dropFirst()
        let expected = ["'=cmd|' /C calc'!A0", "'+1", "'-2", "'@SUM(A1)", "'\tx", "plain"]
        for (row, source) in zip(csv, expected) {
            #expect(row.contains(",70.0,count/min,") && row.contains("," + source + ","), "\(row)")
            #expect(row.contains(#","'=HYPERLINK(""x"")","#), "\(row)")
        }
    }

    @Test("disk full during import (a real 1 MiB tmpfs): says which lines are saved, prints the JSON summary; the same import after freeing space saves the rest",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func diskFull() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let small = cli.dir.appendingPathComponent("small").path
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        try #require(mount("tmpfs", small, "tmpfs", 0, "size=1m") == 0, "mount: \(String(cString: strerror(errno)))")
        defer { umount2(small, Int32(MNT_DETACH)) }
        let n = 8_000
        let text = (1...n).map { #"{"type":"stepCount","value":\#($0),"start":"2026-11-02T08:00:00Z"}"# }
            .joined(separator: "\n") + "\n"
        let file = try cli.write("big.jsonl", text)
        let db = small + "/h.sqlite"
        let r = try cli.run(["import", "--jsonl", file, "--db", db, "--batch", "250", "--json"], db: false)
        #expect(r.code == 74, "\(r.err)")
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any], "no JSON summary: \(r.out)")
        let saved = try #require(o["committedThroughLine"] as? Int)
        #expect(saved > 0 && saved < n && saved % 250 == 0, "\(o)")
        #expect(o["inserted"] as? Int == saved && o["complete"] as? Bool == false)
        #expect((o["error"] as? String)?.contains("the disk is full") == true)
        #expect(r.err.contains("because the disk is full: lines 1–\(saved) of \(file) are saved"), "\(r.err)")
        #expect(r.err.contains("lines from \(saved + 1) on were not saved"), "\(r.err)")
        #expect(!r.err.contains("nothing was half-written"))
        // Free space; the same import stores exactly the rest.
        try #require(mount("tmpfs", small, "tmpfs", UInt(MS_REMOUNT), "size=64m") == 0)
        let again = try cli.run(["import", "--jsonl", file, "--db", db, "--json"], db: false)
        #expect(again.code == 0, "\(again.err)")
        let o2 = try #require(try JSONSerialization.jsonObject(with: Data(again.out.utf8)) as? [String: Any])
        #expect(o2["inserted"] as? Int == n - saved && o2["duplicates"] as? Int == saved && o2["complete"] as? Bool == true)
    }
}
