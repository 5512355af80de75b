import ArgumentParser
import CSQLite
import Foundation
import Gateway
import HealthGateTesting
import HealthModel
import HealthStore
import HeartRateProfile
import Ingest
import Synchronization
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `healthgate bench`: the ingest benchmarks, each with its baseline measured in the same run.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the ingest hot path, end-to-end throughput against the raw SQLite ceiling and Python loggers, footprint and latency.",
        discussion: """
            Every ratio compares figures measured in this same run on this machine (docs/performance.md):
              hot path     HRM decode + ring push, ns/sample; heap allocations per sample (every
                           malloc/calloc/realloc in the loop, counted by glibc's mtrace in a child); ring items/s
              end to end   samples/s from producer to committed rows (StoreSink, one transaction per
                           batch, synchronous=FULL) and the raw C-API ceiling for the same rows,
                           schema and indexes; their ratio (goal >= 0.85)
              python       Benchmarks/python/logger.py (INSERT+commit per notification) and
                           batched.py (executemany, 1,000 per transaction): ratios (goals >= 20x, >= 3x)
              footprint    peak RSS and CPU of a `healthgate run` child fed by 10 simulated straps at
                           1 Hz (Unix sockets) and 4 pty pedometers, simulated in the bench process
              latency      push -> observer (after commit), p50/p99, at the default 250 ms flush interval
            Build with -c release for meaningful figures. With --json the last line is one JSON object.

            Example:
              swift build -c release && .build/release/healthgate bench --json
            """)

    @Option(help: "Samples for the end-to-end runs.")
    var samples: Int = 200_000

    @Option(help: "Rows for the per-notification Python logger (it is slow).")
    var loggerRows: Int = 20_000

    @Option(help: "Seconds of the footprint run.")
    var footprintSeconds: Int = 12

    @Option(help: "Directory holding logger.py and batched.py.")
    var pythonDir: String = "Benchmarks/python"

    @Option(help: .hidden)
    var hotPathChild: Int?

    @Flag(help: "End with one JSON object holding every figure.")
    var json = false

    func run() throws {
        try reporting {
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("hg-bench-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: work) }
            var out: [String: Any] = [:]
            func say(_ s: String) { print(s); fflush(nil) }

            if let n = hotPathChild {   // the traced child of allocationsPerSample
                _ = Bench.hotPath(count: n, trace: true)
                return
            }
            say("== hot path")
            let hot = Bench.hotPath(count: 2_000_000)
            say(String(format: "  decode + enqueue        %.1f ns/sample", hot.nsPerSample))
            let allocs = Bench.allocationsPerSample(count: 200_000)
            if let allocs {
                say("  allocations per sample  \(allocs.perSample) (\(allocs.total) malloc/calloc/realloc calls in 200000 decode+enqueue, glibc mtrace)")
            } else {
                say("  allocations per sample  not measured (glibc's malloc tracer libc_malloc_debug.so.0 missing or not working)")
            }
            let ringRate = Bench.ringThroughput(count: 20_000_000)
            say(String(format: "  ring (SPSC, 64-byte records)  %.1f M items/s", ringRate / 1e6))
            out["decodeEnqueueNsPerSample"] = hot.nsPerSample
            out["allocationsPerSample"] = allocs.map { $0.perSample as Any } ?? NSNull()
            out["ringItemsPerSecond"] = ringRate

            say("== end to end (\(samples) heart-rate samples with RR, batches of 1,000, synchronous=FULL)")
            let e2e = try Bench.endToEnd(count: samples, path: work + "/e2e.sqlite")
            let raw = try Bench.rawCeiling(count: samples, path: work + "/raw.sqlite")
            let ratio = e2e / raw
            say(String(format: "  pipeline (decode, ring, writer, commit)  %.0f samples/s", e2e))
            say(String(format: "  raw C-API ceiling (same rows, indexes)   %.0f rows/s", raw))
            say(String(format: "  ratio                                    %.2f (goal >= 0.85)", ratio))
            out["e2eSamplesPerSecond"] = e2e
            out["rawCeilingSamplesPerSecond"] = raw
            out["ratio"] = ratio

            say("== python baselines")
            let template = work + "/template.sqlite"
            _ = try HealthStore(path: template)
            if let logger = Bench.python(script: pythonDir + "/logger.py", template: template, rows: loggerRows, work: work) {
                say(String(format: "  per-notification INSERT+commit  %.0f rows/s  -> HealthGate %.1fx (goal >= 20x)", logger, e2e / logger))
                out["pythonLoggerRowsPerSecond"] = logger
                out["pythonLoggerRatio"] = e2e / logger
            } else {
                say("  per-notification logger: not run (python3 or \(pythonDir)/logger.py missing)")
                out["pythonLoggerRatio"] = NSNull()
            }
            if let batched = Bench.python(script: pythonDir + "/batched.py", template: template, rows: samples, work: work) {
                say(String(format: "  batched executemany             %.0f rows/s  -> HealthGate %.1fx (goal >= 3x)", batched, e2e / batched))
                out["pythonBatchedRowsPerSecond"] = batched
                out["pythonBatchedRatio"] = e2e / batched
            } else {
                out["pythonBatchedRatio"] = NSNull()
            }

            say("== footprint (healthgate run: 10 simulated straps at 1 Hz over Unix sockets, 4 pty pedometers, \(footprintSeconds) s)")
            let fp = try Bench.footprint(seconds: footprintSeconds, path: work + "/fp.sqlite", work: work)
            say(String(format: "  max RSS %.1f MiB, CPU %.2f%% of one core (the run process alone; %d samples stored)", Double(fp.rss) / 1_048_576, fp.cpuPercent, fp.committed))
            out["rssBytes"] = fp.rss
            out["cpuPercent"] = fp.cpuPercent

            say("== latency (push -> observer after commit, flush interval 250 ms, 1 kHz for 3 s)")
            let lat = try Bench.latency(path: work + "/lat.sqlite")
            say(String(format: "  p50 %.1f ms, p99 %.1f ms", lat.p50, lat.p99))
            out["p50LatencyMs"] = lat.p50
            out["p99LatencyMs"] = lat.p99

            if json {
                let data = try JSONSerialization.data(withJSONObject: out, options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
                fflush(nil)
            }
        }
    }
}

/// The benchmarks themselves.
enum Bench {
    struct Hot { var nsPerSample: Double; var count: Int }

    static func hotPath(count: Int, trace: Bool = false) -> Hot {
        let ring = SampleRing(capacity: 65_536, policy: .dropNewest)
        let running = Atomic<Bool>(true)
        let done = DispatchSemaphore(value: 0)
        let consumer = Thread {
            let buf = UnsafeMutableBufferPointer<SampleRecord>.allocate(capacity: 4_096)
            while running.load(ordering: .relaxed) || !ring.ringIsEmpty { _ = ring.drain(into: buf) }
            buf.deallocate()
            done.signal()
        }
        consumer.start()
        // A strap's notification: flags (uint8 bpm, contact detected, RR present), 72 bpm, 2 RR.
        let payload: [UInt8] = [0x16, 72, 0x52, 0x03, 0x60, 0x03]
        // Warm up (first-use allocations of the decoder and ring are not per sample).
        payload.withUnsafeBytes { raw in _ = try? HeartRateMeasurement.decode(raw) }
        typealias Hook = @convention(c) () -> Void
        // The tracer's own mtrace (libc's is a stub): look it up in the preloaded library itself.
        let tracer = trace ? ProcessInfo.processInfo.environment["LD_PRELOAD"].flatMap { dlopen($0, RTLD_NOW | RTLD_NOLOAD) } : nil
        // Its mtrace is a non-default symbol version, which only dlvsym finds (not in Glibc's module).
        typealias DLVSym = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>, UnsafePointer<CChar>) -> UnsafeMutableRawPointer?
        let dlvsym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "dlvsym").map { unsafeBitCast($0, to: DLVSym.self) }
        func traced(_ name: String) -> Hook? {
            guard let tracer, let dlvsym, let f = dlvsym(tracer, name, "GLIBC_2.2.5") else { return nil }
            return unsafeBitCast(f, to: Hook.self)
        }
        let mtrace = traced("mtrace")
        let muntrace = traced("muntrace")
        mtrace?()
        let start = ContinuousClock.now
        payload.withUnsafeBytes { raw in
            for i in 0..<count {
                guard let m = try? HeartRateMeasurement.decode(raw) else { continue }
                var r = SampleRecord(typeSlot: 0, value: Double(m.beatsPerMinute), start: Double(i), end: Double(i),
                                     sourceSlot: 0, deviceSlot: 0, flags: [.contactSupported, .contactDetected])
                for t in m.rrIntervals { r.appendRR(t) }
                while ring.push(r) == .dropped {}   // keep every sample: wait for the consumer
            }
        }
        let elapsed = start.duration(to: .now)
        muntrace?()
        running.store(false, ordering: .relaxed)
        done.wait()
        return Hot(nsPerSample: seconds(elapsed) * 1e9 / Double(count), count: count)
    }

    /// Counts every malloc/calloc/realloc of the hot loop: re-runs it in a child with glibc's
    /// malloc tracer (libc_malloc_debug.so preloaded, mtrace() around the loop only) and counts
    /// the allocation lines. Nil when the tracer library is missing.
    static func allocationsPerSample(count: Int) -> (perSample: Double, total: Int)? {
        let candidates = ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu"]
            .map { $0 + "/libc_malloc_debug.so.0" }
        guard let lib = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else { return nil }
        let traceFile = FileManager.default.temporaryDirectory.appendingPathComponent("hg-mtrace-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: traceFile) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardized
        p.arguments = ["bench", "--hot-path-child", String(count)]
        var env = ProcessInfo.processInfo.environment
        env["LD_PRELOAD"] = lib
        env["MALLOC_TRACE"] = traceFile
        p.environment = env
        p.standardOutput = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return nil }
        p.waitUntilExit()
        guard p.terminationStatus == 0, let text = try? String(contentsOfFile: traceFile, encoding: .utf8) else { return nil }
        // mtrace lines: "@ caller + 0xADDR 0xSIZE" (malloc), "@ caller < 0xOLD" / "> 0xNEW 0xSIZE" (realloc), "- 0xADDR" (free).
        let allocations = text.split(separator: "\n").filter { $0.contains(" + ") || $0.contains(" > ") }.count
        return (Double(allocations) / Double(count), allocations)
    }

    static func ringThroughput(count: Int) -> Double {
        let ring = SampleRing(capacity: 65_536, policy: .dropNewest)
        let done = DispatchSemaphore(value: 0)
        let consumer = Thread {
            let buf = UnsafeMutableBufferPointer<SampleRecord>.allocate(capacity: 4_096)
            var got = 0
            while got < count { got += ring.drain(into: buf) }
            buf.deallocate()
            done.signal()
        }
        let r = SampleRecord(typeSlot: 0, value: 60, start: 0, end: 0, sourceSlot: 0)
        let start = ContinuousClock.now
        consumer.start()
        for _ in 0..<count { while ring.push(r) == .dropped {} }
        done.wait()
        return Double(count) / seconds(start.duration(to: .now))
    }

    /// Producer -> committed rows through the real pipeline and StoreSink.
    static func endToEnd(count: Int, path: String) throws -> Double {
        let store = try HealthStore(path: path)
        let pipeline = try IngestPipeline(sink: try StoreSink(store: store),
                                          configuration: IngestConfiguration(batchSize: 1_000, flushInterval: .milliseconds(50), ringCapacity: 65_536))
        let slots = pipeline.slots
        let hr = try slots.slot(for: .heartRate)
        let src = try slots.slot(for: StrapSource.source)
        let dev = try slots.slot(for: Device(name: "Bench strap", localIdentifier: "bench:strap"))
        let ring = try pipeline.makeRing(name: "bench")
        pipeline.start()
        let base = Date().timeIntervalSince1970
        let start = ContinuousClock.now
        var payload: [UInt8] = [0x16, 72, 0x52, 0x03]
        for i in 0..<count {
            payload[1] = UInt8(60 + i % 40)
            let m = payload.withUnsafeBytes { try? HeartRateMeasurement.decode($0) }
            guard let m else { continue }
            let t = base + Double(i) * 0.001
            var r = SampleRecord(typeSlot: hr, value: Double(m.beatsPerMinute), start: t, end: t, sourceSlot: src,
                                 deviceSlot: dev, flags: [.contactSupported, .contactDetected])
            for tick in m.rrIntervals { r.appendRR(tick) }
            while ring.push(r) == .dropped {}
        }
        ring.close()
        let final = pipeline.stop()
        let elapsed = seconds(start.duration(to: .now))
        guard final.committed == UInt64(count) else {
            throw CLIFailure("benchmark pipeline committed \(final.committed) of \(count) samples", code: .software)
        }
        return Double(count) / elapsed
    }

    /// The same rows through the raw C API: one prepared insert, 1,000 per transaction, same
    /// schema and indexes (a database HealthStore created), synchronous=FULL.
    static func rawCeiling(count: Int, path: String) throws -> Double {
        _ = try HealthStore(path: path)
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK, let db else { throw CLIFailure("cannot open \(path)", code: .ioError) }
        defer { sqlite3_close(db) }
        sqlite3_exec(db, "PRAGMA synchronous=FULL; INSERT INTO sources(identifier,name,tier,rank,first_seen) VALUES('bench','bench',1,1,0)", nil, nil, nil)
        let sql = """
            INSERT INTO samples(uuid, type_id, value, start, "end", source_id, device_id, sensor_location,
                                sensor_contact, motion_context, sync_identifier, sync_version, metadata, rr, rr_gap)
            VALUES (?, 1, ?, ?, ?, 1, NULL, NULL, 3, NULL, NULL, NULL, NULL, ?, 0) ON CONFLICT(uuid) DO NOTHING
            """
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &stmt, nil) == SQLITE_OK, let stmt else { throw CLIFailure("prepare failed", code: .software) }
        defer { sqlite3_finalize(stmt) }
        let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
        var rng = SystemRandomNumberGenerator()
        let base = Date().timeIntervalSince1970
        let ms = UInt64(base * 1000)
        let start = ContinuousClock.now
        var i = 0
        while i < count {
            sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil)
            for _ in 0..<min(1_000, count - i) {
                let t = base + Double(i) * 0.001
                var uuid = (((ms + UInt64(i >> 12)) << 16 | 0x7000 | UInt64(i & 0xFFF)).bigEndian,
                            ((rng.next() as UInt64) & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000).bigEndian)
                var rr = UInt16(850).littleEndian
                withUnsafeBytes(of: &uuid) { _ = sqlite3_bind_blob(stmt, 1, $0.baseAddress, 16, transient) }
                sqlite3_bind_double(stmt, 2, Double(60 + i % 40))
                sqlite3_bind_double(stmt, 3, t)
                sqlite3_bind_double(stmt, 4, t)
                withUnsafeBytes(of: &rr) { _ = sqlite3_bind_blob(stmt, 5, $0.baseAddress, 2, transient) }
                guard sqlite3_step(stmt) == SQLITE_DONE else { throw CLIFailure("raw insert failed: \(String(cString: sqlite3_errmsg(db)))", code: .ioError) }
                sqlite3_reset(stmt)
                i += 1
            }
            guard sqlite3_exec(db, "COMMIT", nil, nil, nil) == SQLITE_OK else { throw CLIFailure("raw commit failed", code: .ioError) }
        }
        return Double(count) / seconds(start.duration(to: .now))
    }

    /// Runs a Python baseline on a copy of `template`; nil when it cannot run.
    static func python(script: String, template: String, rows: Int, work: String) -> Double? {
        guard FileManager.default.fileExists(atPath: script) else { return nil }
        let db = work + "/py-\(UUID().uuidString).sqlite"
        guard (try? FileManager.default.copyItem(atPath: template, toPath: db)) != nil else { return nil }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", script, db, String(rows)]
        let pipe = Pipe()
        p.standardOutput = pipe
        guard (try? p.run()) != nil else { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0,
              let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return obj["rowsPerSecond"] as? Double
    }

    /// RSS and CPU of a `healthgate run` child fed by 10 simulated straps at 1 Hz (over Unix
    /// sockets) and 4 simulated pedometers (ptys), measured over `seconds` once every strap is
    /// subscribed. The simulators run in this process, so the figures are the daemon's alone:
    /// peak RSS (`VmHWM`) and CPU time (user + system) per wall second, in % of one core.
    static func footprint(seconds: Int, path: String, work: String) throws -> (rss: Int, cpuPercent: Double, committed: Int) {
        let load = try SimulatedLoad(directory: work + "/sim", straps: 10, rate: 1, pedometers: 4, pedometerInterval: .seconds(1))
        defer { load.stop() }
        let config = work + "/sim.toml"
        try load.configuration(flushIntervalMs: 250).write(toFile: config, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardized
        p.arguments = ["run", "--config", config, "--db", path]
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "NOTIFY_SOCKET")
        p.environment = env
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        let pid = p.processIdentifier
        load.start()

        func status(_ key: String) -> Int? {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }),
                  let kb = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) else { return nil }
            return kb * 1024
        }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        func cpuSeconds() -> Double? {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
            let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
            guard fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else { return nil }
            return (u + s) / ticks
        }

        // Steady state first: every strap connected, discovered and subscribed (a loaded
        // machine may take a while; the bound is generous).
        let ready = ContinuousClock.now + .seconds(120)
        while load.subscribedStraps < 10 {
            guard p.isRunning else { throw CLIFailure("the footprint's `healthgate run` child exited early (status \(p.terminationStatus)).", code: .software) }
            guard ContinuousClock.now < ready else {
                throw CLIFailure("the footprint's `healthgate run` child subscribed to only \(load.subscribedStraps) of 10 simulated straps within 120 s.", code: .tempFail)
            }
            usleep(100_000)
        }
        let t0 = Date().timeIntervalSince1970
        let c0 = cpuSeconds() ?? 0
        var peak = 0
        let end = t0 + Double(seconds)
        while Date().timeIntervalSince1970 < end, p.isRunning {
            peak = max(peak, status("VmHWM") ?? 0)
            usleep(250_000)
        }
        peak = max(peak, status("VmHWM") ?? 0)
        let c1 = cpuSeconds() ?? c0
        let t1 = Date().timeIntervalSince1970
        kill(pid, SIGTERM)
        p.waitUntilExit()
        let committed = (try? HealthStore(path: path).count(SampleQuery()))
        return (peak, (c1 - c0) / max(0.001, t1 - t0) * 100, committed ?? 0)
    }

    /// Push -> observer latency at the default flush interval.
    static func latency(path: String) throws -> (p50: Double, p99: Double) {
        let store = try HealthStore(path: path)
        let pipeline = try IngestPipeline(sink: try StoreSink(store: store))
        let slots = pipeline.slots
        let hr = try slots.slot(for: .heartRate)
        let src = try slots.slot(for: StrapSource.source)
        let samplesMs = Mutex<[Double]>([])
        pipeline.addObserver { batch in
            let now = Date().timeIntervalSince1970
            let l = batch.records.map { (now - $0.end) * 1000 }
            samplesMs.withLock { $0 += l }
        }
        let ring = try pipeline.makeRing(name: "latency")
        pipeline.start()
        for _ in 0..<3_000 {
            let t = Date().timeIntervalSince1970
            ring.push(SampleRecord(typeSlot: hr, value: 70, start: t, end: t, sourceSlot: src))
            usleep(1_000)
        }
        ring.close()
        pipeline.stop()
        let sorted = samplesMs.withLock { $0 }.sorted()
        guard !sorted.isEmpty else { return (0, 0) }
        return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
