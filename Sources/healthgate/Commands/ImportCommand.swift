import ArgumentParser
import Foundation
import HealthStore
import ModuleExitCodes
import SampleImport

/// `healthgate import --jsonl FILE` / `--json-array FILE`.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import samples from a JSON-lines file (one sample per line) or a JSON array.",
        discussion: """
            Each line (--jsonl) or array element (--json-array) is one sample in the shape 'healthgate samples --json' \
            prints (docs/data-model.md): \
            {"type": "stepCount", "value": 1000, "unit": "count", "start": "2026-11-02T08:00:00Z", \
            "end": "2026-11-02T09:00:00Z", "source": "Watch", "device": {"name": "Watch"}, "metadata": {}}. \
            "uuid" is optional: without it the sample's UUID is derived from the sample's content (not the \
            line's spelling), so importing the same file twice stores each sample once. Dates need Z or an \
            offset. The file is UTF-8 (a byte-order mark is skipped), LF or CRLF line ends; blank lines are \
            skipped (docs/input-rules.md). The file is read as a stream: memory stays small whatever its size. \
            On a terminal, progress (samples, samples/s, bytes read) is shown on stderr.

            Bad lines: each one is reported on stderr with its line number and why, and skipped; every \
            good line is saved (in transactions of --batch lines). The command then exits 65 so scripts \
            notice. If saving fails part-way (disk full: exit 74), the message says which lines are saved; \
            running the same import again stores only the rest. --json prints the summary in every outcome. With --all-or-nothing a bad line refuses the whole file and nothing is saved. \
            Use '-' to read standard input. In a JSON array, bad elements are reported and skipped the same way, \
            by element number (and the line it starts on); a file that is not an array at all exits 65.

            --apple-health reads the Health app's export (Profile → Export All Health Data) as a stream, zip or \
            xml, with a progress line; samples and workouts get UUIDs from their content, so importing the same or \
            a newer export again adds only what is new (docs/apple-health.md). Bad records are reported and \
            skipped (exit 65, as bad lines are); a file that is not an export, malformed XML or a damaged zip \
            entry also exits 65, with what was read before the damage saved.

            Examples:
              healthgate import --jsonl steps.jsonl
              healthgate import --apple-health ~/Downloads/export.zip
              healthgate samples --json --db old.sqlite > all.json && healthgate import --json-array all.json
            """)

    @OptionGroup var store: StoreLocation

    @Option(help: ArgumentHelp("The JSON-lines file ('-' for standard input).", valueName: "file"))
    var jsonl: String?

    @Option(name: .customLong("json-array"),
            help: ArgumentHelp("A JSON array of samples, as 'samples --json' prints it ('-' for standard input).", valueName: "file"))
    var jsonArray: String?

    @Option(help: ArgumentHelp("Apple Health's export.zip (or the export.xml in it; '-' reads that XML from standard input): heart rate, resting heart rate, HRV (with beat-to-beat RR), steps, active energy, distance, body mass and workouts (docs/apple-health.md).", valueName: "file"))
    var appleHealth: String?

    @Flag(help: "Refuse the whole file if any line is bad (default: skip bad lines, save the rest).")
    var allOrNothing = false

    @Option(parsing: .unconditional, help: "Lines per transaction (1 or more).")
    var batch = 5000

    func validate() throws {
        if batch < 1 { throw Self.exit(for: CLIFailure("--batch \(batch) is not a number of lines: use 1 or more (default 5000).", code: .usage)) }
    }

    /// Exactly one file option. Checked in `run`, not `validate`: ArgumentParser validates while
    /// it prints `--help`, which would print this sentence under the help.
    private func checkFileOptions() throws {
        switch [jsonl, jsonArray, appleHealth].compactMap({ $0 }).count {
        case 0:
            throw CLIFailure("import needs a file: --jsonl FILE (one sample per line), --json-array FILE (a JSON array, as 'samples --json' prints) or --apple-health export.zip.", code: .usage)
        case 1: break
        default:
            throw CLIFailure("--jsonl, --json-array and --apple-health cannot be used together: import one file at a time.", code: .usage)
        }
    }

    @Flag(help: "Print the summary as JSON.")
    var json = false

    func run() throws {
        try checkFileOptions()
        // The work (streaming, parsing, batches, progress, the sentences) is SampleImport's.
        if let appleHealth {
            let job = AppleHealthImport(path: appleHealth)
            var report = AppleHealthImport.Report()
            try finish(report: &report, work: { try job.run(into: &$0, openStore: store.open) }, json: { $0.jsonObject(error: $1) },
                       skipped: { $0.skippedRecordsFailure(path: appleHealth) }, lines: { $0.lines(path: appleHealth) })
        } else {
            let job = FileImport(path: jsonl ?? jsonArray ?? "-", array: jsonArray != nil, allOrNothing: allOrNothing, batch: batch)
            var report = ImportReport(array: job.array)
            try finish(report: &report, work: { try job.run(into: &$0, openStore: store.open) }, json: { $0.jsonObject(error: $1) },
                       skipped: job.skippedRecordsFailure, lines: { [job.summaryLine($0)] })
        }
    }

    /// Runs an import's `work` and prints its report (text or `--json`) in every outcome; a
    /// failure exits with its sentence and code, skipped records with 65 after the summary.
    private func finish<Report>(report: inout Report, work: (inout Report) throws -> Void, json object: (Report, String?) -> [String: Any],
                                skipped: (Report) -> CLIFailure?, lines: (Report) -> [String]) throws {
        do {
            try work(&report)
        } catch {
            let (message, code) = ExitCodeMapping.describe(error)
            if json { try JSONOutput.emit(object(report, message)) }
            throw CLIFailure(message, code: code)
        }
        let failure = skipped(report)
        if json { try JSONOutput.emit(object(report, failure?.message)) } else { lines(report).forEach { print($0) } }
        if let failure { throw failure }
    }
}
