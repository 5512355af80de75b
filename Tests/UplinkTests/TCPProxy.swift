import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A TCP proxy on loopback that a test controls, between the uplink and the PostgreSQL server:
/// it forwards every connection to `127.0.0.1:upstream` until told to ``cut()`` them (both
/// sockets shut down, as a NAT or firewall dropping the flow does) or to ``freeze()`` them
/// (nothing forwarded any more, the sockets left open: a link that went silent).
final class TCPProxy: @unchecked Sendable {
    /// The loopback port it listens on.
    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var sockets: [Int32] = []
    private var frozen = false
    private var stopped = false

    struct Failure: Error, CustomStringConvertible { let description: String }

    init(upstream: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 16) == 0 else { throw Failure(description: "bind/listen: \(String(cString: strerror(errno)))") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        let listener = fd
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 { return }   // the listener was closed
                var server = Self.loopback(port: upstream)
                let up = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                let ok = withUnsafePointer(to: &server) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(up, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
                guard ok, register([client, up]) else { close(client); close(up); continue }
                Thread.detachNewThread { [self] in pump(from: client, to: up) }
                Thread.detachNewThread { [self] in pump(from: up, to: client) }
            }
        }
    }

    /// Shuts every forwarded connection down, both ways: each side sees its connection end.
    func cut() {
        lock.lock(); let all = sockets; lock.unlock()
        for s in all { shutdown(s, Int32(SHUT_RDWR)) }
    }

    /// Stops forwarding: bytes are read and held, nothing is sent on, no socket is closed.
    func freeze() { lock.lock(); frozen = true; lock.unlock() }

    /// Closes the listener and every connection.
    func stop() {
        lock.lock()
        let all = sockets
        let first = !stopped
        stopped = true
        lock.unlock()
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for s in all { shutdown(s, Int32(SHUT_RDWR)) }
    }

    deinit { stop() }

    private func register(_ pair: [Int32]) -> Bool {
        lock.lock(); defer { lock.unlock() }
        guard !stopped else { return false }
        sockets += pair
        return true
    }

    private var isFrozen: Bool { lock.lock(); defer { lock.unlock() }; return frozen && !stopped }

    private func pump(from a: Int32, to b: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = read(a, &buffer, buffer.count)
            if n <= 0 { shutdown(b, Int32(SHUT_WR)); return }
            while isFrozen { usleep(20_000) }
            var sent = 0
            while sent < n {
                // send(2) with MSG_NOSIGNAL: a peer already shut down must not SIGPIPE the test process.
                let w = buffer.withUnsafeBufferPointer { send(b, $0.baseAddress! + sent, n - sent, Int32(MSG_NOSIGNAL)) }
                if w <= 0 { return }
                sent += w
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        return a
    }
}
