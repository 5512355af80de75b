import ArgumentParser
import Foundation
import Gateway
import HealthModel
import HealthStore

// Shared pieces of the store commands (issue 2): error codes, filters, dates, tables.

extension StoreLocation {
    /// Opens the store at ``path`` for writing: creates it when missing and migrates it.
    /// Checkpointed when the command ends (``WritingStores``).
    func open() throws -> HealthStore { WritingStores.opened(try HealthStore(path: path)) }

    /// Opens the store at ``path`` read-only, for commands that only read: never creates,
    /// migrates or writes it, so it works for a user who may only read the file (docs/store.md).
    func openForReading() throws -> HealthStore { try HealthStore(path: path, mode: .readOnly) }
}

/// Filters shared by `samples`, `export` and `delete`.
struct SampleFilterOptions: ParsableArguments {
    @Option(help: "Only this quantity type (see 'healthgate types').")
    var type: String?

    @Option(help: ArgumentHelp("Range start (ISO 8601; without Z or an offset it is local time, a bare date is local midnight).", valueName: "date"))
    var from: String?

    @Option(help: ArgumentHelp("Range end, exclusive.", valueName: "date"))
    var to: String?

    @Flag(help: "Only samples that start at or after --from (default: any sample overlapping the range).")
    var strictStart = false

    @Flag(help: "Only samples that end at or before --to.")
    var strictEnd = false

    @Option(help: ArgumentHelp("Only samples from this device (name, local identifier or alias).", valueName: "name"))
    var device: String?

    @Option(help: ArgumentHelp("Only samples from this source (name or identifier).", valueName: "name"))
    var source: String?

    @Option(help: ArgumentHelp("Only samples with this heart-rate sensor location (chest, wrist, …).", valueName: "location"))
    var sensorLocation: String?

    /// Whether any filter is set.
    var isEmpty: Bool {
        type == nil && from == nil && to == nil && device == nil && source == nil && sensorLocation == nil
    }

    /// The query; bare `--from`/`--to` dates are midnight in `timeZone` (UTC when nil).
    func query(timeZone: TimeZone? = nil) throws -> SampleQuery {
        let q = SampleQuery(type: try type.map(InputValues.type),
                    start: try from.map { try InputValues.date($0, option: "--from", timeZone: timeZone) },
                    end: try to.map { try InputValues.date($0, option: "--to", timeZone: timeZone) },
                    strictStartDate: strictStart, strictEndDate: strictEnd,
                    device: device, source: source, sensorLocation: try InputValues.sensorLocation(sensorLocation))
        try InputValues.checkRange(from: q.start, to: q.end)
        return q
    }
}

/// Plain-text tables for people.
enum Table {
    /// Prints rows under a header, each column as wide as its widest cell (control characters
    /// in cells shown as escapes, ``TerminalText``).
    static func print(_ header: [String], _ rawRows: [[String]]) {
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
    static func time(_ date: Date, in zone: TimeZone) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.calendar = Calendar(identifier: .gregorian)
        f.timeZone = zone
        let t = date.timeIntervalSince1970
        f.dateFormat = t - t.rounded(.down) >= 0.0005 ? "yyyy-MM-dd'T'HH:mm:ss.SSSXXXXX" : "yyyy-MM-dd'T'HH:mm:ssXXXXX"
        return f.string(from: date)
    }

    /// A number without a trailing `.0`, rounded to 4 decimals for display.
    static func number(_ x: Double?) -> String {
        guard let x else { return "-" }
        // Large values as they are: rounding them through x × 10,000 would overflow to inf.
        guard x.isFinite, abs(x) < 1e15 else { return String(x) }
        let r = (x * 10_000).rounded() / 10_000
        if r == r.rounded(), abs(r) < 1e15 { return String(Int64(r)) }
        return String(r)
    }
}

/// Asks a yes/no question on the terminal; false when stdin is not a terminal.
enum Confirm {
    static var isTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    static func ask(_ question: String) -> Bool {
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }
}
