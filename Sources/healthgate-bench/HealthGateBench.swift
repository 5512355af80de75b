import ArgumentParser
import ChildProcess
import Foundation
import Gateway
import HealthModel
import HealthStore
import HeartRateProfile
import Ingest
import Simulators
import Synchronization
import Sysexits
import ModuleExitCodes  // each module's failure with its exit code

extension StoreSink.Durability: ExpressibleByArgument {}
#if canImport(Glibc)
@preconcurrency import Glibc
import Locking
#endif

/// `healthgate-bench`: the ingest benchmarks, each with its baseline measured in the same run.
/// An executable of its own, so the `healthgate` tool does not carry the benchmark's code.
@main
struct HealthGateBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "healthgate-bench",
        abstract: "Measure the ingest hot path, end-to-end throughput against the store writer's ceiling and Python loggers, footprint and latency.",
        discussion: """
            Every ratio compares figures measured in this same run on this machine
            (docs/performance.md):

            hot path    decode + map + push into a ring with room, ns/sample (a strap
                        reader thread's cost); heap allocations per sample (glibc's mtrace, in a
                        child); ring items/s between two threads
            end to end  notifications decoded, pushed, drained and committed (daemon
                        defaults, group commit) vs the store's series writer alone
                        (same readings, series, chunks, durability; no decode, ring
                        or writer thread):
                        ratio, goal >= 0.85, medians of --rounds interleaved rounds
            python      Benchmarks/python/logger.py (decode, INSERT + COMMIT per
                        notification) and batched.py (decode, executemany, 1,000 per
                        transaction) at matching durability: every-commit vs the
                        scripts at FULL, group commit vs the scripts at NORMAL; the
                        ratio is the lower pair (goals >= 20x and >= 3x)
            footprint   peak RSS and CPU of a `healthgate run` child fed by 10
                        simulated straps at 1 Hz and 4 pty pedometers (the
                        healthgate built beside this executable, or --healthgate)
            latency     push -> observer (after commit), p50/p99, 250 ms flush
            import      a JSON-lines file of --import-samples heart-rate samples
                        (export shape): Benchmarks/python/import_baseline.py vs
                        `healthgate import --jsonl` (child: wall time, peak RSS) vs
                        the store's raw insert ceiling for the same rows; goals
                        >= 3x python, >= 0.7x ceiling, peak RSS <= 64 MiB
            stats       daily collections in Europe/Berlin over a year of per-minute
                        steps from two overlapping sources and --stats-heart-rate-samples
                        1 Hz readings: streaming + rollups vs rows only vs the old
                        load-everything engine (ms, peak RSS of a child each, and
                        `healthgate stats`); goals <= 50 ms steps, <= 250 ms heart
                        rate for a year, peak RSS <= 48 MiB
            http        `healthgate run` with 10 simulated straps serving [http]: 20
                        /v1/statistics requests a second alone, then beside 200
                        /v1/live clients (20 s each): p50/p99 latency, the daemon's
                        CPU (added by the clients), events per client, samples lost
            uplink      a week offline: 7 days of one strap at 1 Hz (604,800 quantities
                        in series) pushed by `healthgate uplink push` into a throwaway
                        PostgreSQL (Debian's server) vs psql \\copy of the same rows into
                        the same tables (rows/s); goal >= 0.5x the COPY ceiling
            store       size: --store-seconds of one strap at 1 Hz (with RR and
                        without) replayed by `healthgate replay --max`, VACUUMed,
                        bytes per heart-rate sample vs the same capture one row a
                        reading (goal <= 8 B with RR); writes: `healthgate run` with
                        10 simulated straps + 4 pedometers, then the straps alone,
                        --writes-seconds steady: /proc/PID/io write_bytes per sample
                        vs one 4 KiB page per commit (goal <= 1.5x); the store
                        under $HG_BENCH_WRITES_DIR (default /var/tmp, a real disk)
            apple-health
                        a generated Apple Health export (--apple-health-bytes, the
                        tests' make_export.py) imported from its zip and its XML by
                        `healthgate import --apple-health` and by healthkit-to-sqlite
                        (PyPI, pinned in Benchmarks/python/, installed into
                        .venv-bench/ when missing): wall time, peak RSS; goals
                        >= 10x, <= 64 MB

            Build with -c release for meaningful figures. With --json the last line
            is one JSON object.

            Examples:
              swift build -c release && .build/release/healthgate-bench --json
              .build/release/healthgate-bench --only e2e python --rounds 9
            """)

    @Option(help: "Samples for the end-to-end runs.")
    var samples: Int = 200_000

    @Option(help: "Rows for the per-notification Python logger (it is slow).")
    var loggerRows: Int = 20_000

    @Option(help: "Seconds of the footprint run.")
    var footprintSeconds: Int = 12

    @Option(help: "Samples in the import part's file.")
    var importSamples: Int = 1_000_000

    @Option(help: "1 Hz heart-rate readings of the stats part (a year is 31536000).")
    var statsHeartRateSamples: Int = 2_000_000

    @Option(help: "Seconds of one strap at 1 Hz in the store part's size capture (a day is 86400).")
    var storeSeconds: Int = 86_400

    @Option(help: "Seconds of the store part's steady write window, per run.")
    var writesSeconds: Int = 60

    @Option(help: "Bytes of the apple-health part's generated export.xml (its zip is made from it).")
    var appleHealthBytes: Int = 200_000_000

    @Option(help: "Directory holding logger.py and batched.py.")
    var pythonDir: String = "Benchmarks/python"

    @Option(help: ArgumentHelp("The healthgate executable the footprint part runs (default: the one built beside this executable).", valueName: "path"))
    var healthgate: String?

    @Option(help: "When committed batches reach the disk: group (one fsync once the writer has caught up, at least every flush interval) or every-commit (synchronous=FULL).")
    var durability: StoreSink.Durability = .group

    @Option(help: "Runs of every throughput figure (end to end, ceiling, each Python script); the medians are compared, so one lucky or unlucky run on a noisy machine does not decide a ratio.")
    var rounds: Int = 5

    @Option(name: .customLong("only"), parsing: .upToNextOption,
            help: ArgumentHelp("Run only these parts: hot, e2e, python (implies e2e), footprint, latency, import, stats, http, uplink, store, apple-health.", valueName: "part"))
    var only: [Part] = []

    /// The benchmark groups `--only` selects.
    enum Part: String, CaseIterable, ExpressibleByArgument { case hot, e2e, python, footprint, latency, importing = "import", stats, http, uplink, store, appleHealth = "apple-health" }

    private var parts: Set<Part> { only.isEmpty ? Set(Part.allCases) : Set(only) }

    func validate() throws {
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
        guard samples >= 1_000 else { throw ValidationError("--samples must be at least 1000") }
        guard importSamples >= 1_000 else { throw ValidationError("--import-samples must be at least 1000") }
        guard storeSeconds >= 60 else { throw ValidationError("--store-seconds must be at least 60") }
        guard writesSeconds >= 5 else { throw ValidationError("--writes-seconds must be at least 5") }
        guard appleHealthBytes >= 100_000 else { throw ValidationError("--apple-health-bytes must be at least 100000") }
    }

    @Option(help: .hidden)
    var hotPathChild: Int?

    @Flag(help: "End with one JSON object holding every figure.")
    var json = false

    func run() throws {
        // A failure is one sentence and its sysexits code; an error of the store or the file
        // system, which is where the bench's work can fail, exits 74.
        try reporting(as: "healthgate-bench", fallback: .ioError) {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hg-bench-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            var out: [String: Any] = [:]
            func say(_ s: String) { print(s); fflush(nil) }

            if let n = hotPathChild {   // the traced child of allocationsPerSample
                _ = Bench.hotPath(count: n, trace: true)
                return
            }
            if parts.contains(.hot) {
            say("== hot path")
            let hot = Bench.hotPath(count: 2_000_000)
            let plain = Bench.hotPath(count: 2_000_000, hrv: false)
            say(String(format: "  decode + enqueue        %.1f ns/sample (with the live HRV: a corrected 60-s window every ~35 notifications)", hot.nsPerSample))
            let windowShare: Double = hot.nsPerSample - plain.nsPerSample
            let perWindowMicros: Double = windowShare * Double(hot.count) / Double(max(1, hot.windows)) / 1000
            say(String(format: "  without HRV windows     %.1f ns/sample (the window's share: %.1f ns/sample, %.1f µs a window)", plain.nsPerSample,
                       windowShare, perWindowMicros))
            let allocs = Bench.allocationsPerSample(count: 200_000)
            if let allocs {
                say("  allocations per sample  \(allocs.perSample) (\(allocs.total) malloc/calloc/realloc calls in 200000 decode+enqueue, glibc mtrace)")
            } else {
                say("  allocations per sample  not measured (glibc's malloc tracer libc_malloc_debug.so.0 missing or not working)")
            }
            let ringRate = Bench.ringThroughput(count: 20_000_000)
            say(String(format: "  ring (SPSC, 64-byte records)  %.1f M items/s", ringRate / 1e6))
            out["decodeEnqueueNsPerSample"] = hot.nsPerSample
            out["decodeEnqueueWithoutHRVNsPerSample"] = plain.nsPerSample
            out["allocationsPerSample"] = allocs.map { $0.perSample as Any } ?? NSNull()
            out["ringItemsPerSecond"] = ringRate
            }

            var e2e = 0.0
            if parts.contains(.e2e) || parts.contains(.python) {
            say("== end to end (\(samples) heart-rate notifications with RR, batches of 1,000, \(durability.rawValue) durability, median of \(rounds) interleaved rounds)")
            let work = Bench.Notifications(count: samples)
            var pipelineRuns: [Double] = [], rawRuns: [Double] = []
            for round in 1...rounds {
                let e = try Bench.endToEnd(work, path: dir + "/e2e-\(round).sqlite", durability: durability)
                let r = try Bench.rawCeiling(work, path: dir + "/raw-\(round).sqlite", durability: durability)
                if rounds > 1 { say(String(format: "  round %d: pipeline %.0f samples/s, ceiling %.0f samples/s (%.2f)", round, e, r, e / r)) }
                pipelineRuns.append(e)
                rawRuns.append(r)
            }
            e2e = pipelineRuns.median ?? 0
            let raw = rawRuns.median ?? 0
            let ratio = e2e / raw
            say(String(format: "  pipeline (decode, ring, writer, commit)  %.0f samples/s", e2e))
            say("  series writer ceiling (same readings, series, chunks and fsyncs (\(durability.rawValue));")
            say(String(format: "    no decode, no ring, no writer thread)  %.0f samples/s", raw))
            say(String(format: "  ratio                                    %.2f (goal >= 0.85)", ratio))
            out["e2eSamplesPerSecond"] = e2e
            out["ceilingSamplesPerSecond"] = raw
            out["ratio"] = ratio
            out["durability"] = durability.rawValue
            }

            if parts.contains(.python) {
            // Each script gets as many runs as HealthGate's figure (the median of --rounds). Compared at
            // matching durability, and the goal ratio is the lower of the two pairs:
            //   every-commit (an fsync in every COMMIT)  vs the scripts as written (SQLite's default FULL)
            //   group commit (a few fsyncs a second)     vs the scripts at NORMAL (no fsync at all:
            //                                               Python gets the better end of this pair)
            say("== python baselines (same notifications: decode, build the row, insert; same schema and foreign keys)")
            var pipelineRate: [StoreSink.Durability: Double] = [durability: e2e]
            let other: StoreSink.Durability = durability == .group ? .everyCommit : .group
            let work = Bench.Notifications(count: samples)
            pipelineRate[other] = try (1...rounds).map { round in
                try Bench.endToEnd(work, path: dir + "/e2e-\(other.rawValue)-\(round).sqlite", durability: other)
            }.median
            let group = pipelineRate[.group] ?? 0, full = pipelineRate[.everyCommit] ?? 0
            out["e2eGroupSamplesPerSecond"] = group
            out["e2eEveryCommitSamplesPerSecond"] = full
            say(String(format: "  HealthGate  %.0f samples/s with group commit, %.0f with every-commit (medians of %d)", group, full, rounds))
            let template = dir + "/template.sqlite"
            _ = try Bench.prepareDatabase(template)
            func script(_ name: String, rows: Int, tries: Int, synchronous: String) -> Double? {
                (0..<tries).compactMap { _ in
                    Bench.python(script: pythonDir + "/" + name, template: template, rows: rows, work: dir,
                                 environment: ["HG_BENCH_SYNCHRONOUS": synchronous])
                }.median
            }
            for (name, label, key, rows, tries, goal) in [("logger.py", "per-notification INSERT+COMMIT", "pythonLogger", loggerRows, rounds, 20.0),
                                                          ("batched.py", "batched executemany (1,000/txn)", "pythonBatched", samples, rounds, 3.0)] {
                guard let asWritten = script(name, rows: rows, tries: tries, synchronous: "FULL"),
                      let noSync = script(name, rows: rows, tries: tries, synchronous: "NORMAL") else {
                    say("  \(label): not run (python3 or \(pythonDir)/\(name) missing)")
                    out[key + "Ratio"] = NSNull()
                    continue
                }
                let ratio = min(full / asWritten, group / noSync)
                say(String(format: "  %@, FULL    %8.0f rows/s  -> every-commit %.1fx", label, asWritten, full / asWritten))
                say(String(format: "  %@, NORMAL  %8.0f rows/s  -> group commit %.1fx", label, noSync, group / noSync))
                say(String(format: "  %@  ratio %.1fx, the lower pair (goal >= %.0fx)", String(repeating: " ", count: label.count), ratio, goal))
                out[key + "RowsPerSecond"] = asWritten
                out[key + "NormalRowsPerSecond"] = noSync
                out[key + "Ratio"] = ratio
            }
            }

            if parts.contains(.footprint) {
            let daemon = try healthgateExecutable()
            say("== footprint (healthgate run: 10 simulated straps at 1 Hz over Unix sockets, 4 pty pedometers, \(footprintSeconds) s)")
            let fp = try Bench.footprint(seconds: footprintSeconds, path: dir + "/fp.sqlite", work: dir, healthgate: daemon)
            say(String(format: "  max RSS %.1f MiB, CPU %.2f%% of one core (the run process alone; %d samples stored)", Double(fp.rss) / 1_048_576, fp.cpuPercent, fp.committed))
            out["rssBytes"] = fp.rss
            out["cpuPercent"] = fp.cpuPercent
            }

            if parts.contains(.latency) {
            say("== latency (push -> observer after commit, flush interval 250 ms, 1 kHz for 3 s)")
            let lat = try Bench.latency(path: dir + "/lat.sqlite")
            say(String(format: "  p50 %.1f ms, p99 %.1f ms", lat.p50, lat.p99))
            out["p50LatencyMs"] = lat.p50
            out["p99LatencyMs"] = lat.p99
            }

            if parts.contains(.importing) {
                try importPart(into: &out, dir: dir, say: say)
            }

            if parts.contains(.stats) {
                try statsPart(into: &out, dir: dir, say: say)
            }

            if parts.contains(.http) {
                try httpPart(into: &out, dir: dir, say: say)
            }

            if parts.contains(.uplink) {
                try uplinkPart(into: &out, dir: dir, say: say)
            }

            if parts.contains(.store) {
                try storePart(into: &out, dir: dir, say: say)
            }

            if parts.contains(.appleHealth) {
                try appleHealthPart(into: &out, dir: dir, say: say)
            }

            if json { try JSONOutput.emit(out) }
        }
    }
}

