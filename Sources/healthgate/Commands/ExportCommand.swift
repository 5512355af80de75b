import ArgumentParser
import HealthModel
import HealthStore
import SampleExport

extension ExportFormat: ExpressibleByArgument {}

/// `healthgate export --format csv|jsonl|fhir|omh [filters]`.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export samples as JSON lines (importable), CSV, a FHIR R4 bundle or Open mHealth data points.",
        discussion: """
            jsonl: the shape 'healthgate import' reads (export → import round-trips, UUIDs kept); without --type, \
            the workouts overlapping the range follow the samples, one record each. csv: a header \
            row (uuid, type, value, unit, start, end, source, source_identifier, device_name, device_manufacturer, \
            device_model, device_local_identifier, sensor_location, sync_identifier, sync_version, metadata as \
            JSON); a text cell that starts with = + - @ or a tab gets a ' in front so it cannot run as a formula. \
            Both write each type's canonical unit unless --unit is given (then --type is required).
            fhir: one FHIR R4 Bundle (type collection) of Observations about --subject, LOINC-coded (heart rate \
            8867-4, resting heart rate 40443-4, HRV SDNN 80404-7, steps 55423-8, active energy 41981-2, body mass \
            29463-7), and a Device resource per device. omh: a JSON array of Open mHealth data points \
            (omh:heart-rate:2.0, omh:step-count:3.0, one omh:rr-interval:1.0 per RR interval). Types a format \
            has no mapping for are skipped and counted on standard error. Oldest first; the output streams, and \
            --output is written atomically (docs/interop.md).

            Examples:
              healthgate export --format csv --type stepCount --from 2026-11-01 > steps.csv
              healthgate export --format fhir --subject Patient/123 --from 2026-11-01 --output hr.fhir.json
              healthgate export --format omh --type heartRate --output hr.omh.json
            """)

    @OptionGroup var store: StoreLocation
    @OptionGroup var filters: SampleFilterOptions

    @Option(help: "The format (see above).") var format: ExportFormat
    @Option(help: "Write values in this unit (csv and jsonl; needs --type).") var unit: String?
    @Option(help: ArgumentHelp("FHIR only: the reference every observation is about (Patient/123, urn:uuid:…).",
                               valueName: "reference")) var subject: String?
    @Option(help: ArgumentHelp("Write to this file (all or nothing) instead of standard output.", valueName: "file")) var output: String?

    func validate() throws { if let refusal = format.refusal(unit: unit, subject: subject) { throw ValidationError(refusal) } }

    func run() throws {
        let q = try filters.query()
        let unit = try InputValues.unit(self.unit, forQueryType: q.type)
        let (written, workouts, skipped) = try format.export(q, from: try store.openForReading(), unit: unit, subject: subject, to: output,
                                                             workouts: q.type == nil)
        skipped.forEach(Console.note)
        if let output { Console.note("exported \(written) sample(s)\(workouts > 0 ? " and \(workouts) workout(s)" : "") to \(output)") }
    }
}
