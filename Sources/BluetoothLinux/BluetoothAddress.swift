/// A 48-bit Bluetooth device address (BD_ADDR), as people write it: `C4:7C:8D:6A:1F:02`.
///
/// ``bytes`` are in display order (most significant first). On the wire and in the kernel's
/// `bdaddr_t` the order is reversed (little-endian); ``init(littleEndian:)`` and
/// ``littleEndianBytes`` convert.
package struct BluetoothAddress: Sendable, Hashable, Comparable, CustomStringConvertible, LosslessStringConvertible {
    /// The six bytes, most significant first (the order of the printed form).
    package let bytes: [UInt8]

    /// Creates an address from six bytes in display order; `nil` if there are not exactly six.
    package init?(bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
    }

    /// Creates an address from six bytes in wire order (least significant first), as HCI events
    /// and `bdaddr_t` carry it; `nil` if there are not exactly six.
    package init?<C: Collection>(littleEndian: C) where C.Element == UInt8 {
        guard littleEndian.count == 6 else { return nil }
        self.bytes = Array(littleEndian.reversed())
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (or with `-` separators, any letter case); `nil` otherwise.
    package init?(_ description: String) {
        let parts = description.split(separator: description.contains("-") ? "-" : ":",
                                      omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var out: [UInt8] = []
        for part in parts {
            guard part.count == 2, part.allSatisfy(\.isHexDigit), let b = UInt8(part, radix: 16) else { return nil }
            out.append(b)
        }
        self.bytes = out
    }

    /// The bytes in wire order (least significant first), for `bdaddr_t` and HCI commands.
    package var littleEndianBytes: [UInt8] { bytes.reversed() }

    /// `AA:BB:CC:DD:EE:FF`, upper case.
    package var description: String {
        bytes.map { b in
            let s = String(b, radix: 16, uppercase: true)
            return s.count == 1 ? "0" + s : s
        }.joined(separator: ":")
    }

    /// For a random address, its sub-type from the two most significant bits (Core Vol 6 B 1.3).
    package var randomKind: RandomAddressKind {
        switch bytes[0] >> 6 {
        case 0b11: return .staticAddress
        case 0b01: return .resolvablePrivate
        case 0b00: return .nonResolvablePrivate
        default: return .reserved
        }
    }

    package static func < (a: BluetoothAddress, b: BluetoothAddress) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }
}

/// The sub-types of an LE random address, told apart by its two top bits.
package enum RandomAddressKind: String, Sendable {
    /// `11`: fixed for a power cycle or for the device's life; straps often use one. Safe to remember.
    case staticAddress = "static"
    /// `01`: changes every few minutes; only the bonded identity (IRK) makes it reconnectable.
    case resolvablePrivate = "resolvable-private"
    /// `00`: changes at will; cannot be reconnected to.
    case nonResolvablePrivate = "non-resolvable-private"
    /// `10`: reserved by the specification.
    case reserved
}

/// Whether an LE address is the device's public (IEEE-assigned) address or a random one.
///
/// The kernel needs it to connect (`l2_bdaddr_type`): the same six bytes name different devices
/// under the two types.
package enum AddressType: String, Sendable, Hashable, Codable, CaseIterable {
    case `public`
    case random

    /// Maps an HCI advertising-report address type: 0x00/0x02 public (0x02 = resolved public
    /// identity), 0x01/0x03 random (0x03 = resolved static identity); anything else is `nil`
    /// (0xFF: anonymous extended advertising, which cannot be connected to by address).
    package init?(hci value: UInt8) {
        switch value {
        case 0x00, 0x02: self = .public
        case 0x01, 0x03: self = .random
        default: return nil
        }
    }

    /// The kernel's `BDADDR_LE_PUBLIC` (1) / `BDADDR_LE_RANDOM` (2) value for `sockaddr_l2`.
    package var kernelValue: UInt8 { self == .public ? 1 : 2 }
}
