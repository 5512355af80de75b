import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Simulators
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// After a clean stop of a writing process, the main database file alone holds every sample
/// (docs/store.md, "Checkpoint on shutdown"): copying `health.sqlite` without its `-wal` after
/// `systemctl stop` must give the whole store.
@Suite(.serialized) struct CheckpointOnStopTests {
    /// Samples in a copy of `path`'s main file alone (no -wal next to the copy).
    static func samplesInMainFileAlone(_ path: String) throws -> Int {
        let copy = (path as NSString).deletingLastPathComponent + "/copy-\(UUID().uuidString.prefix(8)).sqlite"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        defer { for f in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + f) } }
        return try HealthStore(path: copy, mode: .readOnly).count(SampleQuery())
    }

    /// The -wal file's size (0 when it is absent).
    static func walSize(_ path: String) -> Int {
        var st = stat()
        return stat(path + "-wal", &st) == 0 ? Int(st.st_size) : 0
    }

    @Test func afterSIGTERMOfRunTheMainFileAloneHoldsEverySample() async throws {
        let load = try SimulatedLoad(directory: shortTempDirectory("ckpt"), straps: 2, rate: 10, pedometers: 1,
                                     pedometerInterval: .milliseconds(100))
        defer { load.stop() }
        load.start()
        let db = tempDBPath("checkpoint")
        let (child, _) = try startRun(load, db: db, flushMs: 50)
        defer { if child.process.isRunning { child.signal(SIGKILL) } }
        // Well past a few hundred samples, but far below an automatic checkpoint (4000 pages).
        #expect(await eventually(seconds: 120) {
            ((try? HealthStore(path: db, mode: .readOnly).count(SampleQuery())) ?? 0) >= 300
        }, "\(child.stderr)")
        #expect(Self.walSize(db) > 0, "the test needs commits in the -wal while run runs")
        // A reader stays connected across the stop (`watch`, a dashboard): the daemon's close is
        // then not the last one, so SQLite's own checkpoint-at-last-close does not happen.
        let reader = try HealthStore(path: db, mode: .readOnly)
        _ = try reader.count(SampleQuery())
        child.signal(SIGTERM)
        #expect(await offThread { child.wait() } == 0, "\(child.stderr)")
        let total = try HealthStore(path: db, mode: .readOnly).count(SampleQuery())
        #expect(total >= 300)
        #expect(Self.walSize(db) == 0, "the -wal still holds \(Self.walSize(db)) bytes after a clean stop")
        #expect(try Self.samplesInMainFileAlone(db) == total)
        withExtendedLifetime(reader) {}
    }
}
