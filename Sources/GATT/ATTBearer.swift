import Glibc
import Synchronization
import Platform

/// A transport that carries ATT PDUs: "send one PDU / receive PDUs".
///
/// The kernel's L2CAP ATT socket (module `BluetoothLinux`), the `socketpair` pair of
/// `Simulators` and the in-memory pair of `HealthGateTesting` all implement it, so
/// ``GATTClient`` and the simulated server run unchanged over any of them. Every PDU is one
/// message: a bearer never splits or joins PDUs (L2CAP and `SOCK_SEQPACKET` keep message
/// boundaries).
///
/// Thread rules: ``send(_:)`` may be called from any thread, also while another thread is
/// blocked in ``receive(into:)``; ``receive(into:)`` is called by one thread at a time (the
/// client's reader thread); ``close()`` may be called from any thread, any number of times,
/// and makes a blocked ``receive(into:)`` return `nil`.
public protocol ATTBearer: AnyObject, Sendable {
    /// Sends one complete PDU (opcode first).
    /// - Throws: ``ATTBearerError`` when the link is closed or the write fails.
    func send(_ pdu: [UInt8]) throws
    /// Blocks until the next PDU arrives, copies it into `buffer` and returns its length.
    /// Returns `nil` once the link is closed (by the peer or by ``close()``). A PDU longer
    /// than `buffer` is cut to `buffer.count` bytes (a buffer of ``attMaximumMTU`` bytes never
    /// cuts a valid PDU).
    /// - Throws: ``ATTBearerError`` when reading fails for another reason (link loss).
    func receive(into buffer: UnsafeMutableRawBufferPointer) throws -> Int?
    /// Closes the link. Idempotent; a blocked ``receive(into:)`` returns `nil`.
    func close()
    /// The link's received signal strength in dBm as the local radio measures it, or nil when
    /// this transport cannot tell (a Unix socket, an adapter that does not answer). May block
    /// briefly (it asks the controller): call it from a thread that may wait.
    func signalStrength() -> Int?
}

extension ATTBearer {
    /// Transports without a radio have no signal strength.
    public func signalStrength() -> Int? { nil }
}

/// Why a bearer could not send or receive.
public enum ATTBearerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The link was closed (locally or by the peer) before the operation.
    case closed
    /// A system call failed: which call and the `errno` text.
    case system(call: String, errno: Int32, message: String)

    /// Builds ``system(call:errno:message:)`` from the current `errno`.
    public static func fromErrno(_ call: String) -> ATTBearerError {
        let e = errno
        return .system(call: call, errno: e, message: String(cString: strerror(e)))
    }

    public var description: String {
        switch self {
        case .closed: "the ATT link is closed"
        case .system(let call, let e, let message): "\(call) failed: \(message) (errno \(e))"
        }
    }
}

/// An ``ATTBearer`` over a connected message socket: the kernel's L2CAP socket on the ATT
/// channel (CID 4, `SOCK_SEQPACKET`), or one end of `socketpair(AF_UNIX, SOCK_SEQPACKET)`.
///
/// The bearer owns the descriptor: ``close()`` shuts the socket down (for L2CAP that
/// disconnects the link, so a strap that allows one connection is free again) and wakes a
/// blocked receive; the descriptor itself is closed when the bearer is deinitialised.
public final class SocketATTBearer: ATTBearer, Sendable {
    /// The socket descriptor.
    public let fileDescriptor: Int32
    private let wake: WakePipe
    private let closed = Atomic<Bool>(false)

    /// Wraps a connected `SOCK_SEQPACKET` (or other message-preserving) socket.
    /// - Throws: ``ATTBearerError`` when the internal wake-up pipe cannot be created.
    public init(fileDescriptor: Int32) throws {
        do { wake = try WakePipe.make() } catch {
            throw ATTBearerError.system(call: error.call, errno: error.errno, message: String(cString: strerror(error.errno)))
        }
        self.fileDescriptor = fileDescriptor
    }

    deinit {
        _ = Glibc.close(fileDescriptor)
    }

    public func send(_ pdu: [UInt8]) throws {
        guard !closed.load(ordering: .acquiring) else { throw ATTBearerError.closed }
        let n = SystemCall.retrying { pdu.withUnsafeBytes { Glibc.send(fileDescriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
        if n >= 0 { return }
        if errno == EPIPE || errno == ENOTCONN { throw ATTBearerError.closed }
        throw ATTBearerError.fromErrno("send")
    }

    public func receive(into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        while true {
            if closed.load(ordering: .acquiring) { return nil }
            var fds = [pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0), wake.pollEntry]
            if SystemCall.poll(&fds) < 0 { throw ATTBearerError.fromErrno("poll") }
            if fds[1].revents != 0 || closed.load(ordering: .acquiring) { return nil }
            if fds[0].revents & Int16(POLLNVAL) != 0 { return nil }
            let n = SystemCall.retrying { recv(fileDescriptor, buffer.baseAddress, buffer.count, 0) }
            if n > 0 { return n }
            if n == 0 { return nil }
            switch errno {
            case EAGAIN: continue
            case ENOTCONN, EPIPE, EBADF: return nil
            default: throw ATTBearerError.fromErrno("recv")
            }
        }
    }

    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = shutdown(fileDescriptor, Int32(SHUT_RDWR))
        wake.poke()
    }
}
