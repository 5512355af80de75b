import Foundation
import Testing
@testable import Udev

/// Enumerating this machine's real tty devices through libudev.
@Suite struct EnumerationTests {
    @Test func enumerationMatchesSysClassTTY() throws {
        let devices = try Udev().ttyDevices()
        let sysfs = try FileManager.default.contentsOfDirectory(atPath: "/sys/class/tty")
        #expect(!devices.isEmpty)
        #expect(Set(devices.map(\.sysname)) == Set(sysfs))
        for d in devices {
            #expect(d.syspath.hasPrefix("/sys/"))
            #expect(d.properties["SUBSYSTEM"] == "tty")
            if let node = d.devnode { #expect(node == d.properties["DEVNAME"]) }
        }
    }

    @Test func virtualConsolesHaveNoHardware() throws {
        let devices = try Udev().ttyDevices()
        let tty1 = try #require(devices.first { $0.sysname == "tty1" })
        #expect(!tty1.hasHardware)
        #expect(tty1.vendorID == nil)
        #expect(tty1.stableID == "/dev/tty1", "no USB parent: the pedometer id is the device node")
    }

    @Test func lookupByNodeFindsTheSameDevice() throws {
        let udev = try Udev()
        let d = try udev.device(node: "/dev/tty1")
        #expect(d.sysname == "tty1")
        #expect(throws: UdevError.noDevice("/dev/null-healthgate")) { try udev.device(node: "/dev/null-healthgate") }
        #expect(throws: UdevError.noDevice("/etc/hostname")) { try udev.device(node: "/etc/hostname") }
    }

    @Test func daemonStateAgreesWithTheControlSocket() throws {
        // libudev calls udevd active when its control socket exists (/run/udev/control).
        #expect(try Udev().daemonIsRunning == FileManager.default.fileExists(atPath: "/run/udev/control"))
    }
}
