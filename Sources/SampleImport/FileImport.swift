import Foundation
import HealthModel
import HealthStore
import ModuleExitCodes
import Sysexits

/// One `healthgate import` of a file: its records streamed (JSON lines or a JSON array), each
/// parsed (the fast reader, else the Foundation parser with its messages), the good samples
/// saved in transactions of ``batch`` records through the store's bulk writer, bad records
/// reported on stderr and skipped (or, with ``allOrNothing``, refusing the whole file), progress
/// on a terminal. The command only parses its arguments and prints the ``ImportReport``.
package struct FileImport {
    /// The file (`-`: standard input).
    package let path: String
    /// A JSON array (records are elements) rather than JSON lines.
    package let array: Bool
    /// One transaction for the whole file: a bad record saves nothing.
    package let allOrNothing: Bool
    /// Records per transaction (1 or more).
    package let batch: Int

    /// An import of `path`; `batch` must be 1 or more.
    package init(path: String, array: Bool, allOrNothing: Bool, batch: Int) {
        precondition(batch >= 1, "a batch holds at least one record")
        self.path = path
        self.array = array
        self.allOrNothing = allOrNothing
        self.batch = batch
    }

    /// What a record of this file is called in messages.
    package var recordWord: String { array ? "element" : "line" }

    private var what: String { array ? "the JSON array file" : "the JSON-lines file" }

    /// Imports the file into the store `openStore` opens (after the file is opened, so a missing
    /// file is reported first), updating `report` as it goes, so that a failure part-way still
    /// says what is saved.
    /// - Throws: ``CLIFailure`` with the sentence and code of what stopped it (the file, the
    ///   store, `--all-or-nothing` refusing a bad record), or the store's opening error.
    package func run(into report: inout ImportReport, openStore: () throws -> HealthStore) throws {
        let input = try ImportInput(path: path, what: what)
        defer { input.close() }
        let db = try openStore()
        // Read and parsed on a thread of their own, a batch ahead of the saves (ParsedBatches).
        let batches = ParsedBatches(input: input, path: path, what: what, array: array, registry: .standard, size: batch)
        defer { batches.stop() }   // before the file is closed
        var meter = ImportMeter(path: path, total: input.size)
        defer { meter.finish() }
        var ended = false
        /// The next batch, its bad records said and counted as the sequential reading did;
        /// nil at the end. Throws the reading's failure (its samples are not saved).
        func next() throws -> ParsedBatches.Batch? {
            if ended { return nil }
            let b = batches.next()
            for bad in b.bad {
                report.bad.append(bad)
                meter.clear()
                Console.error(array ? "\(path): element \(bad.number) (line \(bad.line)): skipped: \(bad.error)"
                              : "\(path):\(bad.number): skipped: \(bad.error)")
            }
            report.read = b.read
            report.stoppedEarly = b.stoppedEarly
            meter.show(records: b.records, bytes: b.bytes)
            ended = b.end
            if let failure = b.failure { throw failure }
            return b.samples.isEmpty && b.workouts.isEmpty && b.end ? nil : b
        }

        if allOrNothing {
            // One transaction for the whole file: nothing is kept if a record is bad or saving
            // fails, and memory stays a few batches whatever the file's size.
            do {
                try db.write { w in
                    while let b = try next() {
                        // After a bad record nothing more is saved (the file is refused); it is
                        // still read to the end, so every bad record is reported.
                        if report.bad.isEmpty { try save(b, with: w, into: &report) }
                    }
                    if !report.bad.isEmpty { throw Refused() }
                }
            } catch is Refused {
                report.summary = SaveSummary()
                throw CLIFailure("\(path): \(report.bad.count) bad \(recordWord)(s), first at \(recordWord) \(report.bad[0].number); nothing was imported (--all-or-nothing). Fix the \(recordWord)s above and import again.",
                                 code: .dataError)
            } catch let e as StoreError {
                report.summary = SaveSummary()
                throw CLIFailure(savedSoFar(report, failedFrom: 1, through: report.read, because: e), code: e.sysexit)
            }
            report.committedThrough = report.read
            report.complete = !report.stoppedEarly
            return
        }

        while let b = try next() {
            guard !b.samples.isEmpty || !b.workouts.isEmpty else { continue }
            do {
                var counted = report
                try db.write { w in try save(b, with: w, into: &counted) }
                report = counted
            } catch let e as StoreError {
                throw CLIFailure(savedSoFar(report, failedFrom: b.firstNumber, through: b.read, because: e), code: e.sysexit)
            }
            report.committedThrough = b.read
        }
        report.committedThrough = report.read
        report.complete = !report.stoppedEarly
    }

    /// Saves a batch's samples and workouts in the writer's transaction, counting them.
    private func save(_ b: ParsedBatches.Batch, with w: StoreWriter, into report: inout ImportReport) throws {
        if !b.samples.isEmpty { report.summary.add(try w.insertImported(b.samples)) }
        for workout in b.workouts {
            if try w.saveWorkout(workout) { report.workoutsInserted += 1 } else { report.workoutDuplicates += 1 }
        }
    }

    /// After a run that finished: the failure to exit with when bad records were skipped (every
    /// good one is saved; exit 65 so scripts notice), nil when there were none.
    package func skippedRecordsFailure(_ report: ImportReport) -> CLIFailure? {
        report.bad.first.map {
            CLIFailure("\(report.bad.count) bad \(recordWord)(s) in \(path) were skipped (first: \(recordWord) \($0.number)); the other \(recordWord)s were saved.",
                       code: .dataError)
        }
    }

    /// The summary line for people: `imported FILE: 3 inserted, …; 1 bad line(s) skipped`.
    package func summaryLine(_ report: ImportReport) -> String {
        let workouts = report.workoutsInserted + report.workoutDuplicates == 0 ? ""
            : "; workouts: \(report.workoutsInserted) inserted, \(report.workoutDuplicates) duplicate(s)"
        return "imported \(path): \(report.summary)\(workouts)\(report.bad.isEmpty ? "" : "; \(report.bad.count) bad \(recordWord)(s) skipped")"
    }

    /// `--all-or-nothing` found a bad record: the transaction rolls back.
    private struct Refused: Error {}

    /// The sentence for a save that failed part-way: what is committed, what is not, how to go on.
    private func savedSoFar(_ p: ImportReport, failedFrom first: Int, through last: Int, because e: StoreError) -> String {
        let saved = p.committedThrough == 0
            ? "nothing from \(path) was saved"
            : "\(recordWord)s 1–\(p.committedThrough) of \(path) are saved (\(p.summary))"
        let why: String
        switch e.writeFailure {
        case .diskFull: why = "the disk is full"
        case .busy: why = "the health store is locked by another writer"
        default: why = "\(e)".trimmingCharacters(in: CharacterSet(charactersIn: "."))
        }
        let from = allOrNothing ? 1 : first
        return "importing stopped at \(recordWord)s \(from)–\(last) because \(why): \(saved); \(recordWord)s from \(from) on were not saved. "
            + "Once that is fixed, run the same import again (\(recordWord)s already saved are recognised and not stored twice)"
            + (p.committedThrough > 0 && path != "-" && !array ? ", or import only the rest: tail -n +\(from) \(path) | healthgate import --jsonl -." : ".")
    }
}

