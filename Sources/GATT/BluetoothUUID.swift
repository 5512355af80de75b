/// A Bluetooth attribute type or service/characteristic identifier: either a 16-bit SIG
/// alias (`0x180D`) or a full 128-bit UUID.
///
/// 16-bit aliases expand into the Bluetooth Base UUID `0000xxxx-0000-1000-8000-00805F9B34FB`;
/// two values compare equal when they denote the same 128-bit UUID, so `0x2A37` equals its
/// 128-bit spelling. On the wire ATT sends 16-bit UUIDs as 2 little-endian bytes and 128-bit
/// ones as 16 little-endian bytes.
public struct BluetoothUUID: Sendable, Hashable, CustomStringConvertible {
    /// The 128-bit value, most significant byte first (the order it is written in text).
    public let bytes: [UInt8]

    /// The SIG base UUID's last 12 bytes (`-0000-1000-8000-00805F9B34FB`).
    private static let baseTail: [UInt8] = [0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]

    /// A 16-bit SIG alias such as `0x180D` (Heart Rate service).
    public init(_ alias: UInt16) {
        bytes = [0, 0, UInt8(alias >> 8), UInt8(alias & 0xFF)] + Self.baseTail
    }

    /// A 128-bit UUID from 16 bytes, most significant first. Returns nil for another length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses `180D`, `0x180D` or `0000180d-0000-1000-8000-00805f9b34fb` (case-insensitive).
    public init?(_ text: String) {
        var t = text.lowercased()
        if t.hasPrefix("0x") { t.removeFirst(2) }
        t.removeAll { $0 == "-" }
        if t.count == 4, let v = UInt16(t, radix: 16) { self.init(v); return }
        guard t.count == 32 else { return nil }
        var out: [UInt8] = []
        var i = t.startIndex
        while i < t.endIndex {
            let j = t.index(i, offsetBy: 2)
            guard let b = UInt8(t[i..<j], radix: 16) else { return nil }
            out.append(b)
            i = j
        }
        self.init(bytes: out)
    }

    /// The 16-bit alias when this UUID lies in the SIG base range, else nil.
    public var alias: UInt16? {
        guard bytes[0] == 0, bytes[1] == 0, Array(bytes[4...]) == Self.baseTail else { return nil }
        return UInt16(bytes[2]) << 8 | UInt16(bytes[3])
    }

    /// The UUID as ATT sends it: 2 bytes for an alias, else 16, little-endian.
    public var attBytes: [UInt8] {
        if let a = alias { return [UInt8(a & 0xFF), UInt8(a >> 8)] }
        return bytes.reversed()
    }

    /// Decodes a UUID from ATT's little-endian 2- or 16-byte form; nil for another length.
    public init?<C: Collection<UInt8>>(attBytes: C) {
        let b = Array(attBytes)
        switch b.count {
        case 2: self.init(UInt16(b[0]) | UInt16(b[1]) << 8)
        case 16: self.init(bytes: b.reversed())
        default: return nil
        }
    }

    /// `180D` for aliases, else the canonical 8-4-4-4-12 form in upper case.
    public var description: String {
        if let a = alias { return hex16(a) }
        let h = bytes.map { hex8($0) }.joined()
        let parts = [h.prefix(8), h.dropFirst(8).prefix(4), h.dropFirst(12).prefix(4),
                     h.dropFirst(16).prefix(4), h.dropFirst(20)]
        return parts.map(String.init).joined(separator: "-")
    }
}

extension BluetoothUUID: ExpressibleByIntegerLiteral {
    /// `let hrs: BluetoothUUID = 0x180D`.
    public init(integerLiteral value: UInt16) { self.init(value) }
}

extension BluetoothUUID {
    /// 0x2800 Primary Service declaration.
    public static let primaryService = BluetoothUUID(0x2800)
    /// 0x2801 Secondary Service declaration.
    public static let secondaryService = BluetoothUUID(0x2801)
    /// 0x2803 Characteristic declaration.
    public static let characteristic = BluetoothUUID(0x2803)
    /// 0x2902 Client Characteristic Configuration descriptor (CCCD).
    public static let clientCharacteristicConfiguration = BluetoothUUID(0x2902)
}

func hex8(_ v: UInt8) -> String {
    let s = String(v, radix: 16, uppercase: true)
    return s.count == 1 ? "0" + s : s
}

func hex16(_ v: UInt16) -> String {
    let s = String(v, radix: 16, uppercase: true)
    return String(repeating: "0", count: 4 - s.count) + s
}
