import Foundation
import HealthGateTesting
import Simulators
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `healthgate run` on a machine whose Swift concurrency pool has one thread (a single-core
/// board; here any machine, with `sysconf` made to report one CPU through `LD_PRELOAD`). The
/// daemon blocks its command thread until SIGTERM while each strap's GATT setup awaits on that
/// pool: if the command itself held the pool's only thread, no strap would ever be subscribed.
@Suite(.serialized) struct SingleCoreRunTests {
    @Test func runSubscribesEveryStrapWhenThePoolHasOneThread() async throws {
        let shim = try OneCPUShim.path()
        // The shim takes effect: a child asking sysconf for the CPU count hears 1 (libdispatch
        // sizes the cooperative pool from it; without the fix in HealthGate.main this test fails).
        #expect(try OneCPUShim.onlineCPUs(preloading: shim) == "1")
        let load = try SimulatedLoad(directory: shortTempDirectory("1cpu"), straps: 3, rate: 4, pedometers: 1,
                                     pedometerInterval: .milliseconds(200))
        defer { load.stop() }
        load.start()
        let db = tempDBPath("onecpu")
        let (child, _) = try startRun(load, db: db, flushMs: 100, environment: ["LD_PRELOAD": shim])
        let probe = try StoreProbe(db)
        #expect(await eventually(seconds: 60) { load.straps.allSatisfy { probe.heartRate($0.name) >= 3 } },
                "per strap: \(load.straps.map { probe.heartRate($0.name) }); \(child.stderr.suffix(2000))")
        #expect(await eventually(seconds: 60) { load.pedometers.allSatisfy { probe.steps($0.name) >= 1 } },
                "per pedometer: \(load.pedometers.map { probe.steps($0.name) }); \(child.stderr.suffix(2000))")
        child.signal(SIGTERM)
        #expect(await offThread { child.wait(seconds: 30) } == 0, "\(child.stderr.suffix(2000))")
    }
}

/// `Tests/Support/one-cpu-pool.c` built into a shared object: `sysconf(_SC_NPROCESSORS_ONLN)`
/// answers 1, which is what sizes the cooperative pool. Built once per test run with the system
/// C compiler (scripts/setup.sh installs gcc).
enum OneCPUShim {
    private static let built: Result<String, any Error> = Result {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Support/one-cpu-pool.c").path
        let out = NSTemporaryDirectory() + "hg-one-cpu-pool-\(getpid()).so"
        let cc = Process()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        cc.arguments = ["cc", "-shared", "-fPIC", "-O2", "-o", out, source, "-ldl"]
        try cc.run()
        cc.waitUntilExit()
        guard cc.terminationStatus == 0 else { throw NotBuilt(status: cc.terminationStatus, source: source) }
        return out
    }

    /// The shim's path (built on first use).
    static func path() throws -> String { try built.get() }

    /// What `getconf _NPROCESSORS_ONLN` (sysconf underneath) prints with `shim` preloaded.
    static func onlineCPUs(preloading shim: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["getconf", "_NPROCESSORS_ONLN"]
        p.environment = ["LD_PRELOAD": shim, "PATH": "/usr/bin:/bin"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    struct NotBuilt: Error, CustomStringConvertible {
        let status: Int32
        let source: String
        var description: String { "cc could not build \(source) (exit \(status)); is gcc installed? (scripts/setup.sh)" }
    }
}
