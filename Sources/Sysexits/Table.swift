import Foundation

/// Plain-text tables for people.
package enum Table {
    /// Prints rows under a header, each column as wide as its widest cell (control characters
    /// in cells shown as escapes, ``TerminalText``).
    package static func print(_ header: [String], _ rawRows: [[String]]) {
        let rows = rawRows.map { $0.map(TerminalText.visible) }
        var widths = header.map(\.count)
        for r in rows { for (i, c) in r.enumerated() where i < widths.count { widths[i] = max(widths[i], c.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in i == cells.count - 1 ? c : c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }
        Swift.print(line(header))
        for r in rows { Swift.print(line(r)) }
    }

    /// A time for people: ISO 8601 in `zone` with its offset (`2026-11-03T00:00:00+01:00`, `Z`
    /// for UTC), milliseconds when the time has a fraction. JSON output stays in UTC.
    package static func time(_ date: Date, in zone: TimeZone) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.calendar = Calendar(identifier: .gregorian)
        f.timeZone = zone
        let t = date.timeIntervalSince1970
        f.dateFormat = t - t.rounded(.down) >= 0.0005 ? "yyyy-MM-dd'T'HH:mm:ss.SSSXXXXX" : "yyyy-MM-dd'T'HH:mm:ssXXXXX"
        return f.string(from: date)
    }

    /// A number without a trailing `.0`, rounded to 4 decimals for display.
    package static func number(_ x: Double?) -> String {
        guard let x else { return "-" }
        // Large values as they are: rounding them through x × 10,000 would overflow to inf.
        guard x.isFinite, abs(x) < 1e15 else { return String(x) }
        let r = (x * 10_000).rounded() / 10_000
        if r == r.rounded(), abs(r) < 1e15 { return String(Int64(r)) }
        return String(r)
    }
}
