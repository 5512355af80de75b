import ArgumentParser
import Foundation
import HealthModel
import HealthStore

/// `healthgate import --jsonl FILE`.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import samples from a JSON-lines file (one sample per line).",
        discussion: """
            Each line is one sample in the shape 'healthgate samples --json' prints (docs/data-model.md): \
            {"type": "stepCount", "value": 1000, "unit": "count", "start": "2026-11-02T08:00:00Z", \
            "end": "2026-11-02T09:00:00Z", "source": "Watch", "device": {"name": "Watch"}, "metadata": {}}. \
            "uuid" is optional: without it the sample's UUID is derived from the line, so importing the same \
            file twice stores each sample once. Blank lines are skipped.

            Bad lines: each one is reported on stderr with its line number and why, and skipped; every \
            good line is saved (in transactions of --batch lines). The command then exits 65 so scripts \
            notice. With --all-or-nothing a bad line refuses the whole file and nothing is saved. \
            Use '-' to read standard input.

            Example:
              healthgate import --jsonl steps.jsonl
            """)

    @OptionGroup var store: StoreLocation

    @Option(help: ArgumentHelp("The JSON-lines file ('-' for standard input).", valueName: "file"))
    var jsonl: String

    @Flag(help: "Refuse the whole file if any line is bad (default: skip bad lines, save the rest).")
    var allOrNothing = false

    @Option(parsing: .unconditional, help: "Lines per transaction (1 or more).")
    var batch = 5000

    func validate() throws {
        if batch < 1 { throw Self.exit(for: CLIFailure("--batch \(batch) is not a number of lines: use 1 or more (default 5000).", code: .usage)) }
    }

    @Flag(help: "Print the summary as JSON.")
    var json = false

    func run() throws {
        try reporting {
            let text: String
            do {
                if jsonl == "-" {
                    text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
                } else {
                    text = try String(contentsOfFile: jsonl, encoding: .utf8)
                }
            } catch {
                throw CLIFailure("cannot read \(jsonl) (\(error.localizedDescription.trimmingCharacters(in: CharacterSet(charactersIn: ".")))); check the path.",
                                 code: .noInput)
            }
            let db = try store.open()
            var pending: [QuantitySample] = []
            var summary = SaveSummary()
            var bad: [(Int, String)] = []
            var lineNumber = 0
            for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
                lineNumber += 1
                let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
                if line.isEmpty { continue }
                do {
                    pending.append(try SampleJSON.sample(fromLine: line))
                } catch {
                    bad.append((lineNumber, "\(error)"))
                    Console.error("\(jsonl):\(lineNumber): skipped: \(error)")
                    continue
                }
                if !allOrNothing, pending.count >= max(1, batch) {
                    summary.add(try db.save(pending))
                    pending.removeAll(keepingCapacity: true)
                }
            }
            if allOrNothing, !bad.isEmpty {
                throw CLIFailure("\(jsonl): \(bad.count) bad line(s), first at line \(bad[0].0); nothing was imported (--all-or-nothing). Fix the lines above and import again.",
                                 code: .dataError)
            }
            if !pending.isEmpty { summary.add(try db.save(pending)) }
            if json {
                JSONOutput.emit(["inserted": summary.inserted, "replaced": summary.replaced, "ignored": summary.ignored,
                                 "duplicates": summary.duplicates, "skippedLines": bad.map { ["line": $0.0, "error": $0.1] }])
            } else {
                print("imported \(jsonl): \(summary)\(bad.isEmpty ? "" : "; \(bad.count) bad line(s) skipped")")
            }
            if !bad.isEmpty {
                throw CLIFailure("\(bad.count) bad line(s) in \(jsonl) were skipped (first: line \(bad[0].0)); the other lines were saved.",
                                 code: .dataError)
            }
        }
    }
}
