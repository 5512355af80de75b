import Foundation
import HealthGateTesting
import Testing
@testable import Udev
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The one pedometer id rule: the given id, else the USB serial number, else the physical USB
/// port (udev's by-path name), else the device node; read from sysfs, with the ids earlier
/// versions used listed for the state migration.
@Suite struct PedometerIdentityTests {
    /// A pty: a real character device standing in for a ttyUSB node.
    final class Node {
        let master: Int32, slave: Int32
        let path: String
        init() throws {
            var m: Int32 = -1, s: Int32 = -1
            guard openpty(&m, &s, nil, nil, nil) == 0 else { throw POSIXError(.EIO) }
            master = m; slave = s
            path = String(cString: ttyname(s))
        }
        deinit { close(master); close(slave) }
    }

    @Test func aSerialNumberWinsAndIsWrittenAsUdevWritesIt() throws {
        let tree = try SysfsTree()
        defer { tree.remove() }
        let a = try Node(), b = try Node()
        let link = try tree.plug(name: "ttyUSB0", port: "1", node: a.path, vendor: "0403", product: "6001", serial: "PED0001")
        let id = PedometerIdentity.resolve(path: link, sysfs: Sysfs(root: tree.root))
        #expect(id.id == "PED0001" && id.basis == .usbSerial && id.legacyIDs.isEmpty)
        #expect(id.usb?.vendorID == "0403" && id.usb?.productID == "6001")
        // A serial number with blanks and a slash: ID_SERIAL_SHORT's form; the raw one is an old id.
        let odd = try tree.plug(name: "ttyUSB1", port: "2", node: b.path, serial: " AB 12/x ")
        let oddID = PedometerIdentity.resolve(path: odd, sysfs: Sysfs(root: tree.root))
        #expect(oddID.id == "AB_12_x" && oddID.legacyIDs == ["AB 12/x"])
    }

    @Test func withoutASerialNumberThePhysicalPortIsTheIDWhateverTheTTYNumber() throws {
        let tree = try SysfsTree()
        defer { tree.remove() }
        let a = try Node(), b = try Node(), c = try Node()
        // Two identical CH340s (no serial number) on ports 1.2 and 1.3.
        let first = try tree.plug(name: "ttyUSB0", port: "1.2", node: a.path)
        let second = try tree.plug(name: "ttyUSB1", port: "1.3", node: b.path)
        let sysfs = Sysfs(root: tree.root)
        let idA = PedometerIdentity.resolve(path: first, sysfs: sysfs)
        let idB = PedometerIdentity.resolve(path: second, sysfs: sysfs)
        #expect(idA.id == "pci-0000:00:14.0-usb-0:1.2:1.0-port0" && idA.basis == .usbPort)
        #expect(idB.id == "pci-0000:00:14.0-usb-0:1.3:1.0-port0")
        // Earlier versions' ids: serial watch's kernel name, run's device path, the path given.
        #expect(idA.legacyIDs == ["ttyUSB0", "/dev/ttyUSB0", a.path, first])
        // They come back in the other order: the ttyUSB numbers swap, the ids stay with the ports.
        tree.unplug(name: "ttyUSB0")
        tree.unplug(name: "ttyUSB1")
        let swappedB = try tree.plug(name: "ttyUSB0", port: "1.3", node: c.path)
        let swappedA = try tree.plug(name: "ttyUSB1", port: "1.2", node: a.path)
        #expect(PedometerIdentity.resolve(path: swappedA, sysfs: sysfs).id == idA.id)
        #expect(PedometerIdentity.resolve(path: swappedB, sysfs: sysfs).id == idB.id)
    }

    @Test func aCDCACMDeviceHasNoPortSuffix() throws {
        let tree = try SysfsTree()
        defer { tree.remove() }
        let a = try Node()
        let link = try tree.plug(name: "ttyACM0", port: "3", node: a.path, vendor: "2341", product: "0043", interface: "1.0")
        #expect(PedometerIdentity.resolve(path: link, sysfs: Sysfs(root: tree.root)).id == "pci-0000:00:14.0-usb-0:3:1.0")
    }

