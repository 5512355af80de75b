import Foundation

/// Bytes as lower-case hex and back: payloads in captures and `--json`, token secrets, the
/// simulated peers' transcripts, `decode`'s input. ASCII digits only (`Character.isHexDigit`
/// would also take full-width ones).
package enum Hex {
    /// `bytes` as two lower-case hex digits each.
    package static func string<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of an even number of ASCII hex digits (either case); nil for anything else.
    package static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        let u = Array(text.utf8)
        guard u.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let hi = nibble(u[i]), let lo = nibble(u[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// The bytes of hex as people type it (`164d1603`, `16 4d 16 03`, `16:4d:16:03`,
    /// `0x164d1603`): an optional `0x`, spaces, colons or dashes between the digits.
    package static func bytes(typed text: String) -> [UInt8]? {
        var t = Substring(text.trimmingCharacters(in: .whitespaces))
        if t.lowercased().hasPrefix("0x") { t = t.dropFirst(2) }
        return bytes(String(t.filter { $0 != " " && $0 != ":" && $0 != "-" }))
    }

    private static let digits = Array("0123456789abcdef".utf8)

    /// The value of one ASCII hex digit (either case); nil for any other byte.
    package static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }
}
