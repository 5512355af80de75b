import CBlueZ
import GATT
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Platform
import Locking

/// The link security a connection asks the kernel for (`BT_SECURITY`).
package enum SecurityLevel: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// No encryption (the default for a heart-rate strap; nothing is stored on the peer).
    case low = 1
    /// Encrypted, unauthenticated: LE "Just Works" pairing; bonded when the adapter is bondable.
    case medium = 2
    /// Encrypted and authenticated (MITM-protected: passkey or numeric comparison).
    case high = 3
    /// Secure Connections only, 128-bit keys.
    case fips = 4

    package var description: String {
        switch self {
        case .low: return "low (unencrypted)"
        case .medium: return "medium (encrypted, Just Works)"
        case .high: return "high (encrypted, authenticated)"
        case .fips: return "fips (Secure Connections)"
        }
    }
}

/// An L2CAP socket on the LE ATT fixed channel (CID 4) to one device: the kernel's half of an
/// ATT bearer. It sends and receives whole ATT PDUs (SOCK_SEQPACKET keeps PDU boundaries).
///
/// Closing it (``close()``, also on deinit) shuts the socket down, which makes the kernel drop the
/// LE link once nothing else uses it — so a strap that allows one connection is free again.
/// If the process is killed the kernel closes the socket the same way.
///
/// Thread rules: one reader and one writer may use it concurrently (the kernel serialises), and
/// ``close()`` may be called from any thread (it wakes a blocked ``receive(timeout:stop:)``).
package final class L2CAPSocket: @unchecked Sendable {
    /// The device at the other end.
    package let address: BluetoothAddress
    /// Its address type.
    package let addressType: AddressType
    /// The kernel's id of the adapter the link goes through (found when it connected), to tell
    /// a link that ended because that adapter was powered off or removed.
    package let adapterID: Int32?
    private let fdState: Lock<Int32>
    private let wake = StopSignal()

    /// The ATT fixed channel.
    package static let attCID: UInt16 = 4
    /// The largest PDU read at once (the kernel's default LE MTU is well below).
    package static let maxPDU = 1024

    private init(fd: Int32, address: BluetoothAddress, addressType: AddressType, adapterID: Int32?) {
        self.fdState = Lock(fd)
        self.address = address
        self.addressType = addressType
        self.adapterID = adapterID
    }

    deinit { close() }

    /// Connects to `address` on the ATT channel.
    ///
    /// - Parameters:
    ///   - adapter: the local adapter to use (its address is bound); `nil` lets the kernel choose.
    ///   - security: the level requested before connecting; `.medium` or higher makes the kernel
    ///     pair (and, on a bondable adapter, bond) before the channel is usable.
    ///   - timeout: seconds before giving up (the kernel's own LE connect timeout is 20 s).
    ///   - stop: aborts the attempt when triggered (Ctrl-C); the error is then `.connectTimeout`.
    /// - Throws: ``BluetoothError`` with the kernel's reason mapped to a sentence.
    package static func connect(to address: BluetoothAddress, type: AddressType, adapter: Adapter? = nil,
                               security: SecurityLevel = .low, timeout: Double = 15,
                               stop: StopSignal? = nil) throws -> L2CAPSocket {
        let op = BluetoothError.Operation.connect(address, timeoutSeconds: timeout)
        let fd = socket(PF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_L2CAP)
        guard fd >= 0 else { throw BluetoothError(errno: errno, during: .open(adapter: adapter?.name)) }
        var ok = false
        defer { if !ok { Glibc.close(fd) } }

        var local = sockaddr_l2()
        local.l2_family = sa_family_t(AF_BLUETOOTH)
        local.l2_cid = attCID.littleEndian
        local.l2_bdaddr_type = UInt8(BDADDR_LE_PUBLIC)
        if let adapter { setBdaddr(&local.l2_bdaddr, adapter.address) }
        guard withSockaddr(&local, { bind(fd, $0, $1) }) == 0 else {
            throw BluetoothError(errno: errno, during: .open(adapter: adapter?.name))
        }
        if security != .low {
            var bs = bt_security(level: security.rawValue, key_size: 0)
            guard setsockopt(fd, SOL_BLUETOOTH, BT_SECURITY, &bs, socklen_t(MemoryLayout<bt_security>.size)) == 0 else {
                throw BluetoothError(errno: errno, during: .secure(address))
            }
        }

        var remote = sockaddr_l2()
        remote.l2_family = sa_family_t(AF_BLUETOOTH)
        remote.l2_cid = attCID.littleEndian
        remote.l2_bdaddr_type = type.kernelValue
        setBdaddr(&remote.l2_bdaddr, address)

        // The kernel abandons a pending connect after the socket's send timeout (40 s for
        // L2CAP); make it outlast ours, so the only cancel is ours.
        var tv = timeval(tv_sec: Int(timeout.rounded(.up)) + 5, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))

        // Non-blocking connect so the timeout and Ctrl-C are ours, not the kernel's.
        let flags = SystemCall.setNonBlocking(fd, true)
        if withSockaddr(&remote, { Glibc.connect(fd, $0, $1) }) != 0 {
            let e = errno
            guard e == EINPROGRESS || e == EAGAIN else {
                throw BluetoothError(errno: e, during: op).blamingAdapter { Adapter.presence(adapter?.id) }.blamingBluetoothd(address)
            }
            var fds = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)]
            if let stop { fds.append(pollfd(fd: stop.fd, events: Int16(POLLIN), revents: 0)) }
            let deadline = SystemCall.monotonicSeconds() + timeout
            while true {
                // Checked on every turn, not only when poll times out: a socket that keeps
                // reporting something other than writable must not keep this loop alive.
                let left = deadline - SystemCall.monotonicSeconds()
                if left <= 0 { throw BluetoothError(errno: ETIMEDOUT, during: op) }
                let n = SystemCall.poll(&fds, timeout: left)
                if n < 0 { throw BluetoothError(errno: errno, during: op) }
                if n == 0 { throw BluetoothError(errno: ETIMEDOUT, during: op) }
                if fds.count > 1, fds[1].revents != 0 {
                    throw BluetoothError(.connectTimeout, "Connecting to \(address) was interrupted.", errno: EINTR)
                }
                var soError: Int32 = 0
                var len = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len)
                if soError != 0 {
                    throw BluetoothError(errno: soError, during: op).blamingAdapter { Adapter.presence(adapter?.id) }.blamingBluetoothd(address)
                }
                if fds[0].revents & Int16(POLLOUT) != 0 { break }
                if fds[0].revents & Int16(POLLHUP | POLLERR) != 0 { throw BluetoothError(errno: ECONNRESET, during: op) }
            }
        }
        SystemCall.setFlags(fd, flags)
        ok = true
        return L2CAPSocket(fd: fd, address: address, addressType: type, adapterID: adapter?.id ?? localAdapterID(fd))
    }

    /// True until ``close()``.
    package var isOpen: Bool { fdState.withLock { $0 >= 0 } }

    /// The link's current security level and encryption key size (`BT_SECURITY`).
    package func security() throws -> (level: UInt8, keySize: UInt8) {
        let fd = fdState.withLock { $0 }
        var bs = bt_security()
        var len = socklen_t(MemoryLayout<bt_security>.size)
        guard getsockopt(fd, SOL_BLUETOOTH, BT_SECURITY, &bs, &len) == 0 else {
            throw BluetoothError(errno: errno, during: .secure(address))
        }
        return (bs.level, bs.key_size)
    }

    /// Raises the security of the live link (what bluetoothd does on "Insufficient Encryption")
    /// and waits up to `timeout` seconds for the kernel to report it reached.
    ///
    /// A link that is already that secure is left as it is: with a stored key (a bonded strap,
    /// the socket asking for security before it connected) the kernel encrypts while connecting,
    /// and asking again on an encrypted ATT channel is refused with EINVAL (`l2cap_sock_setsockopt`
    /// treats `smp_conn_security`'s "already sufficient" as an error) — which `run` used to report
    /// as a pairing failure on every reconnect (the real-stack `bluetoothd-reboot` scenario).
    package func raiseSecurity(to level: SecurityLevel, timeout: Double = 10) throws {
        let fd = fdState.withLock { $0 }
        if try security().level >= level.rawValue { return }
        var bs = bt_security(level: level.rawValue, key_size: 0)
        guard setsockopt(fd, SOL_BLUETOOTH, BT_SECURITY, &bs, socklen_t(MemoryLayout<bt_security>.size)) == 0 else {
            let e = errno
            // Encrypted between the check above and the request: the kernel's "already sufficient".
            if e == EINVAL, try security().level >= level.rawValue { return }
            throw BluetoothError(errno: e, during: .secure(address))
        }
        let deadline = SystemCall.monotonicSeconds() + timeout
        while SystemCall.monotonicSeconds() < deadline {
            if try security().level >= level.rawValue { return }
            if wake.sleep(.milliseconds(100)) { break }
        }
        throw BluetoothError(.pairingFailed, BluetoothError.pairingTimedOutMessage(address, seconds: Int(timeout),
                                                                                    bluetoothdRunning: BlueZDaemon.isRunning))
    }

    /// Sends one ATT PDU.
    /// - Throws: ``BluetoothError`` `.linkLost` when the link is gone.
    package func send(_ pdu: [UInt8]) throws {
        let fd = fdState.withLock { $0 }
        guard fd >= 0 else { throw BluetoothError(errno: ENOTCONN, during: .io(address)) }
        let n = SystemCall.retrying { pdu.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
        if n == pdu.count { return }
        throw linkError(n < 0 ? errno : EIO)
    }

    /// Waits for the next ATT PDU.
    /// - Parameters:
    ///   - timeout: seconds to wait; `nil` waits until a PDU, the link drops, `stop` or ``close()``.
    /// - Returns: the PDU, or `nil` on timeout, `stop`, or a local ``close()``.
    /// - Throws: ``BluetoothError`` `.linkLost` when the peer or the kernel ended the link.
    package func receive(timeout: Double? = nil, stop: StopSignal? = nil) throws -> [UInt8]? {
        let fd = fdState.withLock { $0 }
        guard fd >= 0 else { return nil }
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0)]
        if let stop { fds.append(pollfd(fd: stop.fd, events: Int16(POLLIN), revents: 0)) }
        let deadline = timeout.map { SystemCall.monotonicSeconds() + $0 }
        while true {
            let n = SystemCall.poll(&fds, timeout: deadline.map { $0 - SystemCall.monotonicSeconds() })
            if n < 0 { throw BluetoothError(errno: errno, during: .io(address)) }
            if n == 0 { return nil }
            if fds[1].revents != 0 || (fds.count > 2 && fds[2].revents != 0) { return nil }
            var buf = [UInt8](repeating: 0, count: Self.maxPDU)
            let r = SystemCall.retrying { read(fd, &buf, buf.count) }
            if r > 0 { return Array(buf[0..<r]) }
            if r == 0 { throw BluetoothError(.linkLost, "\(address) disconnected.", errno: ECONNRESET) }
            if errno == EAGAIN { continue }
            throw linkError(errno)
        }
    }

    /// The error for a failed read or write on the link, naming the adapter when it was powered
    /// off or removed under the link (the kernel says only "connection reset").
    private func linkError(_ code: Int32) -> BluetoothError {
        BluetoothError(errno: code, during: .io(address)).blamingAdapter { [adapterID] in adapterID.map { Adapter.presence($0) } ?? .up }
    }

    /// Shuts the link down and closes the socket. Idempotent, callable from any thread; wakes a
    /// blocked ``receive(timeout:stop:)``.
    package func close() {
        let fd = fdState.withLock { fd -> Int32 in
            let old = fd
            fd = -1
            return old
        }
        guard fd >= 0 else { return }
        wake.raise()
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }
}

