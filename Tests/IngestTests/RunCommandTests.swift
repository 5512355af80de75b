import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Simulators
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `healthgate run` as a real child process: config errors, and a pty pedometer ingested until
/// SIGTERM.
@Suite(.serialized) struct RunCommandTests {
    func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hg-\(UUID().uuidString).toml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aBadConfigExits78NamingFileAndLine() async throws {
        let cfg = try write("[ingest]\nbatch_size = 10\nflush_interval_ms = -5\n")
        let child = try Child(["run", "--config", cfg, "--db", tempDBPath("cfg")])
        #expect(await offThread { child.wait() } == 78)
        #expect(child.stderr.contains("\(cfg):3:"), "\(child.stderr)")
        #expect(child.stderr.contains("flush_interval_ms"), "\(child.stderr)")
    }

    @Test func aBadSyncIntervalExits78NamingTheKey() async throws {
        let cfg = try write("[ingest]\nsync_interval_ms = 3600000\n")
        let child = try Child(["run", "--config", cfg, "--db", tempDBPath("cfg")])
        #expect(await offThread { child.wait() } == 78)
        #expect(child.stderr.contains("\(cfg):2:") && child.stderr.contains("'sync_interval_ms' in [ingest]: 3600000 is outside 0…600000"),
                "\(child.stderr)")
    }

    @Test func twoPedometersWithOneIdExit78NamingBothLines() async throws {
        let cfg = try write("[[pedometer]]\npath = \"/dev/null\"\nid = \"p\"\n\n[[pedometer]]\npath = \"/dev/zero\"\nid = \"p\"\n")
        let child = try Child(["run", "--config", cfg, "--db", tempDBPath("cfg")])
        #expect(await offThread { child.wait() } == 78)
        #expect(child.stderr.contains("\(cfg):7:") && child.stderr.contains("\(cfg):3"), "\(child.stderr)")
    }

    @Test func aMissingConfigExits78() async throws {
        let child = try Child(["run", "--config", "/nonexistent/healthgate.toml", "--db", tempDBPath("cfg")])
        #expect(await offThread { child.wait() } == 78)
        #expect(child.stderr.contains("/nonexistent/healthgate.toml"))
    }

    @Test func ingestsAPtyPedometerAndStopsCleanlyOnSIGTERM() async throws {
        let pedometer = try SimulatedPedometer()
        let db = tempDBPath("run")
        let cfg = try write("""
            status_interval = 1
            [ingest]
            flush_interval_ms = 50
            [[pedometer]]
            path = "\(pedometer.path)"
            baud = 115200
            name = "Test pedometer"
            """)
        let child = try Child(["run", "--config", cfg, "--db", db])
        #expect(await eventually { child.stderr.contains("opening it") }, "\(child.stderr)")
        pedometer.start(interval: .milliseconds(20))
        let store = try HealthStore(path: db)
        #expect(await eventually { ((try? store.count(SampleQuery(type: .stepCount))) ?? 0) >= 5 }, "\(child.stderr)")
        pedometer.stop()
        child.signal(SIGTERM)
        #expect(await offThread { child.wait() } == 0, "\(child.stderr)")
        let last = child.stderr.split(separator: "\n").last { $0.contains("stopped:") }
        #expect(last?.contains(" 0 waiting, 0 dropped") == true, "\(child.stderr)")
        #expect(try store.count(SampleQuery(type: .stepCount)) >= 5)
    }

    /// `[[strap]] socket = "…"` mistakes end `run` before it starts (the key rules: ConfigurationTests).
    @Test func runRefusesABadSocketKeyWithExit78() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hg-\(UUID().uuidString).toml").path
        try "[[strap]]\nsocket = \"relative.sock\"\n".write(toFile: path, atomically: true, encoding: .utf8)
        let child = try Child(["run", "--config", path, "--db", tempDBPath("sockcfg")])
        #expect(await offThread { child.wait() } == 78)
        #expect(child.stderr.contains("\(path):2:"), "\(child.stderr)")
    }
}
