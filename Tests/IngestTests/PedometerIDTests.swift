import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Logging
import SerialPedometer
import Simulators
import Testing
import Udev
@testable import Gateway
@testable import Ingest
@testable import HealthGateConfiguration
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// One pedometer id rule for every command (USB serial number, else the physical USB port):
/// an adapter without a serial number keeps one count across `serial watch`, `run` and a
/// re-plug that gives it another ttyUSB number, and state kept under the ids earlier versions
/// used is carried over once.
@Suite(.serialized) struct PedometerIDTests {
    /// Where the CH340s of these tests sit: port 2 of the hub on root port 1.
    static let portID = "pci-0000:00:14.0-usb-0:1.2:1.0-port0"

    func watcher(_ rig: DaemonRig, _ tree: SysfsTree) -> PedometerWatcher {
        // A CH340 rule, as a user without serial numbers writes it.
        let rule = GatewayConfig.Pedometer(path: nil, vendor: "1a86", product: "7523", serial: nil, baud: 115_200, name: nil)
        return PedometerWatcher(rules: [rule], runner: rig.runner, logger: Logger(label: "test"), store: rig.store,
                                sysfs: Sysfs(root: tree.root), devDir: tree.dev)
    }

    /// Whether process `pid` holds `path` open.
    func holds(_ pid: Int32, _ path: String) -> Bool {
        let dir = "/proc/\(pid)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).contains {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(dir)/\($0)")) == path
        }
    }

    /// The issue's scenario end to end, each command a child process of the built binary: `serial
    /// watch` reads a CH340 (no serial number), then `healthgate run` (matching it by its USB ids
    /// in a sysfs tree of the test's, `$HEALTHGATE_SYSFS_ROOT`, whose device nodes are links to
    /// ptys, `$HEALTHGATE_DEV_DIR`) continues the count, and goes on counting after the adapter
    /// is re-plugged into the same port and the kernel names it ttyUSB1.
    @Test func anAdapterWithoutASerialNumberKeepsOneCountAcrossSerialWatchRunAndAReplug() async throws {
        let tree = try SysfsTree()
        defer { tree.remove() }
        let db = temporaryStorePath()
        let environment = [Sysfs.rootVariable: tree.root, Sysfs.deviceDirectoryVariable: tree.dev]
        let first = try SimulatedPedometer()
        let ttyUSB0 = try tree.plug(name: "ttyUSB0", port: "1.2", node: first.path)   // a CH340: no serial number

        // 1. `serial watch /dev/ttyUSB0` reads it, then is stopped.
        let watch = try Child(["serial", "watch", ttyUSB0, "--db", db, "--json"], environment: environment)
        #expect(await eventually { holds(watch.process.processIdentifier, first.path) })
        for (seq, steps) in [(1, 100), (2, 110), (3, 125)] { first.writeLine(pedometerLine(steps, seq: seq)) }
        #expect(await eventually { watch.stdout.contains(#""line":"{\"steps\":125,\"seq\":3}""#) })
        watch.signal(SIGTERM)
        #expect(await offThread { watch.wait() } == 0, "\(watch.stderr)")
        #expect(watch.stdout.contains(#""device":"\#(Self.portID)""#), "serial watch used the port id: \(watch.stdout)")

        // 2. `run` picks it up by its USB ids (a CH340 rule, as a user without serial numbers
        // writes it); the device counted on meanwhile.
        first.writeLine(pedometerLine(140, seq: 4))
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("hg-\(UUID().uuidString).toml").path
        try """
            [ingest]
            flush_interval_ms = 50
            [[pedometer]]
            vendor = "1a86"
            product = "7523"
            baud = 115200
            """.write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let run = try Child(["run", "--config", config, "--db", db], environment: environment)
        let pid = run.process.processIdentifier
        let reader = try HealthStore(path: db, mode: .readOnly)
        func steps() -> [QuantitySample] {
            ((try? reader.samples(SampleQuery(type: .stepCount))) ?? []).sorted { $0.startDate < $1.startDate }
        }
        func total() -> Double { steps().reduce(0) { $0 + $1.quantity.value } }
        #expect(await eventually(seconds: 60) { holds(pid, first.path) }, "\(run.stderr)")
        #expect(run.stderr.contains("pedometer \(ttyUSB0) appeared"), "\(run.stderr)")
        first.writeLine(pedometerLine(150, seq: 5))
        #expect(await eventually(seconds: 60) { total() == 50 }, "\(run.stderr)")

        // 3. Unplugged, and plugged back into the same socket: the kernel calls it ttyUSB1 now.
        first.unplug()
        tree.unplug(name: "ttyUSB0")
        #expect(await eventually(seconds: 60) { !holds(pid, first.path) }, "\(run.stderr)")
        let second = try SimulatedPedometer()
        let ttyUSB1 = try tree.plug(name: "ttyUSB1", port: "1.2", node: second.path)
        second.writeLine(pedometerLine(150, seq: 5))    // a resend: a duplicate
        second.writeLine(pedometerLine(170, seq: 6))
        #expect(await eventually(seconds: 60) { holds(pid, second.path) }, "\(run.stderr)")   // the watcher's next scan
        #expect(run.stderr.contains("pedometer \(ttyUSB1) appeared"), "\(run.stderr)")
        #expect(await eventually(seconds: 60) { total() == 70 }, "\(run.stderr)")
        run.signal(SIGTERM)
        #expect(await offThread { run.wait() } == 0, "\(run.stderr)")
        #expect(run.stderr.contains("opening it as \(Self.portID) (usb-port)"), "\(run.stderr)")

        // Every step from the first reading (100) to the last (170), once, under one id.
        let store = try HealthStore(path: db, mode: .readOnly)
        let samples = ((try? store.samples(SampleQuery(type: .stepCount))) ?? []).sorted { $0.startDate < $1.startDate }
        #expect(samples.map(\.quantity.value) == [10, 15, 15, 10, 20])
        let ids = samples.compactMap(\.metadata.syncIdentifier)
        #expect(ids.count == 5 && Set(ids).count == 5)
        #expect(ids.allSatisfy { $0.hasPrefix("serial:\(Self.portID):1:") }, "one id, one segment (no new baseline): \(ids)")
        #expect(try store.stateEntries(prefix: "serial.counter.").map(\.key) == ["serial.counter.\(Self.portID)"])
        let state = try #require(try store.state(PedometerSource.stateKey(deviceID: Self.portID)))
        #expect(try JSONDecoder().decode(CounterState.self, from: state).baseline?.count == 170)
    }

    /// A counter state earlier versions kept under `serial watch`'s id (`ttyUSB0`) or `run`'s
    /// (`/dev/ttyUSB0`): the newer one moves to the port id when the adapter is opened, and both
    /// old keys go, so the count continues without a new baseline.
    @Test func stateUnderTheOldIDsIsCarriedOverOnce() async throws {
        let tree = try SysfsTree()
        defer { tree.remove() }
        let ped = try SimulatedPedometer()
        let node = try tree.plug(name: "ttyUSB0", port: "1.2", node: ped.path)
        let rig = try DaemonRig(path: temporaryStorePath())
        func state(_ steps: UInt64, seq: UInt64, at t: Double) throws -> Data {
            var counter = StepCounter(configuration: try CounterConfiguration(deviceID: "old"))
            _ = counter.process(PedometerReading(steps: steps, seq: seq), receivedAt: Date(timeIntervalSince1970: t))
            return try JSONEncoder().encode(counter.state)
        }
        try rig.store.setState("serial.counter./dev/ttyUSB0", try state(300, seq: 1, at: 1_790_000_000))   // run, older
        try rig.store.setState("serial.counter.ttyUSB0", try state(500, seq: 7, at: 1_790_000_100))        // serial watch, newer
        try rig.store.setState("serial.counter.OTHER", try state(1, seq: 1, at: 1_790_000_200))           // another device

        let watcher = watcher(rig, tree)
        #expect(watcher.scanOnce() == [node])
        ped.writeLine(pedometerLine(512, seq: 8))
        #expect(await eventually { rig.steps().count == 1 })
        _ = await offThread { rig.stop() }
        #expect(rig.steps().map(\.quantity.value) == [12], "continued from the newer old state (500), no new baseline")
        #expect(try rig.store.stateEntries(prefix: "serial.counter.").map(\.key).sorted()
                == ["serial.counter.OTHER", "serial.counter.\(Self.portID)"])
    }

    @Test func nothingMovesWhenTheNewIDHasStateOrTheIDIsGiven() throws {
        let store = try HealthStore(path: temporaryStorePath())
        let old = PedometerIdentity(id: "new", basis: .usbPort, legacyIDs: ["ttyUSB0"])
        try store.setState("serial.counter.ttyUSB0", Data("{}".utf8))
        try store.setState("serial.counter.new", Data("{\"segment\":3}".utf8))
        #expect(try PedometerStateMigration.carryOver(in: store, identity: old) == nil)
        #expect(try store.stateString("serial.counter.new") == "{\"segment\":3}")
        #expect(try store.stateString("serial.counter.ttyUSB0") == "{}")
        let given = PedometerIdentity(id: "desk", basis: .given, legacyIDs: ["ttyUSB0"])
        #expect(try PedometerStateMigration.carryOver(in: store, identity: given) == nil)
        #expect(try store.state("serial.counter.desk") == nil)
        // Without a state at the new id, it moves, once.
        try store.setState("serial.counter.new", nil)
        #expect(try PedometerStateMigration.carryOver(in: store, identity: old) == "ttyUSB0")
        #expect(try store.stateString("serial.counter.new") == "{}")
        #expect(try store.state("serial.counter.ttyUSB0") == nil)
        #expect(try PedometerStateMigration.carryOver(in: store, identity: old) == nil)
    }
}
