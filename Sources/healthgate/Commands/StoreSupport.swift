import ArgumentParser
import Foundation
import HealthModel
import HealthStore

// Shared pieces of the store commands (issue 2): error codes, filters, dates, tables.

extension StoreError: SysexitConvertible {
    package var sysexit: Sysexit {
        switch kind {
        case .io: .ioError
        case .busy: .tempFail
        case .permission: .noPermission
        case .corrupt, .data: .dataError
        case .usage: .usage
        case .config: .config
        case .internal: .software
        case .noInput: .noInput
        }
    }
}

extension HealthModelError: SysexitConvertible {
    package var sysexit: Sysexit { .dataError }
}

extension SampleJSON.DecodeError: SysexitConvertible {
    package var sysexit: Sysexit { .dataError }
}

extension StoreLocation {
    /// Opens the store at ``path`` for writing: creates it when missing and migrates it.
    /// Checkpointed when the command ends (``WritingStores``).
    func open() throws -> HealthStore { WritingStores.opened(try HealthStore(path: path)) }

    /// Opens the store at ``path`` read-only, for commands that only read: never creates,
    /// migrates or writes it, so it works for a user who may only read the file (docs/store.md).
    func openForReading() throws -> HealthStore { try HealthStore(path: path, mode: .readOnly) }
}

/// Parsing helpers for command-line values.
enum CLIParse {
    static let registry = QuantityTypeRegistry.standard

    /// A quantity type named on the command line; an unknown name is a usage error (64).
    static func type(_ name: String) throws -> QuantityType { try type(name, option: "--type") }

    static func type(_ name: String, option: String) throws -> QuantityType {
        do { return try registry.type(name) } catch {
            throw CLIFailure("\(option) '\(name)' is not a known quantity type: use one of \(registry.all.map(\.identifier).joined(separator: ", ")) ('healthgate types' describes them).",
                             code: .usage)
        }
    }

    /// Statistics options from `--option`, checked against `type`: an unknown name or one that
    /// does not fit the type's aggregation style is a usage error (64).
    static func statisticsOptions(_ list: String, for type: QuantityType) throws -> StatisticsOptions {
        let options: StatisticsOptions
        do { options = try StatisticsOptions(names: list) } catch {
            let bad = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .first { raw in !raw.isEmpty && !StatisticsOptions.names.contains { $0.0.lowercased() == raw.lowercased() } } ?? list
            throw CLIFailure("--option '\(bad)' is not a statistics option: use \(StatisticsOptions.names.map(\.0).joined(separator: ", ")).",
                             code: .usage)
        }
        do { try options.validate(for: type) } catch let e as HealthModelError {
            throw CLIFailure("--option: \(e)", code: .usage)
        }
        return options
    }

    /// A date from a flag, parsed strictly by ``ISO8601/parse(_:localTimeZone:)``: with `Z` or an
    /// offset it is that instant; without one (and a bare date, meaning midnight) it is wall-clock
    /// time in `timeZone`, else in the system's zone (`TZ`). Anything else exits 64 naming the flag.
    static func date(_ text: String, option: String, timeZone: TimeZone? = nil) throws -> Date {
        do {
            return try ISO8601.parse(text, localTimeZone: timeZone ?? .current)
        } catch {
            throw CLIFailure("\(option): \(error.reason); use ISO 8601 such as 2026-11-02T08:00:00Z, 2026-11-02T09:00:00+01:00 or 2026-11-02 (docs/input-rules.md).",
                             code: .usage)
        }
    }

    /// A `--tz` value: an IANA zone name from the system's database (`Europe/Berlin`), matched
    /// without regard to case (`utc`, `europe/berlin`); `UTC` and `GMT` too. Offset forms that
    /// Foundation accepts loosely (`UTC+2`, `GMT-0130`, `+02:00`) are refused: they are not
    /// IANA names and mean no DST rules, so they are a mistake more often than not.
    static func timeZone(_ name: String?) throws -> TimeZone? {
        guard let name else { return nil }
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        let known = TimeZone.knownTimeZoneIdentifiers + ["UTC", "GMT"]
        // Any case for the usual names; exact case for the other names of the tz database
        // (CET, Etc/UTC), which are files under /usr/share/zoneinfo. An offset such as
        // GMT+0200 is no file there.
        let id = known.first { $0.lowercased() == trimmed.lowercased() }
            ?? (!trimmed.contains("..") && FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/" + trimmed) ? trimmed : nil)
        guard let id, let tz = TimeZone(identifier: id) else {
            throw CLIFailure("--tz '\(name)' is not an IANA time zone name: use one such as Europe/Berlin, America/New_York or UTC (fixed offsets like UTC+2 are not accepted).",
                             code: .usage)
        }
        return tz
    }

    /// The unit for `type` named by `option`: parsed and checked against the type, or the
    /// canonical unit when none is given. A bad or incompatible unit is a usage error (64).
    static func unit(_ text: String?, for type: QuantityType, option: String = "--unit") throws -> HealthUnit {
        guard let text else { return type.canonicalUnit }
        let u: HealthUnit
        do { u = try HealthUnit(text) } catch { throw CLIFailure("\(option): \(error)", code: .usage) }
        guard u.isCompatible(with: type.canonicalUnit) else {
            throw CLIFailure("\(option): \(HealthModelError.incompatibleUnits(u, type.canonicalUnit))", code: .usage)
        }
        return u
    }

    /// `[from, to)` must not be empty or reversed: a usage error (64) naming both flags.
    static func checkRange(from: Date?, to: Date?) throws {
        if let from, let to, to <= from {
            throw CLIFailure("--to (\(ISO8601.string(to))) must be after --from (\(ISO8601.string(from))): the range [--from, --to) would be empty.",
                             code: .usage)
        }
    }

    static func sensorLocation(_ text: String?) throws -> HeartRateSensorLocation? {
        guard let text else { return nil }
        guard let l = HeartRateSensorLocation(name: text) else {
            throw CLIFailure("--sensor-location '\(text)' is not one of \(HeartRateSensorLocation.allCases.map(\.name).joined(separator: ", ")).",
                             code: .usage)
        }
        return l
    }
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
        let q = SampleQuery(type: try type.map(CLIParse.type),
                    start: try from.map { try CLIParse.date($0, option: "--from", timeZone: timeZone) },
                    end: try to.map { try CLIParse.date($0, option: "--to", timeZone: timeZone) },
                    strictStartDate: strictStart, strictEndDate: strictEnd,
                    device: device, source: source, sensorLocation: try CLIParse.sensorLocation(sensorLocation))
        try CLIParse.checkRange(from: q.start, to: q.end)
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
