import Capture
import ChildProcess
import Foundation
import Gateway
import HealthModel
import HealthStore
import Ingest
import Logging
import Simulators
import Sysexits

/// The `store` part of `healthgate-bench` (issue #12's storage and SD-card goals, one run):
///
/// - **size**: a generated day of one strap at 1 Hz (86,400 notifications; with RR intervals
///   and without) replayed by the built `healthgate replay --max` (the product's path: series),
///   VACUUMed, the file divided by the heart-rate samples stored. The baseline in the same run is
///   the same capture stored one row per reading (`StoreSink(storage: .individual)`, what the
///   store did before series), VACUUMed alike.
/// - **writes**: `healthgate run` fed by 10 simulated straps at 1 Hz and 4 pty pedometers (then
///   the straps alone) at the default 250 ms flush interval; over a steady window, the daemon's
///   `/proc/PID/io` `write_bytes` and its status line's samples and store commits: bytes written
///   per sample against the floor of one 4 KiB page per commit for the same commit count.
///
/// `scripts/store-size.sh` and `scripts/write-profile.sh` measure the same in shell (with the
/// WAL page breakdown); this part puts the figures beside every other goal's.
extension Bench {
    /// One storage figure: bytes per heart-rate sample of a VACUUMed store.
    struct SizeFigure {
        var samples = 0
        var fileBytes = 0
        var perSample: Double { Double(fileBytes) / Double(max(1, samples)) }
    }

