import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Logging
import Simulators
import Testing
@testable import Gateway
@testable import Ingest
import Udev
import Locking
import SerialPedometer
import Systemd
@testable import HealthGateConfiguration

/// Matching pedometer rules against a sysfs-shaped tree (tty → device link → USB ids).
@Suite struct PedometerWatcherTests {
    /// Builds `root/sys/class/tty/<tty>/device -> ../../devices/usbX/1-1/1-1:1.0/<tty>` with the
    /// USB ids two levels up, as the kernel lays out a USB-serial adapter.
    func fakeSysfs(_ ttys: [(String, String, String, String?)]) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hg-sysfs-\(UUID().uuidString)").path
        let fm = FileManager.default
        for (i, (tty, vendor, product, serial)) in ttys.enumerated() {
            let usb = "\(root)/devices/usb\(i)/1-\(i)"
            let iface = "\(usb)/1-\(i):1.0/\(tty)"
            try fm.createDirectory(atPath: iface, withIntermediateDirectories: true)
            try vendor.write(toFile: "\(usb)/idVendor", atomically: true, encoding: .utf8)
            try product.write(toFile: "\(usb)/idProduct", atomically: true, encoding: .utf8)
            if let serial { try serial.write(toFile: "\(usb)/serial", atomically: true, encoding: .utf8) }
            try fm.createDirectory(atPath: "\(root)/class/tty/\(tty)", withIntermediateDirectories: true)
            try fm.createSymbolicLink(atPath: "\(root)/class/tty/\(tty)/device", withDestinationPath: "../../../devices/usb\(i)/1-\(i)/1-\(i):1.0/\(tty)")
        }
        // A tty with no USB parent (a built-in UART) must never match.
        try fm.createDirectory(atPath: "\(root)/class/tty/ttyS0", withIntermediateDirectories: true)
        return root
    }

    func watcher(_ rules: [GatewayConfig.Pedometer], root: String) throws -> PedometerWatcher {
        let p = try IngestPipeline(sink: RecordingSink())
        return PedometerWatcher(rules: rules, runner: SourceRunner(pipeline: p, logger: Logger(label: "t")),
                                logger: Logger(label: "t"), sysfs: Sysfs(root: root), devDir: "/dev")
    }

    @Test func matchesByVendorProductAndSerial() throws {
        let root = try fakeSysfs([("ttyUSB0", "1a86", "7523", nil), ("ttyUSB1", "10c4", "ea60", "A1"), ("ttyACM0", "10c4", "ea60", "B2")])
        let rule = GatewayConfig.Pedometer(path: nil, vendor: "10c4", product: "ea60", serial: "B2", baud: 9600, name: nil)
        let m = try watcher([rule], root: root).matches()
        #expect(m.map(\.0) == ["/dev/ttyACM0"])
        let any = GatewayConfig.Pedometer(path: nil, vendor: "10c4", product: nil, serial: nil, baud: 9600, name: nil)
        #expect(try watcher([any], root: root).matches().map(\.0) == ["/dev/ttyACM0", "/dev/ttyUSB1"])
        let none = GatewayConfig.Pedometer(path: nil, vendor: "dead", product: nil, serial: nil, baud: 9600, name: nil)
        #expect(try watcher([none], root: root).matches().isEmpty)
    }

    @Test func aPathRuleMatchesOnlyWhenTheDeviceExists() throws {
        let root = try fakeSysfs([])
        let present = GatewayConfig.Pedometer(path: root + "/class/tty/ttyS0", vendor: nil, product: nil, serial: nil, baud: 9600, name: nil)
        let absent = GatewayConfig.Pedometer(path: "/dev/does-not-exist", vendor: nil, product: nil, serial: nil, baud: 9600, name: nil)
        #expect(try watcher([present, absent], root: root).matches().map(\.0) == [root + "/class/tty/ttyS0"])
    }

    /// The running watcher (the one `run` and `serial watch --auto` use) listens to libudev's
    /// monitor where the system allows it and rescans, so a device that appears later is opened
    /// without anyone calling `scanOnce`, and it stops with the runner.
    @Test func aStartedWatcherOpensADeviceThatAppearsLater() async throws {
        let tree = try SysfsTree()
        defer { tree.remove() }
        let rig = try DaemonRig(path: temporaryStorePath())
        let rule = GatewayConfig.Pedometer(vendor: "1a86", product: "7523")
        let watcher = PedometerWatcher(rules: [rule], runner: rig.runner, logger: Logger(label: "t"), store: rig.store,
                                       sysfs: Sysfs(root: tree.root), devDir: tree.dev)
        let events = watcher.start(interval: .milliseconds(100))
        #expect(events == (try Udev().daemonIsRunning ? .udev : .kernel))
        let ped = try SimulatedPedometer()
        try tree.plug(name: "ttyUSB3", port: "4", node: ped.path)
        #expect(await eventually { watcher.openCount == 1 })
        ped.writeLine(pedometerLine(10, seq: 1))
        ped.writeLine(pedometerLine(13, seq: 2))
        #expect(await eventually { rig.total() == 3 })
        // Registered once open, under the port id, with the USB ids as model.
        let registered = try rig.store.devices(kind: .serial)
        #expect(registered.map(\.device.localIdentifier) == ["serial:pci-0000:00:14.0-usb-0:4:1.0-port0"])
        #expect(registered.first?.device.model == "1a86:7523" && registered.first?.address == "\(tree.dev)/ttyUSB3")
        _ = await offThread { rig.stop() }
        #expect(watcher.openCount == 0)
    }
    /// A port another reader holds (another HealthGate, as root too: the port's lock) is tried
    /// at every scan but said once at error, not every 2 s for days; when it opens at last,
    /// one notice says so, and the pedometer is read from then on.
    @Test func aPortHeldElsewhereIsSaidOnceAndOpenedWhenFreed() async throws {
        let lines = Lock<[String]>([])
        var logger = Logger(label: "healthgate") { label in
            JournalLogHandler(label: label) { l in lines.withLock { $0.append(l.trimmingCharacters(in: .newlines)) } }
        }
        logger.logLevel = .debug   // a failure below lists every attempt
        let ped = try SimulatedPedometer()
        let holder = try SerialPort(path: ped.path)
        let rig = try DaemonRig(path: temporaryStorePath())
        let rule = GatewayConfig.Pedometer(path: ped.path, vendor: nil, product: nil, serial: nil, baud: 115_200, name: nil)
        let watcher = PedometerWatcher(rules: [rule], runner: rig.runner, logger: logger, store: rig.store)
        for _ in 0..<3 {
            #expect(watcher.scanOnce() == [ped.path])
            #expect(await eventually { watcher.openCount == 0 })   // the source ended: busy
        }
        let whileHeld = lines.withLock { $0 }
        #expect(whileHeld.filter { $0.hasPrefix("<3>") }.count == 1, "\(whileHeld)")
        #expect(whileHeld.first { $0.hasPrefix("<3>") }?.contains("in use by another program") == true, "\(whileHeld)")
        #expect(whileHeld.filter { $0.hasPrefix("<5>") && $0.contains("appeared") }.count == 1, "\(whileHeld)")
        #expect(whileHeld.filter { $0.hasPrefix("<7>") && $0.contains("in use by another program") }.count == 2, "\(whileHeld)")
        holder.close()
        // Scanned as `run` scans (every 2 s there; here as soon as the last attempt ended) until
        // the port opens: a child another test forks in the moment shares the descriptions it
        // inherits until it execs, so one attempt may still meet the lock.
        func isOpen() -> Bool { lines.withLock { $0 }.contains { $0.hasPrefix("<5>") && $0.contains("is open now") } }
        let opened = await eventually {
            if !isOpen() && watcher.openCount == 0 { _ = watcher.scanOnce() }
            return isOpen()
        }
        #expect(opened, "held by: \(processesHolding(ped.path)); \(lines.withLock { $0 })")
        ped.writeLine(pedometerLine(10, seq: 1))
        ped.writeLine(pedometerLine(14, seq: 2))
        #expect(await eventually { rig.total() == 4 }, "held by: \(processesHolding(ped.path)); \(lines.withLock { $0 })")
        let after = lines.withLock { $0 }.dropFirst(whileHeld.count)
        #expect(after.filter { $0.hasPrefix("<5>") && $0.contains("is open now") }.count == 1, "\(after)")
        #expect(after.filter { $0.hasPrefix("<3>") }.isEmpty, "\(after)")
        _ = await offThread { rig.stop() }
    }
}
