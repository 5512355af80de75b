#if canImport(Glibc)
import Glibc
#endif

/// A Bluetooth failure a user can meet, as one sentence (what, why, what to do) and a sysexits code.
///
/// Kernel errors (`errno`) and controller status codes are mapped by ``init(errno:during:)`` and
/// ``controller(status:command:adapter:)``; the mapping depends on what was being done, because
/// the same errno means different things (`EACCES` opening a raw socket is a missing capability,
/// `ETIMEDOUT` while connected is a lost link, during a connect it is a strap that never answered).
package struct BluetoothError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of failure; the exit code follows from it.
    package enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The kernel has no Bluetooth (AF_BLUETOOTH sockets are not supported).
        case notInKernel
        /// No such adapter (or none at all).
        case noAdapter
        /// The adapter exists but is powered off or blocked by rfkill.
        case adapterDown
        /// Missing CAP_NET_RAW / CAP_NET_ADMIN.
        case permissionDenied
        /// The device did not answer or could not be reached.
        case deviceNotFound
        /// A connection attempt ran out of time.
        case connectTimeout
        /// The device refused the connection.
        case connectionRefused
        /// Pairing (raising the security level) failed or was rejected.
        case pairingFailed
        /// The adapter is busy (another connection attempt in progress, or already connected).
        case busy
        /// An established link dropped.
        case linkLost
        /// The device lacks a feature the command needs (e.g. no Heart Rate Control Point).
        case notSupported
        /// The controller rejected an HCI command.
        case controllerRejected
        /// Anything else the kernel reported.
        case system
    }

    /// What HealthGate was doing when the error happened; it selects the meaning of an errno.
    package enum Operation: Sendable, Equatable, CustomStringConvertible {
        /// Opening a socket or an adapter (`hci0`, or any when nil).
        case open(adapter: String?)
        /// Sending an HCI command to the adapter.
        case hciCommand(String, adapter: String)
        /// Connecting to a device.
        case connect(BluetoothAddress, timeoutSeconds: Double)
        /// Raising a link's security level.
        case secure(BluetoothAddress)
        /// Reading or writing on an established link.
        case io(BluetoothAddress)

        package var description: String {
            switch self {
            case .open(let a): return a.map { "opening \($0)" } ?? "opening a Bluetooth socket"
            case .hciCommand(let c, let a): return "\(c) on \(a)"
            case .connect(let d, _): return "connecting to \(d)"
            case .secure(let d): return "pairing with \(d)"
            case .io(let d): return "talking to \(d)"
            }
        }

        /// "while sending LE Set Scan Enable to hci0", for sentences that start with the failure.
        var gerund: String {
            if case .hciCommand(let c, let a) = self { return "while sending \(c) to \(a)" }
            return "while \(description)"
        }

        var adapter: String {
            switch self {
            case .open(let a): return a ?? "the Bluetooth adapter"
            case .hciCommand(_, let a): return a
            default: return "the Bluetooth adapter"
            }
        }
    }

    /// The class of failure.
    package let kind: Kind
    /// One sentence: what failed, why, and what to do.
    package let message: String
    /// The errno behind it, when the kernel reported one.
    package let errno: Int32?

    /// Creates an error with an explicit kind and message.
    package init(_ kind: Kind, _ message: String, errno: Int32? = nil) {
        self.kind = kind
        self.message = message
        self.errno = errno
    }

    package var description: String { message }

    /// The sysexits(3) code the command exits with.
    package var exitCode: Int32 { Self.exitCode(for: kind) }

    /// sysexits codes per kind: 77 for permissions, 75 (try again) for timeouts and a busy
    /// adapter, 74 for a link lost mid-transfer, 69 (unavailable) for everything that means
    /// "no usable Bluetooth or no such device" — the code a machine without Bluetooth gives.
    package static func exitCode(for kind: Kind) -> Int32 {
        switch kind {
        case .permissionDenied: return 77
        case .connectTimeout, .busy: return 75
        case .linkLost, .system: return 74
        case .notInKernel, .noAdapter, .adapterDown, .deviceNotFound, .connectionRefused,
             .pairingFailed, .notSupported, .controllerRejected: return 69
        }
    }

    /// Maps an errno from the kernel, given what was being done.
    package init(errno code: Int32, during op: Operation) {
        let why = Self.errnoText(code)
        switch code {
        case EAFNOSUPPORT, EPROTONOSUPPORT, ESOCKTNOSUPPORT:
            self.init(.notInKernel,
                      "This kernel has no Bluetooth support (\(why)): load it with `modprobe bluetooth`, or run HealthGate on a machine with a Bluetooth adapter.",
                      errno: code)
        case ENODEV:
            self.init(.noAdapter, Self.noAdapterMessage(op.adapter == "the Bluetooth adapter" ? nil : op.adapter), errno: code)
        case ENETDOWN, ERFKILL:
            self.init(.adapterDown, Self.adapterDownMessage(op.adapter, rfkill: code == ERFKILL), errno: code)
        case EPERM, EACCES:
            switch op {
            case .connect(let d, _), .secure(let d):
                self.init(.pairingFailed,
                          "Pairing with \(d) failed (\(why)): wake the strap (wear it), make sure a Bluetooth agent is running (bluetoothd) to confirm Just Works pairing, remove any old bond with `bluetoothctl remove \(d)`, and try again.",
                          errno: code)
            default:
                self.init(.permissionDenied,
                          "Permission denied (\(why)) \(op.gerund): HealthGate needs the CAP_NET_RAW and CAP_NET_ADMIN capabilities; run it as root, or grant them once with `sudo setcap cap_net_raw,cap_net_admin+eip $(command -v healthgate)`.",
                          errno: code)
            }
        case ETIMEDOUT:
            switch op {
            case .connect(let d, let t):
                self.init(.connectTimeout,
                          "\(d) did not answer within \(Self.seconds(t)): wear the strap (most sleep without skin contact), bring it closer, and make sure no phone or watch is connected to it, then try again.",
                          errno: code)
            case .io(let d), .secure(let d):
                self.init(.linkLost, "The link to \(d) timed out (out of range or battery flat): bring it closer and try again.", errno: code)
            default:
                self.init(.controllerRejected, "The adapter did not answer in time \(op.gerund): check it with `btmgmt info`, or unplug and re-plug it.", errno: code)
            }
        case EHOSTDOWN, EHOSTUNREACH:
            if case .connect(let d, _) = op {
                self.init(.deviceNotFound,
                          "\(d) could not be reached (\(why)): check the address and its type (`healthgate scan` shows both), and wear the strap so it advertises.",
                          errno: code)
            } else {
                self.init(.noAdapter, Self.noAdapterMessage(nil), errno: code)
            }
        case ECONNREFUSED:
            self.init(.connectionRefused,
                      "The device refused the connection (\(why)) \(op.gerund): it may be bonded to another device or allow only one connection; disconnect it elsewhere and try again.",
                      errno: code)
        case EBUSY, EALREADY, EISCONN:
            self.init(.busy,
                      "The Bluetooth adapter is busy (\(why)) \(op.gerund): another program may be connecting or scanning; wait a moment and try again.",
                      errno: code)
        case ECONNRESET, ECONNABORTED, ENOTCONN, EPIPE, EBADFD:
            if case .io(let d) = op {
                self.init(.linkLost, "The link to \(d) was lost (\(why)): bring the strap closer and try again.", errno: code)
            } else {
                self.init(.connectionRefused, "The connection failed (\(why)) \(op.gerund): try again; if it persists, restart the strap.", errno: code)
            }
        default:
            self.init(.system, "Bluetooth failed \(op.gerund): \(why) (errno \(code)); try again, and check `btmgmt info` if it persists.", errno: code)
        }
    }

    /// An HCI command the controller answered with a non-zero status.
    package static func controller(status: UInt8, command: String, adapter: String) -> BluetoothError {
        BluetoothError(.controllerRejected,
                       "Adapter \(adapter) rejected \(command): \(hciStatusName(status)) (0x\(hex(status))); stop other programs using it (bluetoothctl scan off) or reset it with `btmgmt --index \(adapter.replacingPrefix("hci")) power off` and on.")
    }

    /// No adapter at all, or not the one named.
    package static func noAdapterMessage(_ adapter: String?) -> String {
        if let adapter {
            return "No Bluetooth adapter named \(adapter): list adapters with `btmgmt info` (or `ls /sys/class/bluetooth`) and pass one with --adapter, or plug one in."
        }
        return "No Bluetooth adapter found: plug one in (check `ls /sys/class/bluetooth`), or load its driver."
    }

    /// The adapter is down.
    package static func adapterDownMessage(_ adapter: String, rfkill: Bool = false) -> String {
        if rfkill {
            return "Bluetooth adapter \(adapter) is blocked by rfkill: unblock it with `rfkill unblock bluetooth`, power it on with `bluetoothctl power on`, and try again."
        }
        return "Bluetooth adapter \(adapter) is powered off: power it on with `bluetoothctl power on` (or `btmgmt --index \(adapter.replacingPrefix("hci")) power on`) and try again."
    }

    /// The text of an errno (`strerror`).
    package static func errnoText(_ code: Int32) -> String {
        guard let p = strerror(code) else { return "errno \(code)" }
        return String(cString: p)
    }

    /// Names of the HCI status codes a scan or connect meets (Core Vol 1 Part F).
    package static func hciStatusName(_ status: UInt8) -> String {
        switch status {
        case 0x01: return "Unknown HCI Command"
        case 0x02: return "Unknown Connection Identifier"
        case 0x03: return "Hardware Failure"
        case 0x07: return "Memory Capacity Exceeded"
        case 0x0C: return "Command Disallowed"
        case 0x0D: return "Connection Rejected due to Limited Resources"
        case 0x11: return "Unsupported Feature or Parameter Value"
        case 0x12: return "Invalid HCI Command Parameters"
        case 0x1F: return "Unspecified Error"
        case 0x3E: return "Connection Failed to be Established"
        default: return "status"
        }
    }

    private static func seconds(_ t: Double) -> String {
        t == t.rounded() ? "\(Int(t)) s" : "\(t) s"
    }
}

func hex(_ b: UInt8) -> String {
    let s = String(b, radix: 16, uppercase: true)
    return s.count == 1 ? "0" + s : s
}

extension String {
    func replacingPrefix(_ prefix: String) -> String {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self
    }
}
