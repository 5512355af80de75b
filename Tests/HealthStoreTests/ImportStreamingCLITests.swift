import ChildProcess
import Foundation
import HealthGateTesting
import HealthModel
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `healthgate import` as a stream (issue 12): JSON arrays, memory that does not grow with the
/// file, progress only on a terminal.
@Suite("Import streaming end to end: JSON arrays, constant memory, progress on a terminal", .serialized)
struct ImportStreamingCLITests {
    /// Line `i` of a heart-rate file in the export shape (what the bench imports).
    static func line(_ i: Int) -> String {
        let t = ISO8601.string(Date(timeIntervalSince1970: 1_793_577_600 + Double(i) + Double(i % 1000) / 1000))
        let uuid = String(format: "01a19b45-%04x-7%03x-8%03x-%012x", (i >> 16) & 0xFFFF, i & 0xFFF, (i >> 12) & 0xFFF, i)
        return #"{"device":{"localIdentifier":"bench:strap","name":"Bench strap"},"end":"\#(t)","metadata":{"heartRateSensorLocation":"chest","sensorContact":"detected"},"rrIntervals":{"precededByGap":false,"ticks":[\#(600 + i % 400)]},"source":"HealthGate BLE","sourceIdentifier":"org.healthgate.ble","start":"\#(t)","type":"heartRate","unit":"count/min","uuid":"\#(uuid)","value":\#(60 + i % 40)}"#
    }