    /// Writes a capture of `seconds` notifications of one strap at 1 Hz: receipt times on the
    /// millisecond with a few ms of jitter, heart rate drifting, one or two RR intervals each when
    /// `rr` (what `scripts/store-size.sh` generates; the same seed, a different generator).
    static func dayCapture(path: String, seconds: Int, rr: Bool) throws {
        var rng = SplitMix64(seed: 12)
        let device = #""device":{"name":"Day Strap","manufacturer":"HealthGate","model":"SIM-HR1","localIdentifier":"AA:BB:CC:DD:EE:42"},"address":"AA:BB:CC:DD:EE:42""#
        var text = #"{"format":"healthgate-capture","version":1}"# + "\n"
        text.reserveCapacity(seconds * 200)
        var carry = 0.0
        let hex = Array("0123456789ABCDEF")
        for i in 0..<seconds {
            let ms = Int64(1_790_000_000) * 1000 + Int64(i) * 1000 + Int64(Int.random(in: -4...4, using: &rng))
            let bpm = Int(70 + 20 * sin(Double(i) / 900)) + Int.random(in: -2...2, using: &rng)
            var bytes: [UInt8] = [rr ? 0x16 : 0x06, UInt8(bpm)]
            if rr {
                carry += Double(bpm) / 60
                let beats = Int(carry)
                carry -= Double(beats)
                for _ in 0..<beats {
                    let ticks = 60 * 1024 / bpm + Int.random(in: -20...20, using: &rng)
                    bytes += [UInt8(ticks & 0xFF), UInt8(ticks >> 8)]
                }
            }
            var h = ""
            for b in bytes { h.append(hex[Int(b >> 4)]); h.append(hex[Int(b & 0xF)]) }
            text += #"{"t":\#(ms / 1000).\#(String(format: "%03d", ms % 1000)),"kind":"ble",\#(device),"characteristic":"2A37","hex":"\#(h)"}"# + "\n"
        }
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// Replays `capture` into a fresh store at `path`: through the built `healthgate replay --max`
    /// (`healthgate` given: the product's path), or in this process with every reading one row
    /// (`healthgate` nil: the baseline). Then checkpoints, VACUUMs and measures.
    static func storeSize(capture: String, path: String, healthgate: URL?) throws -> SizeFigure {
        if let healthgate {
            let status = try WatchedChild.run([healthgate.path, "replay", capture, "--max", "--db", path], stderr: .file(path + ".log"),
                                              timeout: 1800).status
            guard status == 0 else {
                let log = (try? String(contentsOfFile: path + ".log", encoding: .utf8)) ?? ""
                throw CLIFailure("`healthgate replay --max` of the day capture exited \(status): \(log.suffix(2000))", code: .software)
            }
        } else {
            let store = try HealthStore(path: path)
            let runtime = try GatewayRuntime(sink: try StoreSink(store: store, storage: .individual), store: store,
                                             configuration: IngestConfiguration(), logger: Logger(label: "bench.replay") { _ in SwiftLogNoOpLogHandler() })
            let reader = try CaptureReader(path: capture)
            _ = try runtime.run(sources: [ReplaySource(file: capture, records: reader.records, speed: nil)],
                                endWhenSourcesEnd: true, statusInterval: .seconds(3600))
        }
        let store = try HealthStore(path: path)
        try store.withConnection { try $0.execute("PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA wal_checkpoint(TRUNCATE)") }
        var f = SizeFigure()
        f.samples = try store.count(SampleQuery(type: .heartRate))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        f.fileBytes = (attributes[.size] as? NSNumber)?.intValue ?? 0
        return f
    }

    /// One SD-card write figure of a `healthgate run` child over a steady window.
    struct WriteFigure {
        var seconds = 0.0
        var samples = 0
        var commits = 0
        var bytesWritten = 0
        var perSample: Double { Double(bytesWritten) / Double(max(1, samples)) }
        /// One 4 KiB page per commit, per sample: the least a commit can write.
        var floorPerSample: Double { Double(commits * 4096) / Double(max(1, samples)) }
        var ratio: Double { Double(bytesWritten) / Double(max(1, commits * 4096)) }
    }

    /// `healthgate run` with 10 simulated straps at 1 Hz and `pedometers` pty pedometers at
    /// 1 reading/s, flush interval 250 ms (the shipped default), its store in `directory` (a real
    /// disk: tmpfs counts no writes). Once every strap is subscribed, `write_bytes` and the status
    /// line's samples and commits are read on a status line, again `seconds` later.
    static func writeProfile(seconds: Int, pedometers: Int, directory: String, healthgate: URL) throws -> WriteFigure {
        let log = directory + "/run.log"
        let (load, child) = try runAgainstSimulatedLoad(pedometers: pedometers, directory: directory, store: directory + "/writes.sqlite",
                                                        healthgate: healthgate, statusInterval: 1, stderr: .file(log))
        defer { child.kill(); load.stop() }

        // (time, write_bytes, samples committed, store commits) at the newest status line.
        var consumed = 0
        func next(deadline: ContinuousClock.Instant) throws -> (Double, Int, Int, Int, subscribed: Int) {
            while true {
                guard try child.poll() else {
                    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                    throw CLIFailure("the write profile's `healthgate run` child exited early (status \(child.exitStatus ?? -1)): \(text.suffix(2000))", code: .software)
                }
                guard ContinuousClock.now < deadline else {
                    throw CLIFailure("the write profile's `healthgate run` child printed no status line in time (\(load.subscribedStraps) of 10 straps subscribed)", code: .tempFail)
                }
                let data = (try? Data(contentsOf: URL(fileURLWithPath: log))) ?? Data()
                if data.count > consumed {
                    let text = String(decoding: data[consumed...], as: UTF8.self)
                    consumed = data.count
                    if let m = text.matches(of: Self.statusPattern).last,
                       let bytes = ioWriteBytes(child.pid) {
                        return (Date().timeIntervalSince1970, bytes, Int(m.output.3) ?? 0, Int(m.output.4) ?? 0, Int(m.output.1) ?? 0)
                    }
                }
                usleep(20_000)
            }
        }
        let ready = ContinuousClock.now + .seconds(180)
        while try next(deadline: ready).subscribed < 10 {}
        _ = try next(deadline: ready)   // one more line: the window starts on a steady second
        let a = try next(deadline: ContinuousClock.now + .seconds(30))
        var b = a
        while b.0 - a.0 < Double(seconds) { b = try next(deadline: ContinuousClock.now + .seconds(30)) }
        child.signal(SIGTERM)
        _ = try? child.wait(timeout: 60)
        return WriteFigure(seconds: b.0 - a.0, samples: b.2 - a.2, commits: b.3 - a.3, bytesWritten: b.1 - a.1)
    }

    /// `healthgate run`'s status line: straps subscribed, samples committed, store commits.
    nonisolated(unsafe) static let statusPattern = #/(\d+)/(\d+) straps subscribed.*?(\d+) committed in \d+ batches.*?(\d+) store commits/#

    /// `write_bytes` of `/proc/PID/io`: what the process sent to the storage layer.
    static func ioWriteBytes(_ pid: pid_t) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("write_bytes:") {
            return Int(line.dropFirst("write_bytes:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}

extension HealthGateBench {
    func storePart(into out: inout [String: Any], dir: String, say: (String) -> Void) throws {
        let daemon = try healthgateExecutable()
        say("== store size (\(storeSeconds) s of one strap at 1 Hz replayed with `healthgate replay --max`, VACUUMed; baseline: the same capture one row a reading)")
        for (rr, label, key) in [(true, "heart rate with RR", "storeBytesPerHeartRateSampleWithRR"), (false, "heart rate alone  ", "storeBytesPerHeartRateSample")] {
            let capture = dir + "/day-\(rr ? "rr" : "hr").capture.jsonl"
            try Bench.dayCapture(path: capture, seconds: storeSeconds, rr: rr)
            let series = try Bench.storeSize(capture: capture, path: dir + "/day-\(rr ? "rr" : "hr").sqlite", healthgate: daemon)
            let rows = try Bench.storeSize(capture: capture, path: dir + "/day-\(rr ? "rr" : "hr")-rows.sqlite", healthgate: nil)
            guard series.samples == rows.samples, series.samples == storeSeconds else {
                throw CLIFailure("the size part stored \(series.samples) heart-rate samples as series and \(rows.samples) as rows for \(storeSeconds) notifications: not the same data", code: .software)
            }
            say(String(format: "  %@  %6.2f B/sample (file %d B, %d samples); one row a reading %.1f B/sample: %.1fx smaller%@",
                       label, series.perSample, series.fileBytes, series.samples, rows.perSample, rows.perSample / series.perSample,
                       rr ? " (goal <= 8 B)" : ""))
            out[key] = series.perSample
            out[key + "Rows"] = rows.perSample
        }

        let base = ProcessInfo.processInfo.environment["HG_BENCH_WRITES_DIR"] ?? "/var/tmp"
        say("== store writes (healthgate run, flush 250 ms, \(writesSeconds) s steady; store under \(base): tmpfs would count no writes)")
        for (pedometers, label, key) in [(4, "10 straps + 4 pedometers", "writes"), (0, "10 straps alone         ", "writesStrapsOnly")] {
            let work = base + "/hg-bench-writes-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: work) }
            let f = try Bench.writeProfile(seconds: writesSeconds, pedometers: pedometers, directory: work, healthgate: daemon)
            say(String(format: "  %@  %d samples in %d commits (%.2f commits/s): %.0f B written a sample; floor (a 4 KiB page a commit) %.0f B a sample; ratio %.2f (goal <= 1.5)",
                       label, f.samples, f.commits, Double(f.commits) / max(f.seconds, 1e-9), f.perSample, f.floorPerSample, f.ratio))
            out[key + "BytesPerSample"] = f.perSample
            out[key + "FloorBytesPerSample"] = f.floorPerSample
            out[key + "RatioToFloor"] = f.ratio
        }
    }
}
