import Foundation
import Gateway
import HealthModel
import HealthStore
import Sysexits
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The `stats` part of `healthgate-bench` (issue 12): daily statistics collections in
/// Europe/Berlin over a year of data, built with the store's bulk writer —
///
/// - steps: a year of per-minute samples from an iPhone (525,600) plus a Watch ranked above it on
///   every seventh day from 08:00 to 20:00 UTC, its minutes offset by 30 s (so those days need
///   the real merge); `cumulativeSum`;
/// - heart rate: individually stored 1 Hz readings (instants) from one strap; min/max/average.
///
/// Each query is timed in this process (warm page cache, median of rounds) three ways: the
/// default streaming engine with rollups, the same sweep decoding every row, and the engine it
/// replaced (`StatisticsPath.loadAll`: load every sample, then merge), kept for this baseline and
/// the tests. Peak memory is each way's in a child process of its own (this executable with
/// `HG_BENCH_STATS_CHILD` set), and `healthgate stats` itself, each watched by
/// `ChildProcess.WatchedChild` (its `RssAnon` polled every 5 ms until it exits; why not
/// `ru_maxrss` or `VmHWM` is said there).
extension Bench {
    /// The year the data covers: 2026-01-01 00:00 in Berlin (CET) and a year later.
    static let statsYearStart = 1_767_222_000.0   // 2025-12-31T23:00:00Z
    static let statsYearEnd = 1_798_758_000.0     // 2026-12-31T23:00:00Z
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let phone = Source(name: "iPhone", identifier: "com.example.bench.iphone")
    static let watch = Source(name: "Watch", identifier: "com.example.bench.watch")

    /// Builds the steps store; returns (phone samples, watch samples).
    static func buildStepsYear(path: String) throws -> (Int, Int) {
        let store = try HealthStore(path: path)
        let minutes = Int((statsYearEnd - statsYearStart) / 60)
        var watchCount = 0
        try store.write { w in
            let type = try w.typeID(.stepCount), p = try w.sourceID(phone)
            var i = 0
            while i < minutes {
                let n = min(50_000, minutes - i)
                let first = i
                try w.insertNew(count: n) { k, b in
                    let m = first + k
                    let t = statsYearStart + Double(m) * 60
                    b.bind(SampleRow(typeID: type, sourceID: p, value: Double(m * 7 % 40), start: t, end: t + 60))
                }
                i += n
            }
        }
        try store.write { w in
            let type = try w.typeID(.stepCount), s = try w.sourceID(watch)
            for day in stride(from: 0, to: 365, by: 7) {
                let from = statsYearStart + 3600 + Double(day) * 86_400 + 8 * 3600 + 30   // 08:00:30 UTC
                try w.insertNew(count: 720) { k, b in
                    let t = from + Double(k) * 60
                    b.bind(SampleRow(typeID: type, sourceID: s, value: Double(k % 30), start: t, end: t + 60))
                }
                watchCount += 720
            }
        }
        try store.setPriority(source: watch.identifier, rank: 1)
        try store.setPriority(source: phone.identifier, rank: 2)
        return (minutes, watchCount)
    }

    /// The type-and-start index's cost on the steps store (docs/performance.md): its bytes on
    /// disk (`dbstat`) as migration 8 made it covering, the bytes of the `(type_id, start)`
    /// index it replaced (built beside it, then dropped), the file's size, and the time to
    /// rebuild it (`REINDEX`).
    static func startIndexCost(path: String) throws -> (covering: Int, before: Int, file: Int, reindexMs: Double) {
        let store = try HealthStore(path: path)
        return try store.withConnection { db in
            func bytes(_ name: String) throws -> Int {
                let st = try db.prepare("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = ?", cached: false)
                st.bind(1, name)
                _ = try st.step()
                return st.int(0)
            }
            let covering = try bytes("samples_type_start")
            let start = ContinuousClock.now
            try db.execute("REINDEX samples_type_start")
            let reindexMs = seconds(start.duration(to: .now)) * 1000
            try db.execute("CREATE INDEX bench_type_start_before ON samples(type_id, start)")
            let before = try bytes("bench_type_start_before")
            try db.execute("DROP INDEX bench_type_start_before")
            let page = try db.prepare("SELECT page_count * page_size FROM pragma_page_count, pragma_page_size", cached: false)
            _ = try page.step()
            return (covering, before, page.int(0), reindexMs)
        }
    }

    /// How the rollups are kept while building (the insert cost they add).
    enum RollupUpkeep: String {
        /// The store as shipped: the bulk writer sums each call per slot (one upsert per slot).
        case batched
        /// The insert trigger's upsert for every row, as every path but the bulk writer pays
        /// (forced here by undoing the bulk writer's deferral).
        case perRow = "per-row trigger"
        /// No triggers (the bulk writer's per-slot upserts remain: one per 900 rows here).
        case none = "triggers dropped"
    }

