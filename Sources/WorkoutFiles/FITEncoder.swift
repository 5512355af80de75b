/// The FIT protocol's container, written by hand from Garmin's published protocol description:
/// a 14-byte header (with its own CRC), definition and data messages with normal record headers,
/// little-endian fields, and the file's CRC. Knows nothing of workouts; ``FITWriter`` says
/// which messages to write.
struct FITEncoder {
    /// FIT's base types this writer uses: the byte a field definition names them by, their size
    /// and the value that means "invalid" (no value).
    enum BaseType: UInt8 {
        case enumeration = 0x00
        case uint8 = 0x02
        case sint32 = 0x85
        case uint16 = 0x84
        case uint32 = 0x86
        case string = 0x07
        case uint32z = 0x8C

        var size: Int {
            switch self {
            case .enumeration, .uint8, .string: return 1
            case .uint16: return 2
            case .sint32, .uint32, .uint32z: return 4
            }
        }

        /// The invalid value, as an unsigned bit pattern of ``size`` bytes.
        var invalid: UInt64 {
            switch self {
            case .enumeration, .uint8: return 0xFF
            case .uint16: return 0xFFFF
            case .sint32: return 0x7FFF_FFFF
            case .uint32: return 0xFFFF_FFFF
            case .uint32z, .string: return 0
            }
        }
    }

    /// One field of a message: its number in the profile, its type and its bytes (an array
    /// field's elements one after another; a string null-terminated).
    struct Field {
        var number: UInt8
        var type: BaseType
        var bytes: [UInt8]

        /// A single value (or ``BaseType/invalid`` for nil), little-endian.
        init(_ number: UInt8, _ type: BaseType, _ value: UInt64?) {
            self.init(number, type, array: [value])
        }

        /// An array of values, each invalid where nil.
        init(_ number: UInt8, _ type: BaseType, array: [UInt64?]) {
            self.number = number
            self.type = type
            bytes = []
            for value in array {
                let v = value ?? type.invalid
                for i in 0..<type.size { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
            }
        }

        /// A string field: UTF-8, null-terminated, cut at a character boundary so it fits FIT's
        /// 255-byte field size.
        init(_ number: UInt8, string: String) {
            self.number = number
            type = .string
            var utf8: [UInt8] = []
            for ch in string.unicodeScalars where ch.value != 0 {
                let encoded = Array(String(ch).utf8)
                if utf8.count + encoded.count > 254 { break }
                utf8 += encoded
            }
            bytes = utf8 + [0]
        }
    }

    /// A message's shape as its definition message gives it: the global message number and each
    /// field's number, size and type.
    private struct Layout: Equatable {
        var global: UInt16
        var fields: [[UInt8]]
    }

    /// The bytes after the header, before the CRC.
    private var records: [UInt8] = []
    /// What each local message type (0...15) is defined as now.
    private var locals: [Layout] = []

    /// Appends a data message, preceded by a definition message when its layout is new. Each
    /// layout keeps a local message type while there are free ones; FIT has 16.
    mutating func write(global: UInt16, _ fields: [Field]) {
        let layout = Layout(global: global, fields: fields.map { [$0.number, UInt8($0.bytes.count), $0.type.rawValue] })
        let local: Int
        if let known = locals.firstIndex(of: layout) {
            local = known
        } else {
            // A new layout takes a free local type, or (all 16 taken) redefines the one of the
            // same global message, else the last: a definition is valid until redefined.
            if locals.count < 16 {
                local = locals.count
                locals.append(layout)
            } else {
                local = locals.firstIndex { $0.global == global } ?? 15
                locals[local] = layout
            }
            records.append(0x40 | UInt8(local))      // definition message, normal header
            records += [0, 0]                         // reserved; architecture 0: little-endian
            records += [UInt8(global & 0xFF), UInt8(global >> 8), UInt8(fields.count)]
            for f in layout.fields { records += f }
        }
        records.append(UInt8(local))                  // data message, normal header
        for f in fields { records += f.bytes }
    }

    /// The finished file: header, records, CRC. Protocol version 1.0 (this writer uses nothing of
    /// 2.0: no developer fields, no 64-bit types), so readers of either version take it.
    func finish() -> [UInt8] {
        let size = UInt32(records.count)
        let profileVersion: UInt16 = 21_218   // 21.218, as major × 1000 + minor (the profile the fields were checked against)
        var header: [UInt8] = [14, 0x10, UInt8(profileVersion & 0xFF), UInt8(profileVersion >> 8)]
        header += (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * UInt32($0))) }
        header += Array(".FIT".utf8)
        let headerCRC = Self.crc(header)
        header += [UInt8(headerCRC & 0xFF), UInt8(headerCRC >> 8)]
        var file = header + records
        let crc = Self.crc(file)
        file += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        return file
    }

    /// FIT's CRC-16 (the protocol's nibble-table form of CRC-16/ARC: polynomial 0x8005 reflected,
    /// initial 0), over `bytes` from `crc`.
    static func crc(_ bytes: [UInt8], from crc: UInt16 = 0) -> UInt16 {
        let table: [UInt16] = [0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
                               0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400]
        var crc = crc
        for byte in bytes {
            for nibble in [byte & 0x0F, byte >> 4] {
                let t = table[Int(crc & 0x0F)]
                crc = (crc >> 4) & 0x0FFF
                crc = crc ^ t ^ table[Int(nibble)]
            }
        }
        return crc
    }
}
