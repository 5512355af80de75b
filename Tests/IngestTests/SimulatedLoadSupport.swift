import Foundation
import HealthModel
import HealthStore
import HealthGateTesting
import Simulators
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

// Shared by the tests that run a real `healthgate run` child against a `SimulatedLoad`
// (straps on Unix sockets, pedometers on ptys).

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

/// A `healthgate run` that was SIGKILLed mid-ingest, and what the checks after the kill need.
struct KilledRun {
    /// The store, opened after the kill.
    let probe: StoreProbe
    /// The configuration the run read (a second run on the same database uses it).
    let config: String
}

/// The crash every SIGKILL test stages, and what every crash must leave. Starts `healthgate
/// run` on `load` (flush interval `flushMs`), waits until `ready` holds, lets `moreSent` more
/// notifications go out (by the sender's clock, not at a commit just seen: whatever the daemon
/// holds uncommitted is at risk), kills it, then checks: a sound file; nothing committed before
/// the kill gone; per strap, every notification sent more than one flush window plus
/// `inFlightAllowance` (the commit in flight, the scheduling delay of a loaded machine) before
/// the kill stored, and nothing stored that was not sent (docs/ingestion.md's bound).
func sigkillRunMidIngest(_ load: SimulatedLoad, db: String, flushMs: Int, inFlightAllowance: Double, moreSent: Int,
                         ready: (StoreProbe) -> Bool) async throws -> KilledRun {
    let (child, config) = try startRun(load, db: db, flushMs: flushMs)
    let probe = try StoreProbe(db)
    #expect(await eventually(seconds: 180) { ready(probe) },
            "per strap: \(load.straps.map { probe.heartRate($0.name) }); \(child.stderr)")
    let mark = load.totalSent
    #expect(await eventually(seconds: 120) { load.totalSent >= mark + moreSent }, "\(child.stderr)")
    let committedBeforeKill = probe.heartRateTotal + probe.stepRows

    let killedAt = Date()
    child.signal(SIGKILL)
    #expect(await offThread { child.wait() } == 128 + SIGKILL)

    #expect(try probe.integrity() == "ok")
    #expect(probe.heartRateTotal + probe.stepRows >= committedBeforeKill)
    let window = Double(flushMs) / 1000 + inFlightAllowance
    for (k, strap) in load.straps.enumerated() {
        let stored = probe.heartRate(strap.name)
        let mustHave = load.sentCount(strap: k, before: killedAt.addingTimeInterval(-window))
        #expect(stored >= mustHave, "\(strap.name): \(stored) stored, but \(mustHave) were sent more than \(window) s before the kill")
        #expect(stored <= load.sentCount(strap: k), "\(strap.name): more stored than sent")
    }
    return KilledRun(probe: probe, config: config)
}
