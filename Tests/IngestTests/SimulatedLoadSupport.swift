import Foundation
import HealthModel
import HealthStore
import Simulators
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

// Shared by the tests that run a real `healthgate run` child against a `SimulatedLoad`
// (straps on Unix sockets, pedometers on ptys).

/// Polls `condition` every 20 ms for up to `seconds` (a generous bound for a loaded machine,
/// not a timing assertion). Sleeps with `Task.sleep`, off the cooperative pool's threads.
func eventually(seconds: Double, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}

/// A short, fresh directory for sockets (a Unix socket path must stay under 108 bytes).
func shortTempDirectory(_ tag: String) -> String {
    "/tmp/hg-\(tag)-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
}

/// Writes `load`'s configuration (with `flushMs`) beside `db` and starts `healthgate run` on it,
/// with `environment` added to the child's.
func startRun(_ load: SimulatedLoad, db: String, flushMs: Int = 250,
              environment: [String: String] = [:]) throws -> (child: Child, config: String) {
    let dir = (db as NSString).deletingLastPathComponent
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let config = dir + "/sim-\(UUID().uuidString.prefix(8)).toml"
    try load.configuration(flushIntervalMs: flushMs, statusInterval: 1).write(toFile: config, atomically: true, encoding: .utf8)
    return (try Child(["run", "--config", config, "--db", db], environment: environment), config)
}

/// Opens the store at `path` for reading counts.
struct StoreProbe {
    let store: HealthStore
    init(_ path: String) throws { store = try HealthStore(path: path) }

    /// Heart-rate rows of the device named `name`.
    func heartRate(_ name: String) -> Int { (try? store.count(SampleQuery(type: .heartRate, device: name))) ?? -1 }
    /// Step-count rows of the device named `name`.
    func steps(_ name: String) -> Int { (try? store.count(SampleQuery(type: .stepCount, device: name))) ?? -1 }
    /// Every heart-rate row.
    var heartRateTotal: Int { (try? store.count(SampleQuery(type: .heartRate))) ?? -1 }
    /// Every step-count row.
    var stepRows: Int { (try? store.count(SampleQuery(type: .stepCount))) ?? -1 }

    /// `PRAGMA integrity_check`'s first row ("ok" for a sound database).
    func integrity() throws -> String? {
        try store.withConnection { db in
            let s = try db.prepare("PRAGMA integrity_check", cached: false)
            _ = try s.step()
            return s.string(0)
        }
    }
}
