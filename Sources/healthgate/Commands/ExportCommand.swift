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
        try reporting {
            let q = try filters.query()
            var unit: HealthUnit?
            if let text = self.unit {
                guard let type = q.type else { throw CLIFailure("--unit needs --type (units differ between types).", code: .usage) }
                unit = try CLIParse.unit(text, for: type)
            }
            let samples = try store.openForReading().samples(q)
            var out = ""
            if format == .csv {
                out += "uuid,type,value,unit,start,end,source,source_identifier,device_name,device_manufacturer,device_model,device_local_identifier,sensor_location,sync_identifier,sync_version,metadata\n"
            }
            for s in samples {
                let u = unit ?? s.type.canonicalUnit
                switch format {
                case .jsonl:
                    out += JSONOutput.string(try SampleJSON.object(s, unit: u)) + "\n"
                case .csv:
                    var meta = SampleJSON.metadataObject(s.metadata)
                    for k in ["heartRateSensorLocation", "syncIdentifier", "syncVersion"] { meta[k] = nil }
                    let cells: [String] = [
                        s.uuid.uuidString.lowercased(), s.type.identifier, String(try s.quantity.doubleValue(for: u)),
                        u.unitString, ISO8601.string(s.startDate), ISO8601.string(s.endDate)]
                        .map(Self.csvCell)
                    let text: [String] = [
                        s.source.name, s.source.identifier, s.device?.name ?? "", s.device?.manufacturer ?? "",
                        s.device?.model ?? "", s.device?.localIdentifier ?? "", s.metadata.heartRateSensorLocation?.name ?? "",
                        s.metadata.syncIdentifier ?? "", s.metadata.syncVersion.map(String.init) ?? "",
                        meta.isEmpty ? "" : JSONOutput.string(meta),
                    ]
                    out += (cells + text.map(Self.csvTextCell)).joined(separator: ",") + "\n"
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

    /// A cell of free text (names, identifiers, metadata): a leading `=`, `+`, `-`, `@`, tab or
    /// carriage return would make a spreadsheet run it as a formula (CSV injection), so such a
    /// cell gets a `'` in front, as OWASP advises; then ``csvCell(_:)``'s quoting.
    static func csvTextCell(_ s: String) -> String {
        guard let first = s.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return csvCell(s) }
        return csvCell("'" + s)
    }

    /// RFC 4180: quote cells holding a comma, quote or line break; double inner quotes.
    static func csvCell(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