    static func writeFile(_ path: String, count: Int, array: Bool) throws {
        guard let out = FileHandle(forWritingAtPath: path) ?? {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)
        }() else { throw CocoaError(.fileWriteUnknown) }
        defer { try? out.close() }
        var block = array ? "[\n" : ""
        for i in 0..<count {
            block += line(i) + (array ? (i == count - 1 ? "\n]\n" : ",\n") : "\n")
            if block.utf8.count > 1 << 20 { try out.write(contentsOf: Data(block.utf8)); block = "" }
        }
        try out.write(contentsOf: Data(block.utf8))
    }

    /// Runs `healthgate args` (``ChildProcess/WatchedChild``: stdin and stdout /dev/null, stderr
    /// to `stderrFD` or /dev/null), bounded at 300 s: the exit status and the child's peak
    /// anonymous memory (`RssAnon`) in bytes.
    static func spawn(_ args: [String], stderrFD: Int32? = nil) throws -> (status: Int32, maxRSS: Int) {
        let exe = try #require(HealthGateExecutable.url?.path)
        let r = try WatchedChild.run([exe] + args, stderr: stderrFD.map { .descriptor($0) } ?? .null, timeout: 300)
        return (r.status, r.peakAnonymousBytes)
    }

    @Test("peak RSS of import does not grow with the file: 10,000 vs 50,000 samples, JSON lines and a JSON array")
    func memoryStaysFlat() async throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        try await offThreadOneAtATime {
            for array in [false, true] {
                var rss: [Int] = []
                for count in [10_000, 50_000] {
                    let file = cli.dir.appendingPathComponent("hr-\(count).\(array ? "json" : "jsonl")").path
                    try Self.writeFile(file, count: count, array: array)
                    let db = cli.dir.appendingPathComponent("m-\(count)-\(array).sqlite").path
                    let r = try Self.spawn(["import", array ? "--json-array" : "--jsonl", file, "--db", db])
                    #expect(r.status == 0)
                    rss.append(r.maxRSS)
                    try? FileManager.default.removeItem(atPath: file)
                }
                // The bigger file is 5x the smaller (~22 MB vs ~4 MB); reading it whole would add
                // tens of MB. Streaming keeps the difference to noise (batch buffers, SQLite cache).
                #expect(rss[1] - rss[0] < 8 << 20, "\(array ? "array" : "lines"): peak RSS \(rss[0] >> 20) MiB for 10,000 samples, \(rss[1] >> 20) MiB for 50,000")
                #expect(rss[1] < 64 << 20, "peak RSS \(rss[1] >> 20) MiB")
                #expect(rss[0] > 1 << 20, "no memory figure was read from /proc (\(rss[0]) bytes): the check above would pass vacuously")
            }
        }
    }

    @Test("a JSON array (samples --json) imports like JSON lines; a bad element is skipped by number; not an array exits 65")
    func jsonArray() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        for (i, v) in [60.0, 90, 75].enumerated() {
            #expect(try cli.run(["add", "--type", "heartRate", "--value", String(v), "--start", "2026-11-02T08:0\(i):00.25Z",
                                 "--sensor-location", "chest", "--metadata", "note=é"]).code == 0)
        }
        let array = try cli.run(["samples", "--json"])
        let file = try cli.write("all.json", array.out)
        let other = cli.dir.appendingPathComponent("other.sqlite").path
        let imp = try cli.run(["import", "--json-array", file, "--db", other], db: false)
        #expect(imp.code == 0 && imp.err.isEmpty, "\(imp.err)")   // no progress line off a terminal
        #expect(imp.out.contains("3 inserted"))
        #expect(try cli.run(["export", "--format", "jsonl", "--db", other], db: false).out == cli.run(["export", "--format", "jsonl"]).out)

        let bad = try cli.write("bad.json", """
            [{"type":"stepCount","value":5,"start":"2026-11-03T08:00:00Z"},
             {"type":"stepCount","value":"lots","start":"2026-11-03T08:00:00Z"},
             {"type":"stepCount","value":6,"start":"2026-11-03T09:00:00Z"}]
            """)
        let r = try cli.run(["import", "--json-array", bad, "--json"])
        #expect(r.code == 65)
        #expect(r.err.contains("bad.json: element 2 (line 2): skipped:"), "\(r.err)")
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        #expect(o["inserted"] as? Int == 2 && o["elementsRead"] as? Int == 3 && o["complete"] as? Bool == true)
        #expect((o["skippedElements"] as? [[String: Any]])?.first?["element"] as? Int == 2)

        let notArray = try cli.write("one.json", #"{"type":"stepCount","value":5,"start":"2026-11-03T08:00:00Z"}"#)
        let n = try cli.run(["import", "--json-array", notArray, "--json"])
        #expect(n.code == 65 && n.err.contains("does not start with '['"), "\(n.err)")
        let no = try #require(try JSONSerialization.jsonObject(with: Data(n.out.utf8)) as? [String: Any])
        #expect(no["complete"] as? Bool == false && no["inserted"] as? Int == 0)

        let cut = try cli.write("cut.json", #"[{"type":"stepCount","value":7,"start":"2026-11-04T08:00:00Z"},{"type":"#)
        let c = try cli.run(["import", "--json-array", cut])
        #expect(c.code == 65 && c.err.contains("ends inside element 2"), "\(c.err)")
        #expect(c.out.contains("1 inserted"))

        let none = try cli.run(["import"])
        #expect(none.code == 64 && none.err.contains("--jsonl FILE"), "\(none.err)")
        let help = try cli.run(["import", "--help"], db: false)
        #expect(help.code == 0 && help.err.isEmpty && help.out.contains("--json-array"), "\(help.err)")
        #expect(try cli.run(["import", "--jsonl", file, "--json-array", file]).code == 64)
    }

    @Test("on a terminal, progress (records, rate, bytes of the total) is drawn on stderr and erased at the end")
    func progressOnATerminal() async throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let file = cli.dir.appendingPathComponent("p.jsonl").path
        try Self.writeFile(file, count: 60_000, array: false)
        var master: Int32 = -1, slave: Int32 = -1
        try #require(openpty(&master, &slave, nil, nil, nil) == 0)
        defer { close(master) }
        let (m, s) = (master, slave)
        let reader = OutputCollector(fd: m)
        reader.start()
        let r = try await offThread { try Self.spawn(["import", "--jsonl", file, "--db", cli.db], stderrFD: s) }
        close(slave)
        let text = reader.finish()
        #expect(r.status == 0)
        #expect(text.contains("importing \(file): "), "\(text)")
        #expect(text.contains(" records, ") && text.contains("/s, ") && text.contains(" MB of "), "\(text)")
        #expect(text.hasSuffix("\r\u{1B}[K"), "the progress line is not erased at the end: \(text.suffix(80))")
    }
}

/// Collects what a terminal's master side receives, on a thread of its own.
final class OutputCollector: @unchecked Sendable {
    private let fd: Int32
    private let lock = NSLock()
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(fd: Int32) { self.fd = fd }

    func start() {
        Thread { [self] in
            var buf = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(fd, &buf, buf.count)
                if n <= 0 { break }   // EIO once every slave descriptor is closed
                lock.lock(); data.append(contentsOf: buf[0..<n]); lock.unlock()
            }
            done.signal()
        }.start()
    }

    func finish() -> String {
        _ = done.wait(timeout: .now() + 30)
        lock.lock(); defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }
}