    /// Builds `count` 1 Hz heart-rate readings from the year's start; returns rows per second
    /// of the build.
    @discardableResult
    static func buildHeartRate(path: String, count: Int, rollups: RollupUpkeep = .batched) throws -> Double {
        let store = try HealthStore(path: path)
        try store.withConnection { db in
            switch rollups {
            case .batched: break
            case .perRow:
                try db.execute("CREATE TRIGGER bench_no_defer AFTER UPDATE ON rollup_control BEGIN UPDATE rollup_control SET deferred = 0 WHERE deferred <> 0; END")
            case .none:
                try db.execute("DROP TRIGGER samples_rollup_insert; DROP TRIGGER samples_rollup_delete; DROP TRIGGER samples_rollup_update")
            }
        }
        let start = ContinuousClock.now
        var i = 0
        while i < count {
            let n = min(100_000, count - i)
            let first = i
            try store.write { w in
                let type = try w.typeID(.heartRate), s = try w.sourceID(StrapSource.source), d = try w.deviceID(device)
                try w.insertNew(count: n) { k, b in
                    let t = statsYearStart + Double(first + k)
                    b.bind(SampleRow(typeID: type, sourceID: s, deviceID: d, value: Double(60 + (first + k) % 40), start: t, end: t,
                                     sensorLocation: .chest))
                }
            }
            i += n
        }
        return Double(count) / seconds(start.duration(to: .now))
    }

    /// This thread's CPU time so far, seconds (`CLOCK_THREAD_CPUTIME_ID`).
    static func threadCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// The two benchmark queries.
    static func statsQuery(heartRate: Bool) -> StatisticsQuery {
        StatisticsQuery(type: heartRate ? .heartRate : .stepCount,
                        options: heartRate ? [.discreteMin, .discreteMax, .discreteAverage] : .cumulativeSum,
                        start: Date(timeIntervalSince1970: statsYearStart), end: Date(timeIntervalSince1970: statsYearEnd))
    }

    /// One daily collection over the year, through `path`; returns its buckets.
    static func dailyCollection(_ store: HealthStore, heartRate: Bool, path: StatisticsPath) throws -> [Statistics] {
        try store.statisticsCollection(statsQuery(heartRate: heartRate), interval: .days(1), timeZone: berlin, path: path)
    }

    /// The child of the RSS measurement (`HG_BENCH_STATS_CHILD=engine|store|kind`, engine
    /// streaming, rows or loadAll; kind steps, hr, hrseries or hrslice): runs one collection and
    /// exits. `build|store|steps` (or `hr`) only builds that store, for profiling the query
    /// alone: `valgrind --tool=callgrind env HG_BENCH_STATS_CHILD=streaming|store|steps healthgate-bench --only stats`.
    static func statsChild(_ spec: String) throws {
        let parts = spec.split(separator: "|").map(String.init)
        guard parts.count == 3 else { throw CLIFailure("HG_BENCH_STATS_CHILD must be engine|store|steps-or-hr", code: .usage) }
        if parts[0] == "build" {
            // Only builds the store (to profile the queries over it, e.g. under callgrind).
            if parts[2] == "steps" { _ = try buildStepsYear(path: parts[1]) } else { try buildHeartRate(path: parts[1], count: 2_000_000) }
            return
        }
        let engine: StatisticsPath = parts[0] == "loadAll" ? .loadAll : parts[0] == "rows" ? .streamingRowsOnly : .streaming
        let store = try HealthStore(path: parts[1], mode: .readOnly)
        let buckets: [Statistics]
        let expected: Int
        switch parts[2] {
        case "hrseries": expected = statsSeriesDays; buckets = try heartRateSeriesCollection(store, days: expected, path: engine)
        case "hrslice": expected = min(statsSeriesDays, statsSeriesSliceDays); buckets = try heartRateSeriesCollection(store, days: expected, path: engine)
        default: expected = 365; buckets = try dailyCollection(store, heartRate: parts[2] == "hr", path: engine)
        }
        guard buckets.count == expected else { throw CLIFailure("the child's collection has \(buckets.count) buckets, not \(expected)", code: .software) }
    }
}

