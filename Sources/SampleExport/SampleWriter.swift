import Foundation
import HealthModel
import HealthStore
import Sysexits

/// The formats `healthgate export` writes (docs/interop.md).
package enum ExportFormat: String, CaseIterable, Sendable {
    /// CSV with a header row, for spreadsheets (``SampleCSV``).
    case csv
    /// JSON lines in the shape `healthgate import` reads (``SampleJSON``).
    case jsonl
    /// A FHIR R4 `Bundle` of `Observation`s and the `Device`s they reference.
    case fhir
    /// A JSON array of Open mHealth data points (heart rate, step count, RR intervals).
    case omh
}

/// Writes samples in one export format piece by piece, so an export streams: the caller
/// writes ``begin()``, then ``write(_:)`` for each sample in order, then ``end()``.
package protocol SampleWriter {
    /// The text before the first sample.
    mutating func begin() throws -> String
    /// The text for `sample`: empty for a sample the format cannot hold, counted in ``skipped``.
    /// - Throws: ``CLIFailure`` (70) when a value cannot be written as JSON (a non-finite number).
    mutating func write(_ sample: QuantitySample) throws -> String
    /// The text after the last sample.
    mutating func end() throws -> String
    /// Samples the format has no mapping for, by quantity type identifier.
    var skipped: [String: Int] { get }
}

extension ExportFormat {
    /// A writer for this format. `unit` (csv, jsonl only) expresses every value in it;
    /// `subject` (fhir only) is the FHIR reference every observation is about (`Patient/123`);
    /// `now` stamps the bundle and the data points' creation time.
    package func writer(unit: HealthUnit?, subject: String?, now: Date) -> any SampleWriter {
        switch self {
        case .csv: return CSVWriter(unit: unit)
        case .jsonl: return JSONLinesWriter(unit: unit)
        case .fhir: return FHIRBundleWriter(subject: subject ?? "", timestamp: now)
        case .omh: return OpenMHealthWriter(created: now)
        }
    }

    /// Whether `--unit` means something for this format (FHIR and Open mHealth fix their units).
    package var takesUnit: Bool { self == .csv || self == .jsonl }
}

/// ``SampleCSV`` rows under their header.
struct CSVWriter: SampleWriter {
    let unit: HealthUnit?
    var skipped: [String: Int] { [:] }
    func begin() -> String { SampleCSV.header + "\n" }
    func write(_ s: QuantitySample) throws -> String {
        try SampleCSV.row(s, unit: unit ?? s.type.canonicalUnit) { try JSONOutput.string($0) } + "\n"
    }
    func end() -> String { "" }
}

/// ``SampleJSON`` objects, one a line.
struct JSONLinesWriter: SampleWriter {
    let unit: HealthUnit?
    var skipped: [String: Int] { [:] }
    func begin() -> String { "" }
    func write(_ s: QuantitySample) throws -> String {
        try JSONOutput.string(try SampleJSON.object(s, unit: unit ?? s.type.canonicalUnit)) + "\n"
    }
    func end() -> String { "" }
}

extension ExportFormat {
    /// Why `--unit` or `--subject` does not fit this format, as a sentence (nil: they fit).
    package func refusal(unit: String?, subject: String?) -> String? {
        if unit != nil, !takesUnit {
            return "--unit applies to csv and jsonl; \(rawValue) writes each type in the unit its standard names."
        }
        if self == .fhir {
            guard let subject, !subject.isEmpty, !subject.contains(where: \.isWhitespace) else {
                return "--format fhir needs --subject: the FHIR reference the observations are about, e.g. --subject Patient/123."
            }
        } else if subject != nil {
            return "--subject applies to --format fhir only."
        }
        return nil
    }

    /// Whether this format carries workouts (``WorkoutRecordJSON`` records, after the samples).
    package var carriesWorkouts: Bool { self == .jsonl }

    /// Streams the samples `query` selects in this format to `output` (nil: standard output; a
    /// file is written atomically), reading them an hour of start dates at a time
    /// (``HealthStore/forEachSlice(of:seconds:_:)``: memory follows an hour of data, not the
    /// range), stamped `now` (default: this millisecond); then, with `workouts` and a format
    /// that ``carriesWorkouts``, the workouts overlapping the query's range. Returns how many
    /// samples and workouts were written and a line for each type skipped.
    /// - Throws: ``CLIFailure`` when the output cannot be written (a full disk: 74); a store error.
    package func export(_ query: SampleQuery, from store: HealthStore, unit: HealthUnit?, subject: String?, to output: String?,
                        workouts: Bool = false,
                        now: Date = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded() / 1000)) throws
        -> (written: Int, workouts: Int, skipped: [String]) {
        var writer = self.writer(unit: unit, subject: subject, now: now)
        var out = try OutputFile(path: output, what: output == nil ? "the export to" : "the export")
        var count = 0
        try out.write(try writer.begin())
        try store.forEachSlice(of: query) { slice in
            for s in slice { try out.write(try writer.write(s)) }
            count += slice.count
        }
        var workoutCount = 0
        if workouts, carriesWorkouts {
            for w in try store.workouts(from: query.start, to: query.end) {
                try out.write(try JSONOutput.string(WorkoutRecordJSON.object(w)) + "\n")
                workoutCount += 1
            }
        }
        try out.write(try writer.end())
        try out.finish()
        let skipped = writer.skipped.sorted { $0.key < $1.key }
        return (count - skipped.reduce(0) { $0 + $1.value }, workoutCount,
                skipped.map { "skipped \($0.value) \($0.key) sample(s): \(rawValue) has no mapping for \($0.key)" })
    }
}
