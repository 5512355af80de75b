import Foundation

/// Why a date text was refused: one phrase saying what is wrong (the caller names the flag or
/// the file line it came from).
public struct DateParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. "day 30 does not exist in February 2026".
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// The one date parser and formatter of HealthGate: every command-line flag, every file reader
/// and every JSON output goes through it (docs/input-rules.md).
///
/// Accepted: `YYYY-MM-DDTHH:MM[:SS[.fraction]]` followed by `Z` or `±HH:MM`; a space instead of
/// the `T`; up to 9 fractional digits, kept exactly. Without a zone, a date-time (and a bare
/// date, meaning midnight) is read in a local time zone the caller supplies, and refused when it
/// supplies none (files must say their zone). Anything else is refused, never adjusted: no
/// February 30, no hour 24 or 25, no minute or second 60, no local time that a daylight-saving
/// change skips or repeats.
///
/// Formatting writes UTC with `Z` and just enough fractional digits (none, 3, 6 or 9) that
/// parsing the text gives back the same stored value, so export → import → export is
/// byte-identical.
public enum ISO8601 {
    /// The earliest instant accepted: 0001-01-01T00:00:00Z, in seconds since 1970.
    public static let earliestSeconds: Double = -62_135_596_800
    /// The first instant past the accepted range: 10000-01-01T00:00:00Z, in seconds since 1970.
    /// An instant must lie in [``earliestSeconds``, this): a year that takes five digits could not
    /// be written back as this grammar reads it, so export → import would break.
    public static let endSeconds: Double = 253_402_300_800

    /// Whether `seconds` since 1970 is an instant HealthGate accepts (see ``endSeconds``).
    public static func isInRange(_ seconds: Double) -> Bool {
        seconds >= earliestSeconds && seconds < endSeconds
    }

    /// The phrase for an instant outside the range, e.g. a date whose offset moves it past
    /// 9999-12-31 in UTC.
    static func outOfRange(_ text: String) -> DateParseError {
        DateParseError("'\(text)' is outside 0001-01-01T00:00:00Z – 9999-12-31T23:59:59Z in UTC (its offset applied): give a date in that range")
    }
    /// Formats `date` as `2026-11-02T08:00:00Z`, with `.250` (or 6 or 9 digits) when it has a
    /// fraction of a second: the shortest of those that parses back to exactly `date`.
    public static func string(_ date: Date) -> String {
        // The store keeps seconds since 1970, and the parser makes Date(timeIntervalSince1970:)
        // of the text's decimal: a digit count is good when that gives back this very Date.
        let t = date.timeIntervalSince1970
        guard t.isFinite else { return "invalid-date" }
        var text = String(format: "%.9f", t)
        var digits = 9
        for n in [0, 3, 6] {
            let candidate = String(format: "%.\(n)f", t)
            if let back = Double(candidate), Date(timeIntervalSince1970: back) == date { text = candidate; digits = n; break }
        }
        // Split the decimal text into whole seconds (floor) and a fraction in [0, 1).
        var body = Substring(text)
        let negative = body.first == "-"
        if negative { body = body.dropFirst() }
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        let intPart = Int64(parts[0]) ?? 0
        var frac = digits > 0 && parts.count > 1 ? Int64(parts[1]) ?? 0 : 0
        var whole = negative ? -intPart : intPart
        if negative, frac != 0 {
            whole -= 1
            frac = pow10(digits) - frac
        }

        let days = floorDiv(whole, 86_400)
        let secondOfDay = whole - days * 86_400
        let (y, m, d) = civil(fromDays: days)
        var out = pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T"
        out += pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if digits > 0 { out += "." + pad(frac, digits) }
        return out + "Z"
    }

    /// Parses a date-time that carries its zone (`Z` or `±HH:MM`); nil for anything else.
    /// See ``parse(_:localTimeZone:)`` for the reason a text is refused.
    public static func date(_ string: String) -> Date? {
        try? parse(string, localTimeZone: nil)
    }