extension HealthGateBench {
    /// Runs the stats part and prints its figures and ratios.
    func statsPart(into out: inout [String: Any], dir: String, say: (String) -> Void) throws {
        if let spec = ProcessInfo.processInfo.environment["HG_BENCH_STATS_CHILD"] {
            try Bench.statsChild(spec)
            return
        }
        let rounds = min(self.rounds, 3)
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
        say("== stats (daily collections in Europe/Berlin over 2026; median of \(rounds) rounds; load average \(load))")
        let mib = { (b: Int) in Double(b) / 1_048_576 }
        let tool = try? healthgateExecutable()

        /// Times one engine: wall and this thread's CPU time (what the query itself costs when
        /// other processes share the CPUs), medians.
        func time(_ store: HealthStore, hr: Bool, _ path: StatisticsPath) throws -> (ms: Double, cpuMs: Double, buckets: [Statistics]) {
            var runs: [Double] = [], cpu: [Double] = []
            var last: [Statistics] = []
            for _ in 0..<rounds {
                let start = ContinuousClock.now, cpuStart = Bench.threadCPUSeconds()
                last = try Bench.dailyCollection(store, heartRate: hr, path: path)
                runs.append(Bench.seconds(start.duration(to: .now)) * 1000)
                cpu.append((Bench.threadCPUSeconds() - cpuStart) * 1000)
            }
            return (runs.median ?? 0, cpu.median ?? 0, last)
        }
        func childRSS(_ engine: String, _ db: String, _ kind: String) throws -> Int {
            let r = try Bench.runChild([Bench.executable.path, "--only", "stats"], work: dir,
                                       environment: ["HG_BENCH_STATS_CHILD": "\(engine)|\(db)|\(kind)"])
            guard r.status == 0, r.maxRSS > 0 else {
                throw CLIFailure("the stats child (\(engine), \(kind)) failed or no peak memory was read: \(r.stderr)", code: .software)
            }
            return r.maxRSS
        }
        /// `healthgate stats` itself over the same store: (wall ms including process start, peak
        /// memory); nil without the tool.
        func cli(_ db: String, hr: Bool) throws -> (Double, Int)? {
            guard let tool else { return nil }
            let r = try Bench.runChild([tool.path, "stats", "--db", db,
                                        "--type", hr ? "heartRate" : "stepCount",
                                        "--option", hr ? "discreteMin" : "cumulativeSum"] + (hr ? ["--option", "discreteMax", "--option", "discreteAverage"] : [])
                                       + ["--interval", "1d", "--tz", "Europe/Berlin", "--from", "2026-01-01", "--to", "2027-01-01", "--json"], work: dir)
            guard r.status == 0, r.maxRSS > 0 else {
                throw CLIFailure("healthgate stats failed (\(r.status)): \(r.stderr)", code: .software)
            }
            return (r.seconds * 1000, r.maxRSS)
        }
        func same(_ a: [Statistics], _ b: [Statistics]) -> Bool {
            a.count == b.count && zip(a, b).allSatisfy { x, y in
                func close(_ p: Double?, _ q: Double?) -> Bool { p == q || (p != nil && q != nil && abs(p! - q!) <= 1e-9 * max(1, abs(p!))) }
                return x.start == y.start && close(x.values.sum, y.values.sum) && close(x.values.average, y.values.average)
                    && x.values.minimum == y.values.minimum && x.values.maximum == y.values.maximum && x.values.sampleCount == y.values.sampleCount
            }
        }

        // HG_BENCH_STATS_SERIES_ONLY=1 skips the individually stored stores (iterating on series).
        let seriesOnly = ProcessInfo.processInfo.environment["HG_BENCH_STATS_SERIES_ONLY"] == "1"
        // HG_BENCH_STATS_STEPS_ONLY=1 runs only the steps store (iterating on it).
        let stepsOnly = ProcessInfo.processInfo.environment["HG_BENCH_STATS_STEPS_ONLY"] == "1"
        for hr in [false, true] where !seriesOnly && !(stepsOnly && hr) {
            let db = dir + (hr ? "/stats-hr.sqlite" : "/stats-steps.sqlite")
            let kind = hr ? "hr" : "steps"
            let build = ContinuousClock.now
            var label: String
            if hr {
                let rate = try Bench.buildHeartRate(path: db, count: statsHeartRateSamples)
                label = "heart rate, \(statsHeartRateSamples) 1 Hz readings stored individually, min/max/average"
                // The rollups' insert cost: the same rows into stores keeping them three ways.
                let n = min(statsHeartRateSamples, 1_000_000)
                var rates: [Bench.RollupUpkeep: Double] = [:]
                for upkeep in [Bench.RollupUpkeep.none, .batched, .perRow] {
                    let p = dir + "/stats-hr-\(upkeep).sqlite"
                    rates[upkeep] = try Bench.buildHeartRate(path: p, count: n, rollups: upkeep)
                    unlink(p)
                }
                let none = rates[.none] ?? 0
                say("  bulk writer, \(n) heart-rate rows (the \(statsHeartRateSamples)-row build: \(Int(rate)) rows/s):")
                for upkeep in [Bench.RollupUpkeep.none, .batched, .perRow] {
                    let r = rates[upkeep] ?? 0
                    say(String(format: "    %-34@ %8.0f rows/s (%.2fx)", "rollups \(upkeep.rawValue)" as NSString, r, r / none))
                }
                out["statsInsertBatchedRollupsRowsPerSecond"] = rates[.batched]
                out["statsInsertPerRowRollupsRowsPerSecond"] = rates[.perRow]
                out["statsInsertNoRollupsRowsPerSecond"] = none
            } else {
                let (p, w) = try Bench.buildStepsYear(path: db)
                label = "steps, \(p) iPhone minutes + \(w) Watch minutes on every 7th day (Watch first), cumulativeSum"
            }
            say("  \(label) (built in \(String(format: "%.1f", Bench.seconds(build.duration(to: .now)))) s)")
            if !hr {
                let ix = try Bench.startIndexCost(path: db)
                say(String(format: "    start index on disk: %.1f MiB covering (migration 8) vs %.1f MiB (type, start) before it, of a %.1f MiB file; rebuilt in %.0f ms (REINDEX)",
                           mib(ix.covering), mib(ix.before), mib(ix.file), ix.reindexMs))
                out["statsStepsStartIndexBytes"] = ix.covering
                out["statsStepsStartIndexBeforeBytes"] = ix.before
                out["statsStepsStartIndexReindexMs"] = ix.reindexMs
            }
            let store = try HealthStore(path: db, mode: .readOnly)
            let fast = try time(store, hr: hr, .streaming)
            let rows = try time(store, hr: hr, .streamingRowsOnly)
            // The old engine holds every sample: past 5M readings it needs gigabytes, so it is skipped.
            let old = hr && statsHeartRateSamples > 5_000_000 ? nil : try time(store, hr: hr, .loadAll)
            guard fast.buckets.count == 365, same(fast.buckets, rows.buckets), old.map({ same(fast.buckets, $0.buckets) }) ?? true else {
                throw CLIFailure("the \(kind) collections of the three engines differ", code: .software)
            }
            // What the default engine read: rollup rows answered or found covered, rows decoded.
            let work = StatisticsWork()
            _ = try store.statisticsCollection(Bench.statsQuery(heartRate: hr), interval: .days(1), timeZone: Bench.berlin,
                                               path: .streaming, work: work)
            say("    rollup rows answered \(work.rollupRowsAnswered), covered whole (unread) \(work.rollupRowsCovered); rows decoded \(work.rowsDecoded)")
            out["stats\(hr ? "HeartRate" : "Steps")RowsDecoded"] = work.rowsDecoded
            let rssFast = try childRSS("streaming", db, kind)
            let rssRows = try childRSS("rows", db, kind)
            let rssOld = old == nil ? nil : try childRSS("loadAll", db, kind)
            let goal = hr ? 250.0 : 50.0
            say(String(format: "    streaming + rollups   %8.1f ms (CPU %6.1f ms)  peak RSS %5.1f MiB  (goal <= %.0f ms, <= 48 MiB)",
                           fast.ms, fast.cpuMs, mib(rssFast), goal))
            say(String(format: "    streaming, rows only  %8.1f ms (CPU %6.1f ms)  peak RSS %5.1f MiB", rows.ms, rows.cpuMs, mib(rssRows)))
            if let old, let rssOld {
                say(String(format: "    old engine (loadAll)  %8.1f ms (CPU %6.1f ms)  peak RSS %5.1f MiB  -> %.1fx faster (CPU %.1fx), %.1fx less memory",
                           old.ms, old.cpuMs, mib(rssOld), old.ms / fast.ms, old.cpuMs / fast.cpuMs, Double(rssOld) / Double(rssFast)))
                out["stats\(hr ? "HeartRate" : "Steps")OldMs"] = old.ms
                out["stats\(hr ? "HeartRate" : "Steps")OldRSSBytes"] = rssOld
            } else {
                say("    old engine (loadAll)  skipped (it would hold all \(statsHeartRateSamples) samples in memory)")
            }
            if let (ms, rss) = try cli(db, hr: hr) {
                say(String(format: "    healthgate stats --interval 1d --tz Europe/Berlin --json: %.0f ms wall (with process start), peak RSS %.1f MiB", ms, mib(rss)))
                out["stats\(hr ? "HeartRate" : "Steps")CLIRSSBytes"] = rss
            }
            out["stats\(hr ? "HeartRate" : "Steps")Ms"] = fast.ms
            out["stats\(hr ? "HeartRate" : "Steps")CPUMs"] = fast.cpuMs
            out["stats\(hr ? "HeartRate" : "Steps")RowsOnlyMs"] = rows.ms
            out["stats\(hr ? "HeartRate" : "Steps")RSSBytes"] = rssFast
            unlink(db); unlink(db + "-wal"); unlink(db + "-shm")
        }
        if stepsOnly { return }
        try statsSeriesPart(into: &out, dir: dir, rounds: rounds, say: say, childRSS: childRSS, same: same,
                            cli: { try cli($0, hr: true) })
    }
}
