import Foundation

/// The text ``JSONOutput`` writes, produced without JSONSerialization for the values HealthGate
/// writes most (samples, export entries, API pages): Foundation's writer costs about 50 µs per
/// sample on Linux (dynamic casts, bridging, an ICU collator for `.sortedKeys`), which made a
/// year's export take hours. The output is **byte for byte** what JSONSerialization writes with
/// ``JSONOutput/textOptions`` (checked by a differential test over random values); for anything
/// it is not sure of — a key outside `[A-Za-z0-9_]`, two keys equal but for case or leading
/// zeros, a non-finite number, a type it does not know — it answers nil and the caller falls
/// back to JSONSerialization.
enum CompactJSON {
    /// `value` as JSON text, or nil when JSONSerialization must write it.
    static func string(_ value: Any) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        guard write(value, into: &out) else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    private static func write(_ value: Any, into out: inout [UInt8]) -> Bool {
        // A Foundation number (from a parsed document) has its own rules (an NSNumber holding 1
        // may be a Bool): JSONSerialization writes those.
        if type(of: value) is AnyClass { return type(of: value) == NSNull.self && append("null", &out) }
        switch value {
        case let s as String:
            writeString(s, into: &out)
        case let b as Bool:
            out += b ? Array("true".utf8) : Array("false".utf8)
        case let i as Int:
            out += Array(String(i).utf8)
        case let i as Int64:
            out += Array(String(i).utf8)
        case let d as Double:
            guard d.isFinite else { return false }
            // JSONSerialization writes a Double as its description without a trailing ".0".
            var text = d.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            out += Array(text.utf8)
        case let o as [String: Any]:
            var keys = Array(o.keys)
            for k in keys where !k.utf8.allSatisfy(isKeyByte) { _ = k; return false }
            var tie = false
            keys.sort { a, b in
                let c = compare(a, b)
                if c == 0 { tie = true }
                return c < 0
            }
            guard !tie else { return false }
            out.append(UInt8(ascii: "{"))
            for (n, k) in keys.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                writeString(k, into: &out)
                out.append(UInt8(ascii: ":"))
                guard write(o[k]!, into: &out) else { return false }
            }
            out.append(UInt8(ascii: "}"))
        case let a as [Any]:
            out.append(UInt8(ascii: "["))
            for (n, v) in a.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                guard write(v, into: &out) else { return false }
            }
            out.append(UInt8(ascii: "]"))
        default:
            return false
        }
        return true
    }

    private static func append(_ text: String, _ out: inout [UInt8]) -> Bool {
        out += Array(text.utf8)
        return true
    }

    /// A JSON string as JSONSerialization escapes it: `"` and `\`, the named controls
    /// (`\b \f \n \r \t`), other controls below U+0020 as `\u00XX`; everything else as UTF-8.
    private static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func isKeyByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
    }

    /// The order `.sortedKeys` gives keys of `[A-Za-z0-9_]` (a collation: `_` before digits before
    /// letters, letters without case, digit runs by their value); 0 when the two are equal in it.
    static func compare(_ a: String, _ b: String) -> Int {
        let x = Array(a.utf8), y = Array(b.utf8)
        var i = 0, j = 0
        func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
        func weight(_ c: UInt8) -> Int { c == 0x5F ? 0 : isDigit(c) ? 1 : 2 }
        while i < x.count && j < y.count {
            if isDigit(x[i]) && isDigit(y[j]) {
                var ei = i, ej = j
                while ei < x.count && isDigit(x[ei]) { ei += 1 }
                while ej < y.count && isDigit(y[ej]) { ej += 1 }
                let p = Array(x[i..<ei].drop { $0 == 0x30 }), q = Array(y[j..<ej].drop { $0 == 0x30 })
                if p.count != q.count { return p.count < q.count ? -1 : 1 }
                if p != q { return p.lexicographicallyPrecedes(q) ? -1 : 1 }
                i = ei; j = ej
                continue
            }
            let wa = weight(x[i]), wb = weight(y[j])
            if wa != wb { return wa < wb ? -1 : 1 }
            let ca = x[i] | 0x20, cb = y[j] | 0x20   // letters without case
            if wa == 2, ca != cb { return ca < cb ? -1 : 1 }
            i += 1; j += 1
        }
        if i < x.count { return 1 }
        if j < y.count { return -1 }
        return 0
    }
}