extension HealthGateBench {
    /// The `healthgate` the footprint part starts: `--healthgate`, else the one beside this
    /// executable (`swift build` puts both in the same directory).
    func healthgateExecutable() throws -> URL {
        let url = healthgate.map { URL(fileURLWithPath: $0) } ?? Bench.executable.deletingLastPathComponent().appendingPathComponent("healthgate")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw CLIFailure("the footprint part runs `healthgate run`, but \(url.path) is not an executable: build it (swift build -c release) or pass --healthgate PATH.",
                               code: .unavailable)
        }
        return url
    }
}

/// The benchmarks themselves.
enum Bench {
    /// This executable, for the traced child of ``allocationsPerSample(count:)``.
    static var executable: URL {
        URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
    }

    struct Hot { var nsPerSample: Double; var count: Int; var windows: Int }

    /// The producer's cost: decode a notification into a record and push it into a ring with
    /// room (the daemon's 4,096 slots). The ring is filled, then drained outside the clock, so
    /// the figure is what a strap's reader thread spends per sample — not time spent waiting for
    /// a consumer thread, which on a busy machine would measure the scheduler instead.
    /// With `hrv` false the mapper makes no HRV windows (`sdnnWindow = nil`), to show their share.
    static func hotPath(count: Int, trace: Bool = false, hrv: Bool = true) -> Hot {
        let ring = SampleRing(capacity: 4_096, policy: .dropNewest)
        let drained = UnsafeMutableBufferPointer<SampleRecord>.allocate(capacity: ring.capacity)
        defer { drained.deallocate() }
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
        // The daemon's own notification -> record mapping (StrapSource's), warmed up outside the trace.
        guard let mapSlots = try? HeartRateRecordMapper.Slots(table: SlotTable(), source: StrapSource.source, device: device) else {
            preconditionFailure("the bench's slot table refused three entries")
        }
        var mapper = HeartRateRecordMapper(slots: mapSlots, sensorLocation: .chest)
        if !hrv { mapper.sdnnWindow = nil }
        payload.withUnsafeBytes { raw in
            if let m = try? HeartRateMeasurement.decode(raw) { mapper.map(m, at: 0) { _, _ in } }
        }
        mtrace?()
        var elapsed = Duration.zero
        var dropped = 0
        payload.withUnsafeBytes { raw in
            var i = 0
            while i < count {
                // Half the ring per round: the mapper adds an SDNN record now and then.
                let chunk = min(ring.capacity / 2, count - i)
                let start = ContinuousClock.now
                for k in i..<(i + chunk) {
                    guard let m = try? HeartRateMeasurement.decode(raw) else { continue }
                    mapper.map(m, at: Double(k)) { r, _ in if ring.push(r) == .dropped { dropped += 1 } }
                }
                elapsed += start.duration(to: .now)
                _ = ring.drain(into: drained)
                i += chunk
            }
        }
        muntrace?()
        precondition(dropped == 0, "the hot-path bench ring overflowed")
        return Hot(nsPerSample: seconds(elapsed) * 1e9 / Double(count), count: count, windows: mapper.counters.hrvWindows)
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
        p.executableURL = executable
        p.arguments = ["--hot-path-child", String(count)]
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

    /// The end-to-end workload: `count` Heart Rate Measurement notifications with receipt times,
    /// 1 ms apart — flags 0x16 (uint8 bpm, contact detected, RR present), bpm 60…99, one RR
    /// interval of 60/bpm s. Benchmarks/python/common.py generates exactly the same stream.
    struct Notifications {
        var times: [Double]
        var payloads: [(UInt8, UInt8, UInt8, UInt8)]
        init(count: Int) {
            let base = Date().timeIntervalSince1970
            times = (0..<count).map { base + Double($0) * 0.001 }
            payloads = (0..<count).map { i in
                let bpm = 60 + i % 40
                let rr = 60 * 1024 / bpm
                return (0x16, UInt8(bpm), UInt8(rr & 0xFF), UInt8(rr >> 8))
            }
        }
    }

    /// The bench strap every end-to-end row is attributed to.
    static let device = Device(name: "Bench strap", localIdentifier: "bench:strap")

    /// Creates a HealthGate database at `path` with the rows the workload refers to: the BLE
    /// source and the bench strap (ids 1 and 1 in a fresh store; the Python baselines rely on
    /// that) and returns it with the heartRate type's id.
    static func prepareDatabase(_ path: String) throws -> (store: HealthStore, heartRateID: Int64) {
        let store = try HealthStore(path: path)
        let ids = try store.write { w in (try w.typeID(.heartRate), try w.sourceID(StrapSource.source), try w.deviceID(device)) }
        guard ids.1 == 1, ids.2 == 1 else { throw CLIFailure("bench database \(path) did not start empty (ids \(ids))", code: .software) }
        return (store, ids.0)
    }

    /// Notification -> committed row through the real pipeline with the daemon's default
    /// settings (batches of 1,000 or 250 ms, 4,096-sample ring): decode, push into the ring, the
    /// writer thread, StoreSink, commit. The producer runs as fast as the writer lets it, with
    /// `replay --max`'s backpressure (a full ring makes it sleep 200 µs, not spill). Timed from
    /// the first decode to the last commit.
    static func endToEnd(_ work: Notifications, path: String, durability: StoreSink.Durability) throws -> Double {
        let store = try prepareDatabase(path).store
        let pipeline = try IngestPipeline(sink: try StoreSink(store: store, durability: durability))
        let slots = pipeline.slots
        var mapper = HeartRateRecordMapper(slots: try HeartRateRecordMapper.Slots(table: slots, source: StrapSource.source, device: device))
        mapper.sdnnWindow = nil   // one reading per notification, as the ceiling writes
        let ring = try pipeline.makeRing(name: "bench")
        let count = work.times.count
        pipeline.start()
        let start = ContinuousClock.now
        work.payloads.withUnsafeBufferPointer { payloads in
            for i in 0..<count {
                var payload = payloads[i]
                let m = withUnsafeBytes(of: &payload) { try? HeartRateMeasurement.decode($0) }
                guard let m else { continue }
                mapper.map(m, at: work.times[i]) { r, _ in   // 1–9 RR: never an attachment
                    while ring.pendingCount >= ring.capacity { usleep(200) }
                    ring.push(r)
                }
            }
        }
        ring.close()
        let final = pipeline.stop()
        let elapsed = seconds(start.duration(to: .now))
        guard final.committed == UInt64(count) else {
            throw CLIFailure("benchmark pipeline committed \(final.committed) of \(count) samples", code: .software)
        }
        return Double(count) / elapsed
    }

    /// The same readings through the store's own series writer with nothing of the pipeline in
    /// between — the ceiling of what `StoreSink` does with a strap's heart rate (docs/store.md,
    /// "Quantity series"): `SeriesWriter.append` for each reading (the series key resolved once,
    /// contact detected, one RR interval), `SeriesWriter.flush` per transaction of 1,000 readings,
    /// the same schema, chunk sizes, connection settings and durability as the writer
    /// (``StoreSink/pragmas(for:)``; with group commit also its WAL fsyncs, one per 250 ms and
    /// one at the end). Only the appends, the flushes and the commits are timed: no decode, no
    /// ring, no writer thread, no slot lookups.
    static func rawCeiling(_ work: Notifications, path: String, durability: StoreSink.Durability) throws -> Double {
        let (store, heartRateID) = try prepareDatabase(path)
        try store.withConnection { try $0.execute(StoreSink.pragmas(for: durability)) }
        let count = work.times.count
        let values = work.payloads.map { Double($0.1) }
        let rrs = work.payloads.map { UInt16($0.2) | UInt16($0.3) << 8 }
        let key = SeriesWriter.Key(typeID: heartRateID, sourceID: 1, deviceID: 1)
        let style = QuantityType.heartRate.aggregationStyle
        let series = SeriesWriter()
        let defaults = IngestConfiguration()
        let syncEvery = max(defaults.flushInterval, defaults.syncInterval)
        let start = ContinuousClock.now
        var lastSync = start
        try rrs.withUnsafeBufferPointer { rrs in
            var i = 0
            while i < count {
                let first = i, n = min(1_000, count - i)
                try store.write { w in
                    for k in first..<(first + n) {
                        try series.append(w, key: key, style: style, sensorLocation: nil, start: work.times[k], end: work.times[k],
                                          value: values[k], contact: .detected, flags: [],
                                          rr: UnsafeBufferPointer(rebasing: rrs[k...k]))
                    }
                    try series.flush(w)
                }
                i += n
                // Group commit's syncs, as the writer does them while behind: one per flush or sync
                // interval, whichever is longer (the pipeline's defaults).
                if durability == .group, lastSync.duration(to: .now) >= syncEvery {
                    try store.withConnection { try $0.syncJournal() }
                    lastSync = .now
                }
            }
        }
        if durability == .group { try store.withConnection { try $0.syncJournal() } }   // and once at the end, as the writer's stop does
        return Double(count) / seconds(start.duration(to: .now))
    }

    /// Runs a Python baseline on a copy of `template`; nil when it cannot run.
    static func python(script: String, template: String, rows: Int, work: String, environment: [String: String] = [:]) -> Double? {
        guard FileManager.default.fileExists(atPath: script) else { return nil }
        let db = work + "/py-\(UUID().uuidString).sqlite"
        guard (try? FileManager.default.copyItem(atPath: template, toPath: db)) != nil else { return nil }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", script, db, String(rows)]
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
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
    /// peak memory (`RssAnon`, ``ChildProcess/WatchedChild``) and CPU time (user + system) per
    /// wall second, in % of one core.
    static func footprint(seconds: Int, path: String, work: String, healthgate: URL) throws -> (rss: Int, cpuPercent: Double, committed: Int) {
        let (load, child) = try runAgainstSimulatedLoad(pedometers: 4, directory: work, store: path, healthgate: healthgate)
        defer { child.kill(); load.stop() }

        // Steady state first: every strap connected, discovered and subscribed (a loaded
        // machine may take a while; the bound is generous).
        let ready = ContinuousClock.now + .seconds(120)
        while load.subscribedStraps < 10 {
            guard try child.poll() else { throw CLIFailure("the footprint's `healthgate run` child exited early (status \(child.exitStatus ?? -1)).", code: .software) }
            guard ContinuousClock.now < ready else {
                throw CLIFailure("the footprint's `healthgate run` child subscribed to only \(load.subscribedStraps) of 10 simulated straps within 120 s.", code: .tempFail)
            }
            usleep(100_000)
        }
        let t0 = Date().timeIntervalSince1970
        let c0 = child.cpuSeconds() ?? 0
        let end = t0 + Double(seconds)
        // Peak memory: its RssAnon, polled (WatchedChild says why not VmHWM).
        while Date().timeIntervalSince1970 < end, try child.poll() { usleep(250_000) }
        let c1 = child.cpuSeconds() ?? c0
        let t1 = Date().timeIntervalSince1970
        let peak = child.peakAnonymousBytes
        child.signal(SIGTERM)
        try child.wait(timeout: 60)
        let committed = (try? HealthStore(path: path, mode: .readOnly).count(SampleQuery()))
        return (peak, (c1 - c0) / max(0.001, t1 - t0) * 100, committed ?? 0)
    }

    /// `healthgate run` (the built one, `healthgate`) on a fresh simulated load in `directory`: 10
    /// straps at 1 Hz and `pedometers` pty pedometers at 1 reading/s, flush interval 250 ms (the
    /// shipped default), its store at `store`, a status line every `statusInterval` seconds on
    /// `stderr`. The load is started; the caller stops both (the footprint and store parts).
    static func runAgainstSimulatedLoad(pedometers: Int, directory: String, store: String, healthgate: URL,
                                        statusInterval: Int = 60, stderr: WatchedChild.Stream = .null) throws -> (SimulatedLoad, WatchedChild) {
        let load = try SimulatedLoad(directory: directory + "/sim", straps: 10, rate: 1, pedometers: pedometers, pedometerInterval: .seconds(1))
        let config = directory + "/sim.toml"
        do {
            try load.configuration(flushIntervalMs: 250, statusInterval: statusInterval).write(toFile: config, atomically: true, encoding: .utf8)
            // Without NOTIFY_SOCKET: the child must not notify this process's own supervisor.
            let child = try WatchedChild([healthgate.path, "run", "--config", config, "--db", store], removing: ["NOTIFY_SOCKET"], stderr: stderr)
            load.start()
            return (load, child)
        } catch {
            load.stop()
            throw error
        }
    }

    /// Push -> observer latency at the default flush interval.
    static func latency(path: String) throws -> (p50: Double, p99: Double) {
        let store = try HealthStore(path: path)
        let pipeline = try IngestPipeline(sink: try StoreSink(store: store))
        let slots = pipeline.slots
        let hr = try slots.slot(for: .heartRate)
        let src = try slots.slot(for: StrapSource.source)
        let samplesMs = Lock<[Double]>([])
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

extension Array where Element == Double {
    /// The median (the mean of the middle two for an even count; nil for none), for the
    /// benchmark's repeated runs.
    var median: Double? {
        let s = sorted()
        guard !s.isEmpty else { return nil }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
}
