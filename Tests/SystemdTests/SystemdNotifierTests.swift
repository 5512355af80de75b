import Foundation
import Testing
@testable import Systemd
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// sd_notify by hand: messages arrive as datagrams on a real AF_UNIX socket, as systemd reads them.
@Suite struct SystemdNotifierTests {
    /// Binds a datagram socket at a fresh path (or abstract name) and returns (fd, name).
    func listen(abstract: Bool) throws -> (Int32, String) {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(fd >= 0)
        let name = abstract ? "@hg-test-\(UUID().uuidString.prefix(8))"
            : FileManager.default.temporaryDirectory.appendingPathComponent("hg-notify-\(UUID().uuidString.prefix(8))").path
        var sun = sockaddr_un()
        sun.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &sun.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let len = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let rc = withUnsafePointer(to: &sun) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        #expect(rc == 0, "bind failed: \(errno)")
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        return (fd, name)
    }

    func receive(_ fd: Int32) -> String {
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buf, buf.count, 0)
        return n > 0 ? String(decoding: buf[0..<n], as: UTF8.self) : ""
    }

    @Test(arguments: [false, true])
    func readyWatchdogStatusAndStoppingArrive(abstract: Bool) throws {
        let (fd, name) = try listen(abstract: abstract)
        defer { close(fd) }
        let n = SystemdNotifier(environment: ["NOTIFY_SOCKET": name, "WATCHDOG_USEC": "30000000"])
        #expect(n.isActive)
        #expect(n.watchdogInterval == .seconds(30))
        n.ready(status: "ingesting")
        let ready = receive(fd)
        #expect(ready.contains("READY=1"))
        #expect(ready.contains("STATUS=ingesting"))
        #expect(ready.contains("MAINPID=\(getpid())"))
        n.watchdog()
        #expect(receive(fd) == "WATCHDOG=1")
        n.stopping(status: "SIGTERM: draining")
        #expect(receive(fd) == "STOPPING=1\nSTATUS=SIGTERM: draining")
    }

    @Test func withoutNotifySocketNothingIsSent() {
        let n = SystemdNotifier(environment: [:])
        #expect(!n.isActive)
        #expect(n.watchdogInterval == nil)
        #expect(!n.notify("READY=1"))
    }

    @Test func aWatchdogMeantForAnotherProcessIsIgnored() {
        let n = SystemdNotifier(environment: ["WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "\(getpid() + 1)"])
        #expect(n.watchdogInterval == nil)
    }
}