/// What an import has done so far: the summary printed (and in JSON) in every outcome.
package struct ImportReport {
    /// A JSON array (records are elements) rather than JSON lines.
    package let array: Bool
    /// What the saves did.
    package var summary = SaveSummary()
    /// Workouts stored, and workouts whose UUID was stored already.
    package var workoutsInserted = 0, workoutDuplicates = 0
    /// The records skipped: number (line or element), the line it starts on, why.
    package var bad: [(number: Int, line: Int, error: String)] = []
    /// Records (lines or elements) read.
    package var read = 0
    /// The last record whose sample is committed (every record up to it is saved or skipped).
    package var committedThrough = 0
    /// The whole file was read and saved.
    package var complete = false
    /// A JSON array broke off: nothing after the break was read.
    package var stoppedEarly = false

    /// An empty report for a file of JSON lines, or a JSON array when `array`.
    package init(array: Bool) { self.array = array }

    /// `import --json`'s object: the counts, the skipped records, how far it got, and `error`
    /// (the sentence the command exits with, or null).
    package func jsonObject(error: String?) -> [String: Any] {
        var o: [String: Any] = ["inserted": summary.inserted, "replaced": summary.replaced, "ignored": summary.ignored,
                                "duplicates": summary.duplicates, "complete": complete,
                                "workouts": ["inserted": workoutsInserted, "duplicates": workoutDuplicates],
                                "error": error.map { $0 as Any } ?? NSNull()]
        if array {
            o["skippedElements"] = bad.map { ["element": $0.number, "line": $0.line, "error": $0.error] }
            o["elementsRead"] = read
            o["committedThroughElement"] = committedThrough
        } else {
            o["skippedLines"] = bad.map { ["line": $0.number, "error": $0.error] }
            o["linesRead"] = read
            o["committedThroughLine"] = committedThrough
        }
        return o
    }
}
