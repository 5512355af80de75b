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
