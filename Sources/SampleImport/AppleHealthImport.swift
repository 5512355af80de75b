import AppleHealthExport
import Foundation
import Locking
import HealthModel
import HealthStore
import Sysexits

/// One `healthgate import --apple-health export.zip|export.xml` (docs/apple-health.md): the
/// export streamed by ``AppleHealthExportReader`` (constant memory), each batch of samples and
/// workouts saved in one transaction through the store's bulk writer, progress on a terminal.
/// Samples and workouts carry UUIDs derived from their content, so importing the same or a
/// newer export again adds only what is new. The date of birth fills the store's profile when
/// it has none. The command only parses its arguments and prints the ``Report``.
package struct AppleHealthImport {
    /// What the import did, in every outcome (a failure part-way still says what is saved).
    package struct Report {
        /// What the export held and what the reader did with it.
        package var export = AppleHealthExportReport()
        /// What the saves did with the samples.
        package var summary = SaveSummary()
        /// Workouts stored, already stored, and refused (their events did not fit).
        package var workoutsInserted = 0, workoutDuplicates = 0, workoutsRefused = 0
        /// The date of birth the profile took from the export (nil: none, or the profile had one).
        package var dateOfBirthSet: String?

        package init() {}

        /// `import --apple-health --json`: counts, per type, what was not imported and why.
        package func jsonObject(error: String?) -> [String: Any] {
            [
                "inserted": summary.inserted, "replaced": summary.replaced, "ignored": summary.ignored,
                "duplicates": summary.duplicates, "samplesPerType": export.samples, "heartbeatSamples": export.heartbeatSamples,
                "workouts": ["inserted": workoutsInserted, "duplicates": workoutDuplicates, "refused": workoutsRefused],
                "unknownRecordTypes": export.unknownRecordTypes, "otherElements": export.otherElements,
                "correlationCopies": export.correlationCopies, "badRecordCount": export.badRecordCount,
                "badRecords": export.badRecords.map { ["line": $0.line, "type": $0.type, "reason": $0.reason] },
                "dateOfBirthSet": dateOfBirthSet ?? NSNull(), "complete": export.complete,
                "exportDate": export.exportDate.map(ISO8601.string) ?? NSNull(), "error": error ?? NSNull(),
            ]
        }

        /// The failure to exit with after a finished run that skipped bad records (everything
        /// else is saved; exit 65 so scripts notice, as `import --jsonl` does), nil when none.
        package func skippedRecordsFailure(path: String) -> CLIFailure? {
            export.badRecordCount == 0 ? nil
                : CLIFailure("\(export.badRecordCount) bad record(s) in \(path) were skipped (listed above); everything else was imported.", code: .dataError)
        }

        /// The summary for people: one line of counts, then what was left out.
        package func lines(path: String) -> [String] {
            var out = ["imported \(path) (Apple Health\(export.exportDate.map { ", exported \(ISO8601.string($0))" } ?? "")): \(export.sampleTotal) samples: \(summary); workouts: \(workoutsInserted) inserted, \(workoutDuplicates) duplicate(s)\(workoutsRefused > 0 ? ", \(workoutsRefused) refused" : "")"]
            if !export.samples.isEmpty {
                out.append("  per type: " + export.samples.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                           + (export.heartbeatSamples > 0 ? "; heart-rate samples with RR from heartbeat lists \(export.heartbeatSamples)" : ""))
            }
            if !export.unknownRecordTypes.isEmpty {
                let top = export.unknownRecordTypes.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
                out.append("  not imported (no HealthGate type): \(top.prefix(8).map { "\($0.key) \($0.value)" }.joined(separator: ", "))\(top.count > 8 ? ", and \(top.count - 8) more types" : "")")
            }
            if export.correlationCopies > 0 { out.append("  records inside correlations, counted once: \(export.correlationCopies)") }
            if let d = dateOfBirthSet { out.append("  date of birth \(d) set in the profile (heart-rate zones; 'healthgate profile show')") }
            if export.badRecordCount > 0 { out.append("  \(export.badRecordCount) bad record(s) skipped (listed above)") }
            return out
        }
    }

    /// The export's path (`.zip` or `.xml`).
    package let path: String
    package init(path: String) { self.path = path }

    /// What the reading thread hands over: a batch, or the end (with the error when reading
    /// failed after the batches before).
    private enum Handed: Sendable {
        case batch(AppleHealthExportBatch)
        case end((any Error)?)
    }

    /// The reader stops: the saver failed.
    private struct Cancelled: Error {}

    /// The state key under which a store records how its imports derive sample UUIDs.
    package static let sampleIdentityKey = "apple-health.sample-identity"

    /// How imports into `db` derive sample UUIDs: what the store recorded; else, for a store
    /// that already holds samples of an export imported before the choice was recorded, the
    /// content hashes those were given (a re-import must give the same sample the same UUID);
    /// else time-ordered UUIDs. The choice is recorded on first use and kept for good
    /// (docs/apple-health.md, "Identity").
    /// - Throws: ``AppleHealthExportError/unknownSampleIdentity(recorded:)`` for a choice a
    ///   newer version recorded; ``StoreError``.
    package static func sampleIdentity(for db: HealthStore) throws -> AppleHealthExportReader.SampleIdentity {
        if let recorded = try db.stateString(sampleIdentityKey) {
            guard let known = AppleHealthExportReader.SampleIdentity(rawValue: recorded) else {
                throw AppleHealthExportError.unknownSampleIdentity(recorded: recorded)
            }
            return known
        }
        let legacy = try db.hasSamples(fromSourcesPrefixed: AppleHealthExportReader.sourceIdentifier(name: ""))
        let chosen: AppleHealthExportReader.SampleIdentity = legacy ? .contentHash : .timeOrdered
        try db.setState(sampleIdentityKey, string: chosen.rawValue)
        return chosen
    }

    /// Reads and saves the export into the store `openStore` opens (after the export is found,
    /// so a missing file is reported first), filling `report` as it goes. The export is read and
    /// parsed on a thread of its own while the batch before is saved (``BatchHandoff``: at most
    /// one batch waits), so on two cores the import takes about the longer of the two.
    /// - Throws: ``AppleHealthExportError`` (the file, the zip, malformed XML at a line: what is
    ///   saved so far stays), ``StoreError`` from saving (reading stops at its next batch).
    package func run(into report: inout Report, openStore: () throws -> HealthStore) throws {
        var found = try AppleHealthExportReader(path: path)
        let db = try openStore()
        found.options.sampleIdentity = try Self.sampleIdentity(for: db)
        let reader = found
        var meter = ImportMeter(path: path, total: reader.totalBytes.map { Int($0) })
        defer { meter.finish() }
        var summary = SaveSummary(), inserted = 0, duplicates = 0, refused = 0, delivered = 0
        var export = AppleHealthExportReport()
        defer {
            report.export = export
            (report.summary, report.workoutsInserted, report.workoutDuplicates, report.workoutsRefused) = (summary, inserted, duplicates, refused)
        }
        let handoff = BatchHandoff<Handed>()
        let readerReport = Lock(AppleHealthExportReport())   // the reader's, as far as it read: set before `finished`
        let thread = Thread {
            var read = AppleHealthExportReport()
            do {
                try reader.read(into: &read) { batch in
                    if !handoff.put(.batch(batch)) { throw Cancelled() }
                }
                readerReport.withLock { $0 = read }
                _ = handoff.put(.end(nil))
            } catch is Cancelled {
                readerReport.withLock { $0 = read }   // the saver stopped: it takes nothing more
            } catch {
                readerReport.withLock { $0 = read }
                _ = handoff.put(.end(error))
            }
            handoff.finished.signal()
        }
        thread.name = "apple-health-read"
        thread.start()
        while true {
            let batch: AppleHealthExportBatch
            switch handoff.take() {
            case .end(let failure):
                handoff.finished.wait()
                export = readerReport.withLock { $0 }
                if let failure { throw failure }
            case .batch(let b):
                batch = b
                let workouts = batch.workouts.filter { w in
                    guard let problem = WorkoutRecordJSON.problem(w.workout) else { return true }
                    meter.clear()
                    Console.error("\(path): export.xml:\(w.line): workout refused: \(problem)")
                    refused += 1
                    return false
                }
                do {
                    if !batch.samples.isEmpty || !workouts.isEmpty {
                        try db.write { w in
                            if !batch.samples.isEmpty { summary.add(try w.insertImported(batch.samples)) }
                            for workout in workouts { if try w.saveWorkout(workout.workout) { inserted += 1 } else { duplicates += 1 } }
                        }
                    }
                } catch {
                    // Stop the reader (it may wait for room) and take its report as far as it got.
                    handoff.cancel()
                    handoff.finished.wait()
                    export = readerReport.withLock { $0 }
                    throw error
                }
                delivered += batch.samples.count
                meter.show(records: delivered, bytes: Int(batch.bytesRead))
                continue
            }
            break
        }
        // Bad records, with their lines, once the reading is over (the reader keeps the first 1,000).
        meter.clear()
        for bad in export.badRecords { Console.error("\(path): \(bad)") }
        if export.badRecordCount > export.badRecords.count {
            Console.error("\(path): … and \(export.badRecordCount - export.badRecords.count) more bad records")
        }
        if let day = export.dateOfBirth, try db.characteristics().dateOfBirth == nil,
           let components = Characteristics.parseDate(day.description) {
            var c = try db.characteristics()
            c.dateOfBirth = components
            try db.setCharacteristics(c)
            report.dateOfBirthSet = day.description
        }
    }
}
