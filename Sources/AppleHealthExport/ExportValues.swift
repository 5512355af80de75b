import Foundation
import HealthModel

/// A calendar day without a time or zone, such as a date of birth (`1990-05-17`).
public struct CalendarDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int, month: Int, day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// `YYYY-MM-DD`, nil for another shape or a day that does not exist.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
              (1...9999).contains(y), (1...12).contains(m), (1...ISO8601.daysIn(month: Int64(m), year: Int64(y))).contains(Int64(d))
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    public var description: String {
        String(format: "%04d-%02d-%02d", year, month, day)
    }

    public static func < (a: CalendarDay, b: CalendarDay) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }
}

/// The export's value formats, read from raw attribute bytes on the hot path.
enum ExportValues {
    /// An instant of the export's date format, `2023-01-05 07:31:21 +0100`: local wall-clock time
    /// and its UTC offset. Also `T` for the space, `Z`, `+01:00`, and no space before the offset.
    /// The offset is required (a wall-clock time alone names no instant: files must say their
    /// zone, docs/input-rules.md), and the instant must lie in ``ISO8601``'s range.
    struct Instant: Equatable {
        /// Unix seconds (the offset applied).
        var seconds: Int64
        /// Seconds east of UTC the wall-clock time was in.
        var offset: Int32
        var date: Date { Date(timeIntervalSince1970: Double(seconds)) }
    }

    /// Parses an export date; nil when it is not one or names a day or time that does not exist.
    static func instant(_ b: UnsafeBufferPointer<UInt8>) -> Instant? {
        let n = b.count
        guard n >= 19 else { return nil }
        var ok = true
        func num(_ at: Int, _ width: Int) -> Int64 {
            var v: Int64 = 0
            for k in at..<(at + width) {
                let d = b[k] &- 0x30
                if d > 9 { ok = false }
                v = v * 10 + Int64(d)
            }
            return v
        }
        let year = num(0, 4), month = num(5, 2), day = num(8, 2), hour = num(11, 2), minute = num(14, 2), second = num(17, 2)
        guard ok, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x20 || b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A,
              (1...12).contains(month), day >= 1, day <= ISO8601.daysIn(month: month, year: year), year >= 1,
              hour <= 23, minute <= 59, second <= 59 else { return nil }
        var i = 19
        if i < n, b[i] == 0x20 { i += 1 }
        var offset: Int64 = 0
        guard i < n else { return nil }   // no offset
        if b[i] == 0x5A, i + 1 == n {
            offset = 0
        } else {
            guard b[i] == 0x2B || b[i] == 0x2D else { return nil }
            let sign: Int64 = b[i] == 0x2D ? -1 : 1
            i += 1
            guard i + 4 <= n else { return nil }
            let oh = num(i, 2)
            i += 2
            if b[i] == 0x3A { i += 1 }
            guard i + 2 == n else { return nil }
            let om = num(i, 2)
            guard ok, oh <= 23, om <= 59 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        }
        let local = ISO8601.daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        guard ISO8601.isInRange(Double(local - offset)) else { return nil }
        return Instant(seconds: local - offset, offset: Int32(offset))
    }

    private static let powersOfTen: [Double] = (0...22).map { k in (0..<k).reduce(1.0) { r, _ in r * 10 } }

    /// A decimal number (`72`, `0.0123`, `-5`, `1e3`); nil when it is not one. Exact: a mantissa
    /// below 2^53 with at most 22 decimals is one correctly rounded division; anything else goes
    /// through the standard library's parser.
    static func number(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
        let n = b.count
        guard n > 0, n < 64 else { return nil }
        var i = 0, negative = false
        if b[0] == 0x2D || b[0] == 0x2B { negative = b[0] == 0x2D; i = 1 }
        var mantissa: UInt64 = 0, significant = 0, decimals = 0
        var anyDigit = false, dot = false, fast = true
        while i < n {
            let c = b[i]
            if c == 0x2E, !dot { dot = true; i += 1; continue }
            let d = c &- 0x30
            guard d <= 9 else { fast = false; break }
            anyDigit = true
            if mantissa > 0 || d > 0 { significant += 1 }
            guard significant <= 19 else { fast = false; break }
            mantissa = mantissa &* 10 &+ UInt64(d)
            if dot { decimals += 1 }
            i += 1
        }
        if fast {
            guard anyDigit else { return nil }
            if mantissa < (1 << 53), decimals <= 22 {
                let v = Double(mantissa) / powersOfTen[decimals]
                return negative && v != 0 ? -v : v
            }
        }
        return decimal(String(decoding: b, as: UTF8.self))
    }