/// The id of the adapter a connected socket is bound to (its local address), or nil.
private func localAdapterID(_ fd: Int32) -> Int32? {
    var local = sockaddr_l2()
    var slen = socklen_t(MemoryLayout<sockaddr_l2>.size)
    let ok = withUnsafeMutablePointer(to: &local) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &slen) == 0 }
    }
    guard ok else { return nil }
    var text = [CChar](repeating: 0, count: 18)
    _ = ba2str(&local.l2_bdaddr, &text)
    let id = hci_devid(text)
    return id >= 0 ? id : nil
}

private func setBdaddr(_ b: inout bdaddr_t, _ address: BluetoothAddress) {
    let le = address.littleEndianBytes
    withUnsafeMutableBytes(of: &b) { raw in for i in 0..<6 { raw[i] = le[i] } }
}

private func withSockaddr<R>(_ a: inout sockaddr_l2, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    withUnsafePointer(to: &a) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_l2>.size)) }
    }
}

// MARK: - The kernel's ATT bearer

extension L2CAPSocket: ATTBearer {
    /// Blocks until the next ATT PDU, copies it into `buffer` and returns its length; `nil`
    /// after ``close()`` or when the device ended the link cleanly.
    /// - Throws: ``BluetoothError`` `.linkLost` (with the kernel's reason) when the link failed.
    package func receive(into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        while true {
            let fd = fdState.withLock { $0 }
            guard fd >= 0 else { return nil }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0)]
            if SystemCall.poll(&fds) < 0 { throw BluetoothError(errno: errno, during: .io(address)) }
            if fds[1].revents != 0 { return nil }
            let r = SystemCall.retrying { read(fd, buffer.baseAddress, buffer.count) }
            if r > 0 { return r }
            if r == 0 { return nil }
            switch errno {
            case EAGAIN: continue
            case EBADF: return nil
            default: throw linkError(errno)
            }
        }
    }

    /// The link's RSSI in dBm, from the kernel: the management command Get Connection
    /// Information (`MGMT_OP_GET_CONN_INFO`, BlueZ doc/mgmt-api.txt), which bluetoothd uses too.
    /// The kernel sends HCI Read RSSI itself, in turn with its own commands, and caches the
    /// answer for a second or more. (Sending Read RSSI over a raw HCI socket instead left some
    /// LE links up after their last socket closed: the real-stack `two-straps` scenario.)
    /// Needs CAP_NET_ADMIN, which `run` has. Nil when the link is closed, the adapter is not
    /// found, the kernel refuses, or no answer comes within a second; 127 is "not available".
    package func signalStrength() -> Int? {
        var local = sockaddr_l2()
        let ok = fdState.withLock { fd -> Bool in
            guard fd >= 0 else { return false }
            var slen = socklen_t(MemoryLayout<sockaddr_l2>.size)
            return withUnsafeMutablePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &slen) == 0 }
            }
        }
        guard ok else { return nil }
        var text = [CChar](repeating: 0, count: 18)
        _ = ba2str(&local.l2_bdaddr, &text)
        let index = hci_devid(text)
        guard index >= 0 else { return nil }
        return ManagementSocket.connectionRSSI(index: UInt16(index), address: address, type: addressType.kernelValue)
    }
}
