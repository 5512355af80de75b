import Foundation
import HealthModel

/// The import's hot-path date reader: `YYYY-MM-DD(T| )HH:MM[:SS[.f{1,9}]](Z|±HH:MM)` from bytes,
/// on or after 1970, to exactly the `Date` ``ISO8601/parse(_:localTimeZone:)`` gives for the same
/// text — without the `String`s that parser builds (about 1 µs a date, two dates a line). Nil
/// for anything else, valid or not (a bare date, a local time, before 1970, a bad day): the
/// caller then uses ``ISO8601`` itself, whose sentence names what is wrong. Checked against it on
/// random and hostile dates (`FastSampleParserTests`).
package enum FastDate {
    /// The date of `text` (its bytes), or nil when this reader does not handle it.
    package static func parse(_ text: UnsafeBufferPointer<UInt8>) -> Date? {
        guard let p = text.baseAddress else { return nil }
        return parse(Reader(p: p, n: text.count), 0..<text.count)
    }

    /// The date of bytes `s` of `r`; nil as above, and past ``ISO8601/endSeconds`` (a fraction
    /// can round up to it), which the full parser refuses with its sentence.
    static func parse(_ r: Reader, _ s: Range<Int>) -> Date? {
        guard let d = unchecked(r, s), d.timeIntervalSince1970 < ISO8601.endSeconds else { return nil }
        return d
    }

    private static func unchecked(_ r: Reader, _ s: Range<Int>) -> Date? {
        let p = r.p
        var i = s.lowerBound
        let end = s.upperBound
        func digits(_ width: Int) -> Int64? {
            guard i + width <= end else { return nil }
            var v: Int64 = 0
            for k in i..<(i + width) {
                let d = p[k] &- 0x30
                guard d <= 9 else { return nil }
                v = v * 10 + Int64(d)
            }
            i += width
            return v
        }
        func take(_ b: UInt8) -> Bool {
            guard i < end, p[i] == b else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), take(0x2D), let month = digits(2), take(0x2D), let day = digits(2) else { return nil }
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1, day <= ISO8601.daysIn(month: month, year: year) else { return nil }
        guard i < end, p[i] == 0x54 || p[i] == 0x20 else { return nil }   // a time is required in files
        i += 1
        guard let hour = digits(2), take(0x3A), let minute = digits(2) else { return nil }
        var second: Int64 = 0
        var fraction: Int64 = 0, fractionDigits = 0
        if take(0x3A) {
            guard let sec = digits(2) else { return nil }
            second = sec
            if take(0x2E) {
                while i < end, p[i] &- 0x30 <= 9 {
                    fractionDigits += 1
                    guard fractionDigits <= 9 else { return nil }
                    fraction = fraction * 10 + Int64(p[i] - 0x30)
                    i += 1
                }
                guard fractionDigits > 0 else { return nil }
            }
        }
        guard hour <= 23, minute <= 59, second <= 59 else { return nil }
        var offset: Int64 = 0
        if take(0x5A) {   // Z
        } else if i < end, p[i] == 0x2B || p[i] == 0x2D {
            let sign: Int64 = p[i] == 0x2D ? -1 : 1
            i += 1
            guard let oh = digits(2), take(0x3A), let om = digits(2), oh <= 23, om <= 59 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == end else { return nil }
        let whole = ISO8601.daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        guard whole >= 0, Double(whole) < ISO8601.endSeconds else { return nil }
        guard fraction != 0 else { return Date(timeIntervalSince1970: Double(whole)) }
        // whole.fraction as the nearest double, as the decimal parser gives it: exact division
        // of two exactly representable integers when the numerator is below 2^53, else strtod.
        let scale = pow10[fractionDigits]
        let (numerator, overflow) = whole.multipliedReportingOverflow(by: scale)
        if !overflow, numerator + fraction < 1 << 53 {
            return Date(timeIntervalSince1970: Double(numerator + fraction) / Double(scale))
        }
        var text = "\(whole)."
        let f = String(fraction)
        text += String(repeating: "0", count: fractionDigits - f.count) + f
        guard let v = Double(text) else { return nil }
        return Date(timeIntervalSince1970: v)
    }

    private static let pow10: [Int64] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000]
}
