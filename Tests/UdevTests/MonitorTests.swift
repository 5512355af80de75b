import Foundation
import Synchronization
import Testing
@testable import Udev
import Locking

/// A kernel-source monitor receiving a real uevent (writing `add` to a tty's uevent file).
@Suite(.serialized) struct MonitorTests {
    static var canTrigger: Bool { access("/sys/class/tty/tty5/uevent", W_OK) == 0 }

    @Test(.enabled(if: MonitorTests.canTrigger, "needs write access to /sys/class/tty/tty5/uevent"))
    func kernelMonitorReceivesARealUevent() throws {
        let seen = Lock<[UdevEvent]>([])
        let monitor = try UdevMonitor(source: .kernel) { e in seen.withLock { $0.append(e) } }
        defer { monitor.stop() }
        #expect(monitor.source == .kernel)
        try "add".write(toFile: "/sys/class/tty/tty5/uevent", atomically: false, encoding: .utf8)
        var got: UdevEvent?
        for _ in 0..<2000 where got == nil {  // a generous wait; only the outcome is checked
            got = seen.withLock { $0.first { $0.device.sysname == "tty5" } }
            if got == nil { usleep(5000) }
        }
        let event = try #require(got)
        #expect(event.action == "add")
        #expect(event.device.devnode == "/dev/tty5")
        #expect(event.device.properties["SUBSYSTEM"] == "tty")
    }

    @Test func defaultSourceFollowsTheDaemon() throws {
        let monitor = try UdevMonitor { _ in }
        defer { monitor.stop() }
        #expect(monitor.source == (try Udev().daemonIsRunning ? .udev : .kernel))
    }

    @Test func stopIsIdempotent() throws {
        let monitor = try UdevMonitor(source: .kernel) { _ in }
        monitor.stop()
        monitor.stop()
    }
}
