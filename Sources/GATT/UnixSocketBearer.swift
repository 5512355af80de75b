import Glibc
import Platform

/// ATT over a Unix-domain socket: the same shape as the kernel's L2CAP ATT channel
/// (`SOCK_SEQPACKET`, one ATT PDU per message), but reached through a path in the file system.
///
/// A strap configured with `socket = "/run/…/strap.sock"` instead of a Bluetooth address is
/// reached this way: a BLE proxy or a remote radio that forwards one strap's ATT channel, or the
/// simulated straps of `healthgate simulate`. The peer behind the socket is the GATT server; the
/// connecting side is the GATT client, exactly as over L2CAP.
extension SocketATTBearer {
    /// The longest socket path the kernel accepts (`sizeof(sun_path)` − 1).
    public static let maximumUnixSocketPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Connects to the ATT server listening on the `SOCK_SEQPACKET` Unix-domain socket at `path`.
    ///
    /// The connect never blocks: a listener whose backlog is full fails with `EAGAIN` like any
    /// other refusal, and the caller's reconnect policy (backoff) decides when to try again.
    /// - Throws: ``ATTBearerError/system(call:errno:message:)`` with `call` naming the path and
    ///   a message saying what is wrong and what to check (no socket there, nobody listening,
    ///   not a `SOCK_SEQPACKET` socket, no permission, path too long).
    public static func connect(unixSocket path: String) throws -> SocketATTBearer {
        let call = "connect to \(path)"
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumUnixSocketPathLength else {
            throw ATTBearerError.system(call: call, errno: ENAMETOOLONG,
                                        message: "a Unix socket path must be 1…\(maximumUnixSocketPathLength) bytes; use a shorter directory")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw ATTBearerError.fromErrno("socket(AF_UNIX, SOCK_SEQPACKET)") }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        let r = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
        }
        if r != 0 {
            let e = errno
            _ = Glibc.close(fd)
            throw ATTBearerError.system(call: call, errno: e, message: unixConnectMessage(e))
        }
        // Blocking from here on: the bearer's receive polls, its send may wait for buffer space.
        SystemCall.setNonBlocking(fd, false)
        do { return try SocketATTBearer(fileDescriptor: fd) } catch {
            _ = Glibc.close(fd)
            throw error
        }
    }

    /// What a failed `connect(2)` to an ATT socket means, and what to check.
    static func unixConnectMessage(_ e: Int32) -> String {
        switch e {
        case ENOENT:
            return "no socket there (is the program that serves it, e.g. `healthgate simulate`, running?)"
        case ECONNREFUSED:
            return "nobody is listening (a socket file left behind by a program that ended?)"
        case EPROTOTYPE:
            return "the socket is not SOCK_SEQPACKET (an ATT socket carries one PDU per message)"
        case EACCES, EPERM:
            return "permission denied (this user needs write access to the socket and search access to its directory)"
        case EAGAIN:
            return "the listener's backlog is full; retrying later"
        case ENOTSOCK:
            return "the path is not a socket"
        default:
            return String(cString: strerror(e))
        }
    }
}
