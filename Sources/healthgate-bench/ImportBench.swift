import ChildProcess
import Foundation
import Gateway
import HealthModel
import HealthStore
import Sysexits
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The `import` part of `healthgate-bench` (issue 12): one generated JSON-lines file of
/// heart-rate samples in the export shape, imported three ways in the same run —
/// Benchmarks/python/import_baseline.py (json.loads + executemany), `healthgate import --jsonl`
/// as a child process (wall time, peak memory: its RssAnon polled until it exits), and the store's raw insert
/// ceiling for the same rows (prebuilt, the bulk writer, same transaction size) — and the ratios.
extension Bench {
    /// What one import part run measured.
    struct ImportFigures {
        var python: Double?
        var pythonRSS: Int?
        var healthgate: Double
        var healthgateRSS: Int
        var ceiling: Double
    }

    /// The heart-rate samples of the import workload: 1 Hz from a fixed day, values 60…99 bpm,
    /// one RR interval each, chest strap with contact; every line has its UUID (what
    /// `healthgate export --format jsonl` writes).
    struct ImportWorkload {
        let count: Int
        static let base = 1_793_577_600.0   // 2026-11-02T00:00:00Z
        static let source = StrapSource.source

        func value(_ i: Int) -> Double { Double(60 + i % 40) }
        func time(_ i: Int) -> Double { Self.base + Double(i) + Double(i % 1000) / 1000 }
        func rr(_ i: Int) -> UInt16 { UInt16(60 * 1024 / (60 + i % 40)) }
        func uuid(_ i: Int) -> UUID {
            var rng = SplitMix64(seed: UInt64(i) &+ 0x5EED)
            return UUID.timeOrdered(at: Date(timeIntervalSince1970: time(i)), using: &rng)
        }

        /// Line `i` of the file, byte for byte what `export --format jsonl` prints for the sample.
        func line(_ i: Int) -> String {
            let t = ISO8601.string(Date(timeIntervalSince1970: time(i)))
            return #"{"device":{"localIdentifier":"bench:strap","name":"Bench strap"},"end":"\#(t)","#
                + #""metadata":{"heartRateSensorLocation":"chest","sensorContact":"detected"},"#
                + #""rrIntervals":{"precededByGap":false,"ticks":[\#(rr(i))]},"source":"\#(Self.source.name)","#
                + #""sourceIdentifier":"\#(Self.source.identifier)","start":"\#(t)","type":"heartRate","unit":"count/min","#
                + #""uuid":"\#(uuid(i).uuidString.lowercased())","value":\#(Int(value(i)))}"#
        }

        /// The sample line `i` stands for (to check that the generated text is the export shape).
        func sample(_ i: Int) throws -> QuantitySample {
            let t = Date(timeIntervalSince1970: time(i))
            return try QuantitySample(uuid: uuid(i), type: .heartRate, quantity: Quantity(value(i), .countPerMinute), start: t, end: t,
                                      source: Self.source, device: Bench.device,
                                      metadata: Metadata(heartRateSensorLocation: .chest, sensorContact: .detected),
                                      rrIntervals: RRIntervals(ticks: [rr(i)]))
        }

        /// Writes the file in blocks (never the whole file in memory) and checks its first lines
        /// against the export's own serialisation.
        func write(to path: String) throws {
            for i in [0, 1, 999, count - 1] where i >= 0 {
                let object = try SampleJSON.object(try sample(i))
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                guard String(decoding: data, as: UTF8.self) == line(i) else {
                    throw CLIFailure("the import workload's line \(i + 1) is not the export shape:\n\(line(i))\n\(String(decoding: data, as: UTF8.self))", code: .software)
                }
            }
            guard let out = FileHandle(forWritingAtPath: path) ?? {
                _ = FileManager.default.createFile(atPath: path, contents: nil)
                return FileHandle(forWritingAtPath: path)
            }() else { throw CLIFailure("cannot create \(path)", code: .ioError) }
            defer { try? out.close() }
            var block = ""
            block.reserveCapacity(1 << 20)
            for i in 0..<count {
                block += line(i)
                block += "\n"
                if block.utf8.count >= 1 << 20 { try out.write(contentsOf: Data(block.utf8)); block.removeAll(keepingCapacity: true) }
            }
            try out.write(contentsOf: Data(block.utf8))
        }
    }