    @Test func aGivenIDWinsAndAPlainTTYIsItsNode() throws {
        let tree = try SysfsTree()
        defer { tree.remove() }
        let a = try Node(), b = try Node()
        let link = try tree.plug(name: "ttyUSB0", port: "1", node: a.path, serial: "S1")
        let given = PedometerIdentity.resolve(path: link, given: "desk", sysfs: Sysfs(root: tree.root))
        #expect(given.id == "desk" && given.basis == .given && given.legacyIDs.isEmpty)
        // A tty sysfs does not know as USB (a pty, a built-in UART): the node, links resolved.
        let plain = PedometerIdentity.resolve(path: b.path, sysfs: Sysfs(root: tree.root))
        #expect(plain.id == b.path && plain.basis == .node && plain.usb == nil)
    }

    @Test func theUSBPortPathFollowsUdevsPathIDRules() throws {
        #expect(USBPort.isInterfaceName("1-1.2:1.0") && USBPort.isInterfaceName("12-3:2.1"))
        #expect(!USBPort.isInterfaceName("1-1.2") && !USBPort.isInterfaceName("usb1") && !USBPort.isInterfaceName("1-:1.0"))
        // A Raspberry Pi 3's controller is a platform device, with no PCI on the way.
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("hg-sysfs-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        let fm = FileManager.default
        try fm.createDirectory(atPath: "\(base)/bus/platform", withIntermediateDirectories: true)
        let ctl = "\(base)/devices/platform/soc/3f980000.usb"
        let tty = "\(ctl)/usb1/1-1/1-1.4/1-1.4:1.0/ttyUSB0"
        try fm.createDirectory(atPath: "\(tty)/tty/ttyUSB0", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: "\(ctl)/subsystem", withDestinationPath: "../../../bus/platform")
        try fm.createSymbolicLink(atPath: "\(base)/devices/platform/soc/subsystem", withDestinationPath: "../../bus/platform")
        try "1a86".write(toFile: "\(ctl)/usb1/1-1/1-1.4/idVendor", atomically: true, encoding: .utf8)
        try "7523".write(toFile: "\(ctl)/usb1/1-1/1-1.4/idProduct", atomically: true, encoding: .utf8)
        try "1".write(toFile: "\(tty)/port_number", atomically: true, encoding: .utf8)
        try fm.createSymbolicLink(atPath: "\(tty)/tty/ttyUSB0/device", withDestinationPath: "../..")
        let port = try #require(USBPort(ttyClassDirectory: "\(tty)/tty/ttyUSB0", sysfs: Sysfs(root: base)))
        #expect(port.path == "platform-3f980000.usb-usb-0:1.4:1.0-port1")
        #expect(port.serial == nil)
    }

    @Test(arguments: [("PED0001", "PED0001"), ("  A B\t C ", "A_B_C"), ("x/y\\z", "x_y_z"), ("a#b+c-d.e:f=g@h_i", "a#b+c-d.e:f=g@h_i"), ("   ", "")])
    func serialNumbersAreWrittenAsUdevWritesThem(_ raw: String, _ safe: String) {
        #expect(PedometerIdentity.udevSafe(raw) == safe)
    }

    static var byPathLinks: [String] { (try? FileManager.default.contentsOfDirectory(atPath: "/dev/serial/by-path")) ?? [] }

    /// On this machine: every USB-serial tty's port path is the name udev gave its by-path link.
    @Test(.enabled(if: !PedometerIdentityTests.byPathLinks.isEmpty, "no USB-serial adapter with a udev by-path link here"))
    func realUSBSerialTTYsMatchUdevsByPathLinks() throws {
        for link in Self.byPathLinks {
            let node = URL(fileURLWithPath: "/dev/serial/by-path/\(link)").resolvingSymlinksInPath().path
            let identity = PedometerIdentity.resolve(path: node, sysfs: Sysfs())
            #expect(identity.usb?.path == link)
        }
    }
}
