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
            "uuid" is optional: without it the sample's UUID is derived from the sample's content (not the \
            line's spelling), so importing the same file twice stores each sample once. Dates need Z or an \
            offset. The file is UTF-8 (a byte-order mark is skipped), LF or CRLF line ends; blank lines are \
            skipped (docs/input-rules.md).

            Bad lines: each one is reported on stderr with its line number and why, and skipped; every \
            good line is saved (in transactions of --batch lines). The command then exits 65 so scripts \
            notice. If saving fails part-way (disk full: exit 74), the message says which lines are saved; \
            running the same import again stores only the rest. --json prints the summary in every outcome. With --all-or-nothing a bad line refuses the whole file and nothing is saved. \
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
            var p = Progress()
            do {
                try importLines(&p)
            } catch {
                let (message, code) = ExitCodeMapping.describe(error)
                if json { JSONOutput.emit(p.object(error: message)) }
                throw CLIFailure(message, code: code)
            }
            let badLines = p.bad.first.map { "\(p.bad.count) bad line(s) in \(jsonl) were skipped (first: line \($0.line)); the other lines were saved." }
            if json {
                JSONOutput.emit(p.object(error: badLines))
            } else {
                print("imported \(jsonl): \(p.summary)\(p.bad.isEmpty ? "" : "; \(p.bad.count) bad line(s) skipped")")
            }
            if let badLines { throw CLIFailure(badLines, code: .dataError) }
        }
    }

    /// What an import has done so far: the summary printed (and in JSON) in every outcome.
    struct Progress {
        var summary = SaveSummary()
        var bad: [(line: Int, error: String)] = []
        var linesRead = 0
        /// The last line whose sample is committed (every line up to it is saved or skipped).
        var committedThroughLine = 0
        var complete = false

        func object(error: String?) -> [String: Any] {
            ["inserted": summary.inserted, "replaced": summary.replaced, "ignored": summary.ignored,
             "duplicates": summary.duplicates, "skippedLines": bad.map { ["line": $0.line, "error": $0.error] },
             "linesRead": linesRead, "committedThroughLine": committedThroughLine, "complete": complete,
             "error": error.map { $0 as Any } ?? NSNull()]
        }
    }

    private func importLines(_ p: inout Progress) throws {
        let bytes = try FileAccess.read(jsonl, what: "the JSON-lines file")
        let db = try store.open()
        var pending: [QuantitySample] = []
        var firstPendingLine = 0
        func commit(through line: Int) throws {
            do {
                p.summary.add(try db.save(pending))
            } catch let e as StoreError {
                throw CLIFailure(savedSoFar(p, failedFrom: firstPendingLine, through: line, because: e), code: e.sysexit)
            }
            pending.removeAll(keepingCapacity: true)
            p.committedThroughLine = line
        }
        for line in TextLines(bytes) {
            p.linesRead = line.number
            let text: String
            switch line.text {
            case .success(let t): text = t.trimmingCharacters(in: .whitespaces)
            case .failure(let why):
                p.bad.append((line.number, "\(why)"))
                Console.error("\(jsonl):\(line.number): skipped: \(why)")
                continue
            }
            if text.isEmpty { continue }
            do {
                let sample = try SampleJSON.sample(fromLine: text)
                if pending.isEmpty { firstPendingLine = line.number }
                pending.append(sample)
            } catch {
                p.bad.append((line.number, "\(error)"))
                Console.error("\(jsonl):\(line.number): skipped: \(error)")
                continue
            }
            if !allOrNothing, pending.count >= max(1, batch) { try commit(through: line.number) }
        }
        if allOrNothing, !p.bad.isEmpty {
            throw CLIFailure("\(jsonl): \(p.bad.count) bad line(s), first at line \(p.bad[0].line); nothing was imported (--all-or-nothing). Fix the lines above and import again.",
                             code: .dataError)
        }
        if !pending.isEmpty { try commit(through: p.linesRead) }
        p.committedThroughLine = p.linesRead
        p.complete = true
    }

    /// The sentence for a save that failed part-way: what is committed, what is not, how to go on.
    private func savedSoFar(_ p: Progress, failedFrom first: Int, through last: Int, because e: StoreError) -> String {
        let saved = p.committedThroughLine == 0
            ? "nothing from \(jsonl) was saved"
            : "lines 1–\(p.committedThroughLine) of \(jsonl) are saved (\(p.summary))"
        let why: String
        switch e.writeFailure {
        case .diskFull: why = "the disk is full"
        case .busy: why = "the health store is locked by another writer"
        default: why = "\(e)".trimmingCharacters(in: CharacterSet(charactersIn: "."))
        }
        let from = allOrNothing ? 1 : first
        return "importing stopped at lines \(from)–\(last) because \(why): \(saved); lines from \(from) on were not saved. "
            + "Once that is fixed, run the same import again (lines already saved are recognised and not stored twice)"
            + (p.committedThroughLine > 0 && jsonl != "-" ? ", or import only the rest: tail -n +\(from) \(jsonl) | healthgate import --jsonl -." : ".")
    }
}
