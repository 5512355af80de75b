import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Talks to systemd through `$NOTIFY_SOCKET` (sd_notify(3)'s datagram protocol, written by hand
/// so the daemon needs no libsystemd): `READY=1`, `WATCHDOG=1`, `STATUS=…`, `STOPPING=1`.
///
/// When the variable is unset (not started by systemd, or `Type=simple`), every call does
/// nothing. Thread-safe: each message is one `sendto` on a socket only this object owns.
package final class SystemdNotifier: Sendable {
    private let fd: Int32
    private let address: [UInt8]   // a packed sockaddr_un
    /// The watchdog interval systemd asked for (`$WATCHDOG_USEC`), if any; ping at half of it.
    package let watchdogInterval: Duration?

    /// Reads `$NOTIFY_SOCKET` and `$WATCHDOG_USEC` from `environment`.
    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        if let usec = environment["WATCHDOG_USEC"].flatMap(Int64.init), usec > 0,
           environment["WATCHDOG_PID"].flatMap(Int32.init).map({ $0 == getpid() }) ?? true {
            watchdogInterval = .microseconds(usec)
        } else {
            watchdogInterval = nil
        }
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else {
            fd = -1; address = []; return
        }
        // "@name" is an abstract socket: a leading NUL byte instead of '@'.
        var pathBytes = Array(path.utf8)
        if path.hasPrefix("@") { pathBytes[0] = 0 }
        var sun = sockaddr_un()
        let maxPath = MemoryLayout.size(ofValue: sun.sun_path)
        guard pathBytes.count < maxPath else { fd = -1; address = []; return }
        sun.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &sun.sun_path) { raw in
            for (i, b) in pathBytes.enumerated() { raw[i] = b }
        }
        let len = MemoryLayout<sa_family_t>.size + pathBytes.count + (pathBytes.first == 0 ? 0 : 1)
        address = withUnsafeBytes(of: &sun) { Array($0.prefix(len)) }
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Whether a notify socket was given.
    package var isActive: Bool { fd >= 0 }

    /// Sends one message (`KEY=VALUE` lines). Returns false if it could not be sent.
    @discardableResult
    package func notify(_ message: String) -> Bool {
        guard fd >= 0 else { return false }
        let bytes = Array(message.utf8)
        let sent = address.withUnsafeBytes { addr in
            bytes.withUnsafeBytes { buf in
                sendto(fd, buf.baseAddress, buf.count, Int32(MSG_NOSIGNAL),
                       addr.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(addr.count))
            }
        }
        return sent == bytes.count
    }

    /// Tells systemd the daemon is ready (Type=notify), with a status line.
    package func ready(status: String) { notify("READY=1\nSTATUS=\(status)\nMAINPID=\(getpid())") }
    /// Pets the watchdog.
    package func watchdog() { notify("WATCHDOG=1") }
    /// Updates the status line `systemctl status` shows.
    package func status(_ text: String) { notify("STATUS=\(text)") }
    /// Tells systemd the daemon is shutting down.
    package func stopping(status: String) { notify("STOPPING=1\nSTATUS=\(status)") }
}
