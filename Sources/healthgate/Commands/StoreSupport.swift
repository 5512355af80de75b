import ArgumentParser
import Foundation
import HealthModel
import HealthStore

// Shared pieces of the store commands (issue 2): error codes, filters, dates, tables.

extension StoreError: SysexitConvertible {
    var sysexit: Sysexit {
        switch kind {
        case .io: .ioError
        case .busy: .tempFail
        case .permission: .noPermission
        case .corrupt, .data: .dataError
        case .usage: .usage
        case .config: .config
        case .internal: .software
        }
    }
}

extension HealthModelError: SysexitConvertible {
    var sysexit: Sysexit { .dataError }
}

extension SampleJSON.DecodeError: SysexitConvertible {
    var sysexit: Sysexit { .dataError }
}

extension StoreLocation {
    /// Opens the store at ``path``.
    func open() throws -> HealthStore { try HealthStore(path: path) }
}

/// Parsing helpers for command-line values.
enum CLIParse {
    static let registry = QuantityTypeRegistry.standard

    static func type(_ name: String) throws -> QuantityType { try registry.type(name) }

    /// A date: ISO 8601 (`2026-11-02T08:00:00Z`, with an offset, or fractional), or a bare
    /// date, which means midnight in `timeZone` (UTC when none is given).
    static func date(_ text: String, option: String, timeZone: TimeZone? = nil) throws -> Date {
        if let tz = timeZone, text.count == 10, let utc = ISO8601.date(text) {
            var cal = Calendar(identifier: .gregorian)
            cal.timeZone = TimeZone(identifier: "UTC")!
            var local = Calendar(identifier: .gregorian)
            local.timeZone = tz
            let c = cal.dateComponents([.year, .month, .day], from: utc)
            if let d = local.date(from: c) { return d }
        }
        guard let d = ISO8601.date(text) else {
            throw CLIFailure("\(option) '\(text)' is not a date: use ISO 8601 such as 2026-11-02T08:00:00Z or 2026-11-02.",
                             code: .usage)
        }
        return d
    }

    static func timeZone(_ name: String?) throws -> TimeZone? {
        guard let name else { return nil }
        guard let tz = TimeZone(identifier: name) else {
            throw CLIFailure("--tz '\(name)' is not a time zone: use an IANA name such as Europe/Berlin or UTC.", code: .usage)
        }
        return tz
    }

    /// The output unit for `type`: `text` parsed and checked against the type, or canonical.
    static func unit(_ text: String?, for type: QuantityType) throws -> HealthUnit {
        guard let text else { return type.canonicalUnit }
        let u = try HealthUnit(text)
        guard u.isCompatible(with: type.canonicalUnit) else {
            throw HealthModelError.incompatibleUnits(u, type.canonicalUnit)
        }
        return u
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

    @Option(help: ArgumentHelp("Range start (ISO 8601; a bare date is midnight UTC).", valueName: "date"))
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

    func query() throws -> SampleQuery {
        SampleQuery(type: try type.map(CLIParse.type),
                    start: try from.map { try CLIParse.date($0, option: "--from") },
                    end: try to.map { try CLIParse.date($0, option: "--to") },
                    strictStartDate: strictStart, strictEndDate: strictEnd,
                    device: device, source: source, sensorLocation: try CLIParse.sensorLocation(sensorLocation))
    }
}

/// Plain-text tables for people.
enum Table {
    /// Prints rows under a header, each column as wide as its widest cell.
    static func print(_ header: [String], _ rows: [[String]]) {
        var widths = header.map(\.count)
        for r in rows { for (i, c) in r.enumerated() where i < widths.count { widths[i] = max(widths[i], c.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in i == cells.count - 1 ? c : c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }
        Swift.print(line(header))
        for r in rows { Swift.print(line(r)) }
    }

    /// A number without a trailing `.0`, rounded to 4 decimals for display.
    static func number(_ x: Double?) -> String {
        guard let x else { return "-" }
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
