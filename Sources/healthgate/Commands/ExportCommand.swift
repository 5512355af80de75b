import ArgumentParser
import Foundation
import HealthModel
import HealthStore

/// `healthgate export --format csv|jsonl [filters]`.
struct ExportCommand: ParsableCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable { case csv, jsonl }

    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export samples as JSON lines (importable) or CSV.",
        discussion: """
            JSON lines use the shape 'healthgate import' reads, so export → import round-trips (UUIDs kept). \
            CSV has a header row: uuid, type, value, unit, start, end, source, source_identifier, device_name, \
            device_manufacturer, device_model, device_local_identifier, sensor_location, sync_identifier, \
            sync_version, metadata (JSON). Values are in each type's canonical unit unless --unit is given \
            (then --type is required). Samples come oldest first. CSV is for spreadsheets: a text cell that \
            starts with = + - @ or a tab gets a ' in front so it cannot run as a formula; use JSON lines to \
            move data between stores (docs/input-rules.md).

            Example:
              healthgate export --format csv --type stepCount --from 2026-11-01 > steps.csv
            """)

    @OptionGroup var store: StoreLocation
    @OptionGroup var filters: SampleFilterOptions

    @Option(help: "csv or jsonl.")
    var format: Format

    @Option(help: "Write values in this unit (needs --type).")
    var unit: String?

    @Option(help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
    var output: String?

    func run() throws {
        let q = try filters.query()
        let unit = try InputValues.unit(self.unit, forQueryType: q.type)
        let samples = try store.openForReading().samples(q)
        var out = ""
        if format == .csv { out += SampleCSV.header + "\n" }
        for s in samples {
            let u = unit ?? s.type.canonicalUnit
            switch format {
            case .jsonl: out += try JSONOutput.string(try SampleJSON.object(s, unit: u)) + "\n"
            case .csv: out += try SampleCSV.row(s, unit: u) { try JSONOutput.string($0) } + "\n"
            }
        }
        if let output {
            try FileAccess.write(Array(out.utf8), to: output, what: "the export file")
            Console.note("exported \(samples.count) sample(s) to \(output)")
        } else {
            try FileAccess.writeAll(STDOUT_FILENO, Array(out.utf8), path: "standard output", what: "the export to")
        }
    }
}
