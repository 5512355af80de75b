import Foundation
import Gateway
import HealthModel
import HealthStore
import Sysexits
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The quantity-series half of the `stats` part (issue 12): a year of one strap at 1 Hz
/// (31,536,000 readings, receipt times with millisecond jitter) stored as quantity series, and
/// the daily heart-rate min/max/average collection in Europe/Berlin over it.
///
/// The store is built through the ingest writer's own series path (`SeriesWriter`: the chunks,
/// their aggregates and encoding exactly as `healthgate run` writes them), one series per day
/// (as if the gateway reconnected every midnight), one transaction per day. It is built once and
/// kept under the system temporary directory (`hg-bench-cache/`), keyed by the store's schema
/// version and the writer's chunk bounds, and used again only when it holds every reading.
///
/// Measured: the default engine (chunks inside a day from their aggregates, the day-edge chunks
/// decoded); the baseline in the same run is the same sweep decoding every chunk
/// (`StatisticsPath.streamingRowsOnly`) over the same store, and, for memory, the engine the
/// series fell back to before (`loadAll`: every quantity in memory) over the first 14 days.
extension Bench {
    /// Days of the series store.
    static let statsSeriesDays = Int(ProcessInfo.processInfo.environment["HG_BENCH_STATS_SERIES_DAYS"] ?? "") ?? 365
    /// Days of the old engine's slice.
    static let statsSeriesSliceDays = 14

    /// The reading time of reading `k`: one a second with 0–8 ms of receipt jitter.
    @inline(__always)
    static func seriesReadingTime(_ k: Int) -> Double {
        statsYearStart + Double(k) + Double((k &* 7919) % 9) / 1000
    }

    /// Builds (or finds) the series store; returns its path, whether it was built now, and the
    /// build's seconds.
    static func heartRateSeriesStore(days: Int) throws -> (path: String, built: Bool, seconds: Double) {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("hg-bench-cache").path
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        // Keyed by the schema version a new store gets and the writer's chunk bounds (a new
        // layout builds it again), and checked for its quantity count before use.
        let probe = cache + "/schema-probe.sqlite"
        unlink(probe)
        let version = try HealthStore(path: probe).withConnection { try $0.int64Pragma("user_version") }
        unlink(probe); unlink(probe + "-wal"); unlink(probe + "-shm")
        let bounds = SeriesWriter()
        let path = cache + "/stats-hr-series-v1-schema\(version)-chunk\(bounds.maxChunkQuantities)q\(Int(bounds.maxChunkSpan))s-\(days)d.sqlite"
        if FileManager.default.fileExists(atPath: path),
           let count = try? HealthStore(path: path, mode: .readOnly).withConnection({ db -> Int in
               let st = try db.prepare("SELECT coalesce(sum(count), 0) FROM series", cached: false)
               _ = try st.step()
               return st.int(0)
           }), count == days * 86_400 {
            return (path, false, 0)
        }
        // Older stores go (each is ~100 MB).
        for old in (try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? [] where old.hasPrefix("stats-hr-series-") {
            unlink(cache + "/" + old)
        }
        let partial = path + ".partial"
        unlink(partial); unlink(partial + "-wal"); unlink(partial + "-shm")
        let start = ContinuousClock.now
        do {
            let store = try HealthStore(path: partial)
            for day in 0..<days {
                try store.write { w in
                    let key = SeriesWriter.Key(typeID: try w.typeID(.heartRate), sourceID: try w.sourceID(StrapSource.source),
                                               deviceID: try w.deviceID(device))
                    let writer = SeriesWriter()
                    try [UInt16]().withUnsafeBufferPointer { rr in
                        for k in (day * 86_400)..<((day + 1) * 86_400) {
                            let t = seriesReadingTime(k)
                            try writer.append(w, key: key, style: .discreteTemporallyWeighted, sensorLocation: .chest, start: t, end: t,
                                              value: Double(60 + (k / 7) % 90), contact: .detected, flags: [], rr: rr)
                        }
                    }
                    try writer.closeAll(w)
                }
            }
            _ = try store.withConnection { db in try db.checkpoint() }
        }
        guard rename(partial, path) == 0 else { throw CLIFailure("cannot rename \(partial): \(String(cString: strerror(errno)))", code: .ioError) }
        unlink(partial + "-wal"); unlink(partial + "-shm")
        return (path, true, seconds(start.duration(to: .now)))
    }

    /// The daily collection over the first `days` days of the year.
    static func heartRateSeriesCollection(_ store: HealthStore, days: Int, path: StatisticsPath,
                                          work: StatisticsWork? = nil) throws -> [Statistics] {
        var q = statsQuery(heartRate: true)
        q.end = Date(timeIntervalSince1970: statsYearStart + Double(days) * 86_400)
        return try store.statisticsCollection(q, interval: .days(1), timeZone: berlin, path: path, work: work)
    }
}

extension HealthGateBench {
    /// Runs the series half of the stats part.
    func statsSeriesPart(into out: inout [String: Any], dir: String, rounds: Int, say: (String) -> Void,
                         childRSS: (String, String, String) throws -> Int, same: ([Statistics], [Statistics]) -> Bool,
                         cli: (String) throws -> (Double, Int)?) throws {
        let days = Bench.statsSeriesDays
        let slice = min(days, Bench.statsSeriesSliceDays)
        let mib = { (b: Int) in Double(b) / 1_048_576 }
        let (db, built, buildSeconds) = try Bench.heartRateSeriesStore(days: days)
        let store = try HealthStore(path: db, mode: .readOnly)
        let (series, chunks, bytes) = try store.withConnection { c -> (Int, Int, Int) in
            let st = try c.prepare("SELECT (SELECT count(*) FROM series), (SELECT count(*) FROM series_chunks), (SELECT sum(length(data)) FROM series_chunks)", cached: false)
            _ = try st.step()
            return (st.int(0), st.int(1), st.int(2))
        }
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: db)[.size] as? Int) ?? 0
        say("  heart rate, \(days * 86_400) 1 Hz readings of one strap stored as quantity series (\(series) series, one a day; \(chunks) chunks; "
            + String(format: "encoded data %.2f B/reading, file %.1f MiB), min/max/average", Double(bytes) / Double(days * 86_400), mib(fileBytes)))
        say(built ? String(format: "    store built now through SeriesWriter (the ingest path), one transaction a day, in %.1f s; cached at %@", buildSeconds, db)
                  : "    store from the cache (built earlier by this bench executable through SeriesWriter): \(db)")

