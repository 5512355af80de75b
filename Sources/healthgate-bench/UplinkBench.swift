import ChildProcess
import Foundation
import ScratchPostgres
import Uplink

/// The `uplink` part of `healthgate-bench` (issue 14): a Pi that was offline for a week catches
/// up. A week of one strap at 1 Hz (604,800 heart-rate quantities with RR, in quantity series,
/// built by the series writer as `run` writes them) is pushed by `healthgate uplink push` (the
/// built binary, default batch size) into a throwaway PostgreSQL cluster (Debian's `initdb` and
/// `pg_ctl`, loopback, `fsync=off` for both measurements alike). The ceiling in the same run is
/// PostgreSQL's own bulk path for the very same rows: they are copied out, the tables emptied,
/// and `psql \copy` loads them into the same tables with the same indexes and constraints.
extension Bench {
    struct UplinkFigures {
        var quantities = 0
        var pushSeconds = 0.0, copySeconds = 0.0
        /// The push's peak anonymous resident memory (`RssAnon`, polled while it runs), in MB.
        var pushPeakMB = 0.0
        var pushPerSecond: Double { Double(quantities) / max(pushSeconds, 1e-9) }
        var copyPerSecond: Double { Double(quantities) / max(copySeconds, 1e-9) }
        var ratio: Double { pushPerSecond / max(copyPerSecond, 1e-9) }
    }

    /// The columns a row of the central tables is loaded with (the generated times excluded).
    static let centralColumns = "gateway, uuid, type, value, start_s, end_s, source, device, metadata, rr_ticks, rr_gap"

    static func uplinkBackfill(days: Int, work: String, healthgate: URL, progress: (String) -> Void) throws -> UplinkFigures {
        let (cached, _, _) = try heartRateSeriesStore(days: days)
        let store = work + "/uplink-week.sqlite"
        try? FileManager.default.removeItem(atPath: store)
        try FileManager.default.copyItem(atPath: cached, toPath: store)   // the push records its anchor in the store
        let cluster = try PostgresCluster.get()
        defer { try? cluster.stop() }
        let db = try cluster.createDatabase("bench_\(UInt32.random(in: 0...UInt32.max))")
        progress("  pushing \(days) days with `healthgate uplink push` into PostgreSQL (\(cluster.directory))")
        let push = try WatchedChild([healthgate.path, "uplink", "push", "--db", store, "--url", cluster.url(db), "--gateway", "bench"],
                                    stderr: .file(work + "/uplink-push.log"))
        let status = try push.wait(timeout: 3600)
        guard status == 0 else {
            let log = (try? String(contentsOfFile: work + "/uplink-push.log", encoding: .utf8)) ?? ""
            throw PostgresCluster.Failure("uplink push exited \(status): \(log)")
        }
        var f = UplinkFigures()
        f.pushSeconds = push.seconds
        f.pushPeakMB = Double(push.peakAnonymousBytes) / 1_048_576
        f.quantities = Int(try cluster.psql(db, "SELECT (SELECT count(*) FROM healthgate.series_quantities) + (SELECT count(*) FROM healthgate.samples)").first ?? "") ?? 0

        // The ceiling: the same rows through COPY into the same (emptied) tables.
        let series = cluster.directory + "/bench-series.copy", samples = cluster.directory + "/bench-samples.copy"
        _ = try cluster.psql(db, "\\copy (SELECT \(centralColumns.replacingOccurrences(of: "uuid,", with: "uuid, series_index,")) FROM healthgate.series_quantities) TO '\(series)'")
        _ = try cluster.psql(db, "\\copy (SELECT \(centralColumns) FROM healthgate.samples) TO '\(samples)'")
        _ = try cluster.psql(db, "TRUNCATE healthgate.series_quantities, healthgate.samples")
        progress("  loading the same \(f.quantities) rows with psql \\copy")
        let t0 = Date()
        _ = try cluster.psql(db, "\\copy healthgate.samples(\(centralColumns)) FROM '\(samples)'")
        _ = try cluster.psql(db, "\\copy healthgate.series_quantities(\(centralColumns.replacingOccurrences(of: "uuid,", with: "uuid, series_index,"))) FROM '\(series)'")
        f.copySeconds = Date().timeIntervalSince(t0)
        let loaded = Int(try cluster.psql(db, "SELECT (SELECT count(*) FROM healthgate.series_quantities) + (SELECT count(*) FROM healthgate.samples)").first ?? "") ?? 0
        guard loaded == f.quantities else {
            throw PostgresCluster.Failure("the COPY ceiling loaded \(loaded) rows, the push \(f.quantities): not the same rows")
        }
        return f
    }
}

extension HealthGateBench {
    func uplinkPart(into out: inout [String: Any], dir: String, say: (String) -> Void) throws {
        let daemon = try healthgateExecutable()
        let days = Int(ProcessInfo.processInfo.environment["HG_BENCH_UPLINK_DAYS"] ?? "") ?? 7
        say("== uplink (a week offline: \(days) days of one strap at 1 Hz pushed to PostgreSQL vs psql \\copy of the same rows)")
        let f = try Bench.uplinkBackfill(days: days, work: dir, healthgate: daemon, progress: say)
        say(String(format: "  uplink push                      %.0f rows/s (%d rows in %.1f s, process start to exit)", f.pushPerSecond, f.quantities, f.pushSeconds))
        say(String(format: "  psql \\copy, the ceiling          %.0f rows/s (%.1f s)", f.copyPerSecond, f.copySeconds))
        say(String(format: "  ratio                            %.2fx of the COPY ceiling (goal >= 0.5x)", f.ratio))
        say(String(format: "  push peak RssAnon                %.0f MB (batches of the default %d items; it must not grow with the backlog)",
                   f.pushPeakMB, UplinkPusher.defaultBatchSize))
        out["uplinkPushPeakMB"] = f.pushPeakMB
        out["uplinkRows"] = f.quantities
        out["uplinkPushRowsPerSecond"] = f.pushPerSecond
        out["uplinkCopyRowsPerSecond"] = f.copyPerSecond
        out["uplinkRatioToCopy"] = f.ratio
    }
}
