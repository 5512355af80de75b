import Foundation
import GATT
import Synchronization
import Platform
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The serving side of an ATT channel on a Unix-domain socket: listens on a `SOCK_SEQPACKET`
/// socket at ``path`` and hands every accepted connection, as a ``SocketATTBearer``, to a
/// handler (a ``SimulatedPeripheral`` serves it). The connecting side is
/// ``SocketATTBearer/connect(unixSocket:)``, which `healthgate run` uses for a strap configured
/// with `socket = …`.
///
/// ``close()`` stops accepting and removes the socket file, so the path "goes away" like a
/// strap walking off; a new listener on the same path brings it back.
package final class UnixSocketATTListener: Sendable {
    /// The socket's path.
    package let path: String
    private let fd: Int32
    private let wake: WakePipe
    private let closed = Atomic<Bool>(false)
    private let acceptorDone = DispatchSemaphore(value: 0)

    /// Listens at `path` (a stale socket file there is replaced) and accepts on a thread of its
    /// own, calling `onConnection` for each client.
    /// - Throws: ``ATTBearerError`` when the socket cannot be made, bound or listened on.
    package init(path: String, onConnection: @escaping @Sendable (SocketATTBearer) -> Void) throws {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= SocketATTBearer.maximumUnixSocketPathLength else {
            throw ATTBearerError.system(call: "bind \(path)", errno: ENAMETOOLONG, message: "the socket path is too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ATTBearerError.fromErrno("socket(AF_UNIX, SOCK_SEQPACKET)") }
        unlink(path)
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let error = ATTBearerError.fromErrno("bind/listen \(path)")
            Glibc.close(fd)
            throw error
        }
        let wake: WakePipe
        do { wake = try WakePipe.make() } catch {
            Glibc.close(fd)
            throw ATTBearerError.system(call: error.call, errno: error.errno, message: String(cString: strerror(error.errno)))
        }
        self.path = path
        self.fd = fd
        self.wake = wake
        let thread = Thread { [self] in
            while !closed.load(ordering: .acquiring) {
                var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), wake.pollEntry]
                let n = SystemCall.poll(&fds)
                if n < 0 || fds[1].revents != 0 { break }
                let client = SystemCall.retrying { accept(fd, nil, nil) }
                if client < 0 {
                    if errno == ECONNABORTED { continue }
                    break   // shut down by close(), or the socket failed
                }
                SystemCall.setCloseOnExec(client)
                if closed.load(ordering: .acquiring) { Glibc.close(client); break }
                guard let bearer = try? SocketATTBearer(fileDescriptor: client) else { Glibc.close(client); continue }
                onConnection(bearer)
            }
            acceptorDone.signal()
        }
        thread.name = "att-listener"
        thread.start()
    }

    /// Stops accepting, waits for the accepting thread and removes the socket file. Connections
    /// already handed out stay up (close them through their handler, e.g.
    /// ``SimulatedPeripheral/disconnect()``). Idempotent.
    package func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        unlink(path)
        wake.poke()   // wakes the accepting thread's poll
        acceptorDone.wait()
        Glibc.close(fd)
    }
}

extension SimulatedPeripheral {
    /// Serves this peripheral on a Unix-domain socket at `path`: every client that connects gets
    /// a fresh connection (CCCDs reset, the previous link closed), as a strap that allows one
    /// central at a time.
    /// - Throws: ``ATTBearerError`` when the socket cannot be set up.
    package func listen(onUnixSocket path: String) throws -> UnixSocketATTListener {
        try UnixSocketATTListener(path: path) { [self] bearer in serve(bearer) }
    }
}