    /// A child process's end: exit status, wall seconds, peak memory (bytes: its `RssAnon`,
    /// polled by ``ChildProcess/WatchedChild``), its stderr.
    struct ChildRun { var status: Int32; var seconds: Double; var maxRSS: Int; var stderr: String }

    /// Runs `arguments` to its end with ``ChildProcess/WatchedChild`` (the one peak-memory
    /// watcher the bench and the tests share), stderr kept in a file in `work` and returned.
    /// Bounded: a child still running after `timeout` seconds is killed and reported.
    static func runChild(_ arguments: [String], work: String, environment: [String: String] = [:],
                         timeout: Double = 3600) throws -> ChildRun {
        let errPath = work + "/child-\(UUID().uuidString).err"
        defer { unlink(errPath) }
        let r: WatchedChild.Outcome
        do {
            r = try WatchedChild.run(arguments, environment: environment, stderr: .file(errPath), timeout: timeout)
        } catch let e as WatchedChild.Failure {
            throw CLIFailure(e.description, code: .unavailable)
        }
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return ChildRun(status: r.status, seconds: r.seconds, maxRSS: r.peakAnonymousBytes, stderr: err)
    }

    /// The import part: generate the file, then Python, `healthgate import --jsonl` and the
    /// ceiling, `rounds` times interleaved; medians.
    static func importPart(count: Int, rounds: Int, dir: String, healthgate: URL, pythonDir: String,
                           say: (String) -> Void) throws -> ImportFigures {
        let work = ImportWorkload(count: count)
        let file = dir + "/import.jsonl"
        try work.write(to: file)
        defer { unlink(file) }
        var st = stat()
        stat(file, &st)
        say(String(format: "  file: %d heart-rate samples in the export shape (uuid, device, metadata, RR), %.1f MB", count, Double(st.st_size) / 1e6))
        let template = dir + "/import-template.sqlite"
        _ = try prepareDatabase(template)
        var py: [Double] = [], pyRSS: [Int] = [], hg: [Double] = [], hgRSS: [Int] = [], raw: [Double] = []
        let script = pythonDir + "/import_baseline.py"
        for round in 1...rounds {
            var line = "  round \(round):"
            if FileManager.default.fileExists(atPath: script) {
                let db = dir + "/import-py-\(round).sqlite"
                try FileManager.default.copyItem(atPath: template, toPath: db)
                let r = try runChild(["python3", script, db, file], work: dir)
                if r.status == 0 {
                    try expectRows(count, in: db, what: "import_baseline.py")
                    py.append(Double(count) / r.seconds)
                    pyRSS.append(r.maxRSS)
                    line += String(format: " python %.0f rows/s (%.0f MiB)", Double(count) / r.seconds, Double(r.maxRSS) / 1_048_576)
                } else {
                    line += " python failed (\(r.status)): \(r.stderr.split(separator: "\n").last ?? "")"
                }
                unlink(db)
            }
            let db = dir + "/import-hg-\(round).sqlite"
            let r = try runChild([healthgate.path, "import", "--jsonl", file, "--db", db], work: dir)
            guard r.status == 0 else {
                throw CLIFailure("`healthgate import --jsonl` exited \(r.status): \(r.stderr)", code: .software)
            }
            try expectRows(count, in: db, what: "healthgate import")
            for suffix in ["", "-wal", "-shm"] { unlink(db + suffix) }
            hg.append(Double(count) / r.seconds)
            hgRSS.append(r.maxRSS)
            let c = try importCeiling(work, path: dir + "/import-raw-\(round).sqlite")
            raw.append(c)
            say(line + String(format: ", healthgate import %.0f samples/s (%.0f MiB), ceiling %.0f rows/s", Double(count) / r.seconds,
                              Double(r.maxRSS) / 1_048_576, c))
        }
        return ImportFigures(python: py.median, pythonRSS: pyRSS.max(), healthgate: hg.median ?? 0, healthgateRSS: hgRSS.max() ?? 0,
                             ceiling: raw.median ?? 0)
    }