    /// Parses `text` strictly (see the type's documentation).
    /// - Parameter localTimeZone: the zone of a date-time without `Z`/offset and of a bare date
    ///   (midnight); nil refuses both.
    /// - Throws: ``DateParseError`` saying what is wrong.
    public static func parse(_ text: String, localTimeZone: TimeZone?) throws(DateParseError) -> Date {
        let f = try Fields(text)
        let localWhole = daysFromCivil(f.year, f.month, f.day) * 86_400 + f.hour * 3600 + f.minute * 60 + f.second
        let whole: Int64
        if let offset = f.offset {
            whole = localWhole - offset
        } else {
            guard let zone = localTimeZone else {
                throw DateParseError(f.hasTime
                    ? "'\(text)' has no time zone: add Z (UTC) or an offset such as +01:00"
                    : "'\(text)' is a bare date without a time zone: give a date-time such as \(text)T00:00:00Z")
            }
            whole = try resolve(localWhole, in: zone, fields: f, text: text)
        }
        // Checked after the fraction: 9999-12-31T23:59:59.999999999Z rounds to 10000-01-01.
        let t = seconds(whole: whole, fraction: f.fraction)
        guard isInRange(t) else { throw outOfRange(text) }
        return Date(timeIntervalSince1970: t)
    }

    // MARK: Parsing

    private struct Fields {
        var year: Int64 = 0, month: Int64 = 0, day: Int64 = 0
        var hour: Int64 = 0, minute: Int64 = 0, second: Int64 = 0
        var fraction = ""
        var hasTime = false
        var offset: Int64?

        init(_ text: String) throws(DateParseError) {
            let u = Array(text.utf8)
            let shape = "'\(text)' is not an ISO 8601 date-time such as 2026-11-02T08:00:00Z"
            var i = 0
            func number(_ width: Int) throws(DateParseError) -> Int64 {
                guard i + width <= u.count else { throw DateParseError(shape) }
                var n: Int64 = 0
                for k in i..<(i + width) {
                    guard (0x30...0x39).contains(u[k]) else { throw DateParseError(shape) }
                    n = n * 10 + Int64(u[k] - 0x30)
                }
                i += width
                return n
            }
            func expect(_ c: UInt8) throws(DateParseError) {
                guard i < u.count, u[i] == c else { throw DateParseError(shape) }
                i += 1
            }
            year = try number(4); try expect(0x2D)
            month = try number(2); try expect(0x2D)
            day = try number(2)
            guard (1...9999).contains(year) else { throw DateParseError("year \(year) in '\(text)' is not 0001–9999") }
            guard (1...12).contains(month) else { throw DateParseError("month \(month) in '\(text)' is not 01–12") }
            let monthDays = ISO8601.daysIn(month: month, year: year)
            guard (1...monthDays).contains(day) else {
                throw DateParseError("day \(day) in '\(text)' does not exist: \(ISO8601.monthNames[Int(month) - 1]) \(year) has \(monthDays) days")
            }
            if i == u.count { return }
            guard u[i] == 0x54 || u[i] == 0x20 else { throw DateParseError(shape) }   // 'T' or ' '
            i += 1
            hasTime = true
            hour = try number(2); try expect(0x3A)
            minute = try number(2)
            if i < u.count, u[i] == 0x3A {
                i += 1
                second = try number(2)
                if i < u.count, u[i] == 0x2E {
                    i += 1
                    let begin = i
                    while i < u.count, (0x30...0x39).contains(u[i]) { i += 1 }
                    guard i > begin else { throw DateParseError(shape) }
                    guard i - begin <= 9 else { throw DateParseError("'\(text)' has more than 9 fractional digits (nanoseconds)") }
                    fraction = String(decoding: u[begin..<i], as: UTF8.self)
                }
            }
            guard hour <= 23 else { throw DateParseError("hour \(hour) in '\(text)' is not 00–23") }
            guard minute <= 59 else { throw DateParseError("minute \(minute) in '\(text)' is not 00–59") }
            guard second <= 59 else { throw DateParseError("second \(second) in '\(text)' is not 00–59 (leap seconds are not accepted)") }
            if i == u.count { return }
            switch u[i] {
            case 0x5A:   // 'Z'
                i += 1
                offset = 0
            case 0x2B, 0x2D:   // '+' '-'
                let sign: Int64 = u[i] == 0x2D ? -1 : 1
                i += 1
                let oh = try number(2); try expect(0x3A)
                let om = try number(2)
                guard oh <= 23, om <= 59 else { throw DateParseError("the offset in '\(text)' is not ±00:00–23:59") }
                offset = sign * (oh * 3600 + om * 60)
            default:
                throw DateParseError(shape)
            }
            guard i == u.count else { throw DateParseError(shape) }
        }
    }