        func time(_ path: StatisticsPath, days: Int, rounds: Int) throws -> (ms: Double, buckets: [Statistics], work: StatisticsWork) {
            var runs: [Double] = []
            var last: [Statistics] = []
            var work = StatisticsWork()
            for _ in 0..<rounds {
                work = StatisticsWork()
                let start = ContinuousClock.now
                last = try Bench.heartRateSeriesCollection(store, days: days, path: path, work: work)
                runs.append(Bench.seconds(start.duration(to: .now)) * 1000)
            }
            return (runs.median ?? 0, last, work)
        }
        let fast = try time(.streaming, days: days, rounds: rounds)
        let all = try time(.streamingRowsOnly, days: days, rounds: 1)
        let fastSlice = try time(.streaming, days: slice, rounds: rounds)
        let old = try time(.loadAll, days: slice, rounds: 1)
        guard fast.buckets.count == days, same(fast.buckets, all.buckets), same(fastSlice.buckets, old.buckets),
              fast.buckets.map(\.values.sampleCount).reduce(0, +) == days * 86_400 else {
            throw CLIFailure("the series collections of the engines differ", code: .software)
        }
        let rssFast = try childRSS("streaming", db, "hrseries")
        let rssAll = try childRSS("rows", db, "hrseries")
        let rssOld = try childRSS("loadAll", db, "hrslice")
        let rssFastSlice = try childRSS("streaming", db, "hrslice")
        say(String(format: "    streaming, chunk aggregates  %8.1f ms  peak RSS %5.1f MiB  (goal <= 250 ms, <= 48 MiB); %d chunks from aggregates, %d decoded",
                   fast.ms, mib(rssFast), fast.work.chunksFromAggregates, fast.work.chunksDecoded))
        say(String(format: "    baseline: same sweep decoding every chunk %8.1f ms  peak RSS %5.1f MiB  -> aggregates %.1fx faster",
                   all.ms, mib(rssAll), all.ms / fast.ms))
        say(String(format: "    first %d days: streaming %.1f ms, peak RSS %.1f MiB; old fallback (loadAll, every quantity in memory) %.1f ms, peak RSS %.1f MiB"
                   + " -> %.1fx faster, %.1fx less memory (a year would need ~%.0f MiB)",
                   slice, fastSlice.ms, mib(rssFastSlice), old.ms, mib(rssOld), old.ms / fastSlice.ms, Double(rssOld) / Double(rssFastSlice),
                   mib(rssFastSlice) + mib(rssOld - rssFastSlice) * Double(days) / Double(slice)))
        if let (ms, rss) = try cli(db) {
            say(String(format: "    healthgate stats --interval 1d --tz Europe/Berlin --json: %.0f ms wall (with process start), peak RSS %.1f MiB", ms, mib(rss)))
            out["statsHeartRateSeriesCLIRSSBytes"] = rss
        }
        out["statsHeartRateSeriesMs"] = fast.ms
        out["statsHeartRateSeriesRSSBytes"] = rssFast
        out["statsHeartRateSeriesDecodeAllMs"] = all.ms
        out["statsHeartRateSeriesDecodeAllRSSBytes"] = rssAll
        out["statsHeartRateSeriesChunksFromAggregates"] = fast.work.chunksFromAggregates
        out["statsHeartRateSeriesChunksDecoded"] = fast.work.chunksDecoded
        out["statsHeartRateSeriesSliceOldRSSBytes"] = rssOld
        out["statsHeartRateSeriesSliceRSSBytes"] = rssFastSlice
    }
}
