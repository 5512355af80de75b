import ArgumentParser
import Foundation
import HealthModel
import HealthStore

/// `healthgate add`: manual entry of one sample.
struct AddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Save one sample entered by hand.",
        discussion: """
            The value is given in --unit (default: the type's canonical unit, see 'healthgate types') and \
            stored in the canonical unit. Without --start the sample is stamped now; without --end it is \
            instantaneous. The source defaults to "Manual entry", which outranks every other source when \
            statistics merge overlapping data.

            Example:
              healthgate add --type heartRate --value 72 --unit count/min --sensor-location chest
              healthgate add --type stepCount --value 1000 --start 2026-11-02T08:00:00Z --end 2026-11-02T09:00:00Z --source Watch
            """)

    @OptionGroup var store: StoreLocation

    @Option(help: "The quantity type (heartRate, stepCount, …).")
    var type: String

    // .unconditional: `--value -5` takes -5 as the value, not as an option (for types that
    // allow negative values; the others refuse it with a sentence).
    @Option(parsing: .unconditional, help: ArgumentHelp(
        "The value, in --unit; it must be plausible for the type ('healthgate types' lists the ranges). A negative value may follow directly: --value -5.",
        valueName: "number"), transform: { text in
            // A decimal number only: Double("0x48") would save 72, Double("1e-400") 0.
            guard let v = InputValues.decimal(text) else {
                throw ValidationError("give a decimal number such as 72, 0.5, -5 or 1e3 (not hexadecimal, nan or inf; between about 1e-308 and 1e308 unless 0).")
            }
            return v
        })
    var value: Double

    @Option(help: "The value's unit (HKUnit grammar: count/min, kcal, ms, …).")
    var unit: String?

    @Option(help: ArgumentHelp("When the measurement started (ISO 8601: 2026-11-02T08:00:00Z, +01:00, or local time in the system zone without one). Default: now.", valueName: "date"))
    var start: String?

    @Option(help: ArgumentHelp("When it ended (ISO 8601, as --start). Default: the start.", valueName: "date"))
    var end: String?

    @Option(help: ArgumentHelp("The source's name (default: Manual entry).", valueName: "name"))
    var source: String?

    @Option(help: ArgumentHelp("The source's stable identifier (default: its name).", valueName: "id"))
    var sourceIdentifier: String?

    @Option(help: "Device name.") var deviceName: String?
    @Option(help: "Device manufacturer.") var deviceManufacturer: String?
    @Option(help: "Device model.") var deviceModel: String?
    @Option(help: "Device local identifier.") var deviceLocalIdentifier: String?

    @Option(help: ArgumentHelp("Heart-rate sensor location: other, chest, wrist, finger, hand, earLobe, foot.", valueName: "location"))
    var sensorLocation: String?

    @Option(help: ArgumentHelp("Heart-rate motion context: notSet, sedentary, active.", valueName: "context"))
    var motionContext: String?

    @Option(help: ArgumentHelp("Sync identifier: a later save with a higher --sync-version replaces this sample.", valueName: "id"))
    var syncIdentifier: String?

    // .unconditional: `--sync-version -1` is a value (an integer, as an import line's may be),
    // not a missing one followed by an option.
    @Option(parsing: .unconditional, help: ArgumentHelp("Sync version (an integer; needed with --sync-identifier).", valueName: "n"),
            transform: { text in
                guard let n = Int(text) else { throw ValidationError("give a whole number (a later save with a higher one replaces this sample).") }
                return n
            })
    var syncVersion: Int?

    @Option(name: .customLong("metadata"), help: ArgumentHelp(
        "A free metadata key=value (repeatable). Numbers become numbers, ISO 8601 date-times dates.", valueName: "key=value"))
    var metadata: [String] = []

    @Flag(help: "Print the saved sample as JSON.")
    var json = false

    func run() throws {
        let type = try InputValues.type(type)
        let unit = try InputValues.unit(unit, for: type)
        let startDate = try start.map { try InputValues.date($0, option: "--start") } ?? Date()
        let endDate = try end.map { try InputValues.date($0, option: "--end") } ?? startDate
        let src = source.map { Source(name: $0, identifier: sourceIdentifier) } ?? .manual
        let device = Device(name: deviceName, manufacturer: deviceManufacturer, model: deviceModel,
                            localIdentifier: deviceLocalIdentifier)
        var meta = Metadata(syncIdentifier: syncIdentifier, syncVersion: syncVersion, wasUserEntered: true)
        meta.heartRateSensorLocation = try InputValues.sensorLocation(sensorLocation)
        meta.heartRateMotionContext = try InputValues.motionContext(motionContext)
        meta.user = try InputValues.userMetadata(metadata)
        let sample: QuantitySample
        do {
            sample = try QuantitySample(type: type, quantity: Quantity(value, unit), start: startDate, end: endDate,
                                        source: src, device: device, metadata: meta)
        } catch let e as HealthModelError {
            throw CLIFailure("\(Self.flag(for: e)): \(e)", code: .usage)
        }
        let summary = try store.open().save([sample])
        if json {
            var o = try SampleJSON.object(sample)
            o["saved"] = summary.inserted + summary.replaced > 0
            try JSONOutput.emit(o)
        } else if summary.ignored > 0 {
            print("not saved: a sample with sync identifier \(syncIdentifier ?? "") and an equal or higher version is stored")
        } else {
            print("saved \(sample.uuid.uuidString.lowercased()): \(type.identifier) \(Table.number(value)) \(unit) " +
                  "\(ISO8601.string(startDate))\(endDate != startDate ? "–" + ISO8601.string(endDate) : "")" +
                  (summary.replaced > 0 ? " (replaced an older sync version)" : ""))
        }
    }

    /// The option a validation error is about: every value of `add` comes from the command
    /// line, so a refused sample is a usage error (64) naming its flag.
    static func flag(for error: HealthModelError) -> String {
        switch error {
        case .notFinite, .negativeValue, .implausibleValue: "--value"
        case .incompatibleUnits, .invalidUnit: "--unit"
        case .startAfterEnd: "--start/--end"
        case .syncVersionMissing: "--sync-identifier/--sync-version"
        case .invalidMetadata: "--metadata"
        case .unknownType, .optionNotAllowed: "--type"
        }
    }
}