    /// The instant of local wall-clock time `localWhole` (seconds as if UTC) in `zone`.
    private static func resolve(_ localWhole: Int64, in zone: TimeZone, fields f: Fields,
                                text: String) throws(DateParseError) -> Int64 {
        var offsets = Set<Int64>()
        for delta: Int64 in [-86_400, 0, 86_400] {
            offsets.insert(Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(localWhole + delta)))))
        }
        let candidates = offsets.map { localWhole - $0 }
            .filter { Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double($0)))) == localWhole - $0 }
            .sorted()
        if !f.hasTime {
            // A bare date is the day's first instant (midnight, or the end of a skipped midnight).
            if let first = candidates.first { return first }
            var cal = Calendar(identifier: .gregorian)
            cal.timeZone = zone
            let noonLocal = localWhole + 12 * 3600
            let noon = Date(timeIntervalSince1970: Double(noonLocal - Int64(zone.secondsFromGMT(
                for: Date(timeIntervalSince1970: Double(noonLocal))))))
            return Int64(cal.startOfDay(for: noon).timeIntervalSince1970)
        }
        // The zone's offsets around that time, as a hint: the ones to choose from.
        let hint = offsets.sorted().map { offsetText($0) }.joined(separator: " or ")
        switch candidates.count {
        case 1: return candidates[0]
        case 0:
            throw DateParseError("'\(text)' does not exist in \(zone.identifier) (the clocks skip it); add an offset: \(hint)")
        default:
            throw DateParseError("'\(text)' happens twice in \(zone.identifier) (the clocks go back); add an offset to say which: \(hint)")
        }
    }

    /// `+01:00`, `-03:30`: an offset in seconds east of UTC as the grammar writes it.
    static func offsetText(_ seconds: Int64) -> String {
        let a = abs(seconds)
        return (seconds < 0 ? "-" : "+") + pad(a / 3600, 2) + ":" + pad(a / 60 % 60, 2)
    }

    /// `whole` + `.fraction` seconds as the nearest Double (decimal text → Double is exact-rounded).
    private static func seconds(whole: Int64, fraction: String) -> Double {
        guard !fraction.isEmpty, let f = Int64(fraction), f != 0 else { return Double(whole) }
        if whole >= 0 { return Double("\(whole).\(fraction)") ?? Double(whole) }
        let w = whole + 1   // ≤ 0: whole + 0.f = -(|w| + (1 - 0.f))
        return Double("-\(-w).\(pad(pow10(fraction.count) - f, fraction.count))") ?? Double(whole)
    }

    // MARK: Calendar arithmetic (proleptic Gregorian, H. Hinnant's days-from-civil)

    static let monthNames = ["January", "February", "March", "April", "May", "June", "July",
                             "August", "September", "October", "November", "December"]

    /// The days in `month` (1–12) of `year`, proleptic Gregorian.
    @inlinable package static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days-from-civil).
    @inlinable package static func daysFromCivil(_ y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, m, d)
    }

    @usableFromInline static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    private static func pow10(_ n: Int) -> Int64 {
        var p: Int64 = 1
        for _ in 0..<n { p *= 10 }
        return p
    }

    private static func pad(_ n: Int64, _ width: Int) -> String {
        let s = String(n)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