    static func expectRows(_ count: Int, in path: String, what: String) throws {
        let n = try HealthStore(path: path, mode: .readOnly).count(SampleQuery())
        guard n == count else { throw CLIFailure("\(what) stored \(n) of \(count) samples", code: .software) }
    }

    /// The store's raw insert ceiling for the import's rows: every row prebuilt (ids resolved,
    /// no text, no parse), through the bulk writer (`StoreWriter.insertNew`: 50-row statements,
    /// the store's v7 ids) in transactions of 5,000 (import's default `--batch`), with the
    /// connection settings `import` runs with, then the checkpoint every writer does when it
    /// stops. Only the binds, steps, commits and that checkpoint are timed.
    static func importCeiling(_ work: ImportWorkload, path: String) throws -> Double {
        let store = try HealthStore(path: path)
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let (typeID, sourceID, deviceID) = try store.write { w in
            (try w.typeID(.heartRate), try w.sourceID(ImportWorkload.source), try w.deviceID(Bench.device))
        }
        let count = work.count
        let rows = (0..<count).map { i in
            SampleRow(typeID: typeID, sourceID: sourceID, deviceID: deviceID, value: work.value(i), start: work.time(i), end: work.time(i),
                      sensorLocation: .chest, sensorContact: .detected)
        }
        let rrs = (0..<count).map { work.rr($0) }
        let start = ContinuousClock.now
        try rows.withUnsafeBufferPointer { rows in
            try rrs.withUnsafeBufferPointer { rrs in
                var i = 0
                while i < count {
                    let first = i, n = min(5_000, count - i)
                    try store.write { w in
                        try w.insertNew(count: n) { k, binder in
                            binder.bind(rows[first + k], rrTicks: UnsafeBufferPointer(rebasing: rrs[(first + k)...(first + k)]))
                        }
                    }
                    i += n
                }
            }
        }
        // Every writing command checkpoints when it stops (docs/store.md), import included: the
        // same work belongs to the ceiling, or the ratio would charge it to import alone.
        try store.checkpoint()
        return Double(count) / seconds(start.duration(to: .now))
    }
}

extension HealthGateBench {
    /// Runs the import part and prints its figures and ratios.
    func importPart(into out: inout [String: Any], dir: String, say: (String) -> Void) throws {
        let tool = try healthgateExecutable()
        let rounds = min(self.rounds, 3)
        say("== import (\(importSamples) heart-rate samples, JSON lines; median of \(rounds) interleaved rounds)")
        let f = try Bench.importPart(count: importSamples, rounds: rounds, dir: dir, healthgate: tool, pythonDir: pythonDir, say: say)
        let mib = { (b: Int) in Double(b) / 1_048_576 }
        if let py = f.python {
            say(String(format: "  python import_baseline.py   %8.0f rows/s (peak RSS %.0f MiB)", py, mib(f.pythonRSS ?? 0)))
        } else {
            say("  python import_baseline.py   not run (python3 or \(pythonDir)/import_baseline.py missing)")
        }
        say(String(format: "  healthgate import --jsonl   %8.0f samples/s (peak RssAnon %.1f MiB; goal <= 64)", f.healthgate, mib(f.healthgateRSS)))
        say(String(format: "  raw insert ceiling          %8.0f rows/s (same rows prebuilt, bulk writer, 5,000 per transaction, final checkpoint)", f.ceiling))
        if let py = f.python { say(String(format: "  vs python                   %.2fx (goal >= 3x)", f.healthgate / py)) }
        say(String(format: "  vs ceiling                  %.2f (goal >= 0.7)", f.healthgate / f.ceiling))
        out["importSamplesPerSecond"] = f.healthgate
        out["importPeakRSSBytes"] = f.healthgateRSS
        out["importCeilingRowsPerSecond"] = f.ceiling
        out["importPythonRowsPerSecond"] = f.python.map { $0 as Any } ?? NSNull()
        out["importVsPython"] = f.python.map { f.healthgate / $0 as Any } ?? NSNull()
        out["importVsCeiling"] = f.healthgate / f.ceiling
    }
}
