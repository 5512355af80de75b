import Foundation

/// Times as the XML formats write them: UTC, `YYYY-MM-DDThh:mm:ssZ`, with `.mmm` only when the
/// instant has a fraction of a second (rounded to the millisecond, as the store keeps them).
/// Written by hand (no `DateFormatter`): the same bytes on every platform and locale.
enum WorkoutTime {
    /// `date` in UTC to the millisecond: `2026-11-05T08:00:00Z`, `2026-11-05T08:00:00.250Z`.
    static func iso(_ date: Date) -> String {
        let ms = (date.timeIntervalSince1970 * 1000).rounded()
        guard ms.isFinite, abs(ms) < 1e17 else { return "\(date.timeIntervalSince1970)" }
        let total = Int64(ms)
        let millis = Int(((total % 1000) + 1000) % 1000)
        let seconds = (total - Int64(millis)) / 1000
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let secondOfDay = Int(seconds - Int64(days) * 86_400)
        let (y, m, d) = civil(daysSinceEpoch: days)
        var s = "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if millis != 0 { s += ".\(pad(millis, 3))" }
        return s + "Z"
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's days-to-civil).
    static func civil(daysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097                                       // day of era, 0...146096
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365  // year of era, 0...399
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)                 // day of year from March 1
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ n: Int, _ width: Int) -> String {
        let s = String(abs(n))
        return (n < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - s.count)) + s
    }
}

/// Text for XML documents built as strings.
enum XMLText {
    /// `text` safe as element content or a double-quoted attribute value: `&`, `<`, `>`, `"` and
    /// `'` escaped; characters XML 1.0 cannot carry at all (controls other than tab, newline and
    /// carriage return; U+FFFE and U+FFFF) replaced by U+FFFD, since no escape can
    /// say them. Tab, newline and carriage return become character references so an attribute
    /// keeps them (an XML parser turns literal ones into spaces).
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t": out += "&#9;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            default:
                let v = scalar.value
                if v < 0x20 || v == 0xFFFE || v == 0xFFFF { out += "\u{FFFD}" } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }

    /// `value` as a decimal with at most `digits` fraction digits and no exponent (xsd:decimal
    /// and xsd:double both read it; Swift's `description` would write `1e-05`), trailing zeros
    /// dropped: `47.1234567`, `12`, `-0.5`.
    static func decimal(_ value: Double, digits: Int) -> String {
        var s = String(format: "%.\(digits)f", value)
        if s.contains(".") {
            while s.hasSuffix("0") { s.removeLast() }
            if s.hasSuffix(".") { s.removeLast() }
        }
        if s == "-0" { s = "0" }
        return s
    }
}