    /// A decimal number's text, strictly (``InputValues/decimal(_:)``).
    static func decimal(_ text: String) -> Double? { InputValues.decimal(text) }

    /// A beat's clock time in a heartbeat list (`7:31:21.40 PM`, `19:31:21.40`, `7:31:21,4 pm`) as
    /// milliseconds since local midnight; nil when it is not one.
    static func clockMilliseconds(_ b: UnsafeBufferPointer<UInt8>) -> Int64? {
        let n = b.count
        var i = 0
        func int(_ maxDigits: Int) -> Int64? {
            var v: Int64 = 0, k = 0
            while i < n, k < maxDigits, b[i] >= 0x30, b[i] <= 0x39 { v = v * 10 + Int64(b[i] - 0x30); i += 1; k += 1 }
            return k == 0 ? nil : v
        }
        guard let h = int(2), i < n, b[i] == 0x3A else { return nil }
        i += 1
        guard let m = int(2), i < n, b[i] == 0x3A else { return nil }
        i += 1
        guard let s = int(2), m <= 59, s <= 59 else { return nil }
        var ms: Int64 = 0
        if i < n, b[i] == 0x2E || b[i] == 0x2C {
            i += 1
            var scale: Int64 = 100, any = false
            while i < n, b[i] >= 0x30, b[i] <= 0x39 {
                ms += Int64(b[i] - 0x30) * scale
                scale /= 10
                i += 1
                any = true
            }
            guard any else { return nil }
        }
        while i < n, b[i] == 0x20 || b[i] == 0xA0 || b[i] == 0xE2 || b[i] == 0x80 || b[i] == 0xAF { i += 1 }   // spaces, NBSP, U+202F
        var hour = h
        if i < n {
            let rest = String(decoding: UnsafeBufferPointer(rebasing: b[i...]), as: UTF8.self).lowercased().replacingOccurrences(of: ".", with: "")
            switch rest {
            case "am": guard (1...12).contains(h) else { return nil }; hour = h == 12 ? 0 : h
            case "pm": guard (1...12).contains(h) else { return nil }; hour = h == 12 ? 12 : h + 12
            default: return nil
            }
        }
        guard hour <= 23 else { return nil }
        return ((hour * 60 + m) * 60 + s) * 1000 + ms
    }

    /// The fields of an `HKDevice` description as the export writes it:
    /// `<<HKDevice: 0x283b4c0a0>, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, software:8.5>`.
    /// A field starts at `, key:` for a known key only, so values may hold commas (`Watch6,1`,
    /// `Withings, Inc.`) and colons; unknown keys stay part of the value before them. The object
    /// address is dropped (it changes from export to export). Nil when no field is set.
    static func device(_ text: String) -> Device? {
        var body = Substring(text)
        if body.hasPrefix("<<"), let close = body.firstIndex(of: ">") {
            body = body[body.index(after: close)...]
        } else if body.hasPrefix("<") {
            body = body.dropFirst()
        }
        if body.hasSuffix(">") { body = body.dropLast() }
        let keys = ["name", "manufacturer", "model", "hardware", "firmware", "software", "localIdentifier", "UDIDeviceIdentifier", "creation date"]
        // Where each field starts: ", key:" (or "key:" at the very start).
        var starts: [(key: String, keyStart: Substring.Index, valueStart: Substring.Index)] = []
        if let key = keys.first(where: { body.hasPrefix($0 + ":") }) {
            starts.append((key, body.startIndex, body.index(body.startIndex, offsetBy: key.count + 1)))
        }
        var i = body.startIndex
        while let comma = body[i...].firstIndex(of: ",") {
            var j = body.index(after: comma)
            while j < body.endIndex, body[j] == " " { j = body.index(after: j) }
            if let key = keys.first(where: { body[j...].hasPrefix($0 + ":") }) {
                starts.append((key, comma, body.index(j, offsetBy: key.count + 1)))
            }
            i = body.index(after: comma)
        }
        var d = Device()
        for (k, f) in starts.enumerated() {
            let end = k + 1 < starts.count ? starts[k + 1].keyStart : body.endIndex
            let value = body[f.valueStart..<end].trimmingCharacters(in: .whitespaces)
            guard !value.isEmpty else { continue }
            switch f.key {
            case "name": d.name = value
            case "manufacturer": d.manufacturer = value
            case "model": d.model = value
            case "hardware": d.hardwareVersion = value
            case "firmware": d.firmwareVersion = value
            case "software": d.softwareVersion = value
            case "localIdentifier": d.localIdentifier = value
            case "UDIDeviceIdentifier": d.udiDeviceIdentifier = value
            default: break
            }
        }
        return d.isEmpty ? nil : d
    }
}
