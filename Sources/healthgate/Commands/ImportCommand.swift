import ArgumentParser
import Foundation
import HealthModel
import HealthStore
import ModuleExitCodes

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

            Examples:
              healthgate import --jsonl steps.jsonl
              healthgate samples --json --db old.sqlite > all.json && healthgate import --json-array all.json
            """)

    @OptionGroup var store: StoreLocation

    @Option(help: ArgumentHelp("The JSON-lines file ('-' for standard input).", valueName: "file"))
    var jsonl: String?

    @Option(name: .customLong("json-array"),
            help: ArgumentHelp("A JSON array of samples, as 'samples --json' prints it ('-' for standard input).", valueName: "file"))
    var jsonArray: String?

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
        switch (jsonl, jsonArray) {
        case (nil, nil):
            throw CLIFailure("import needs a file: --jsonl FILE (one sample per line) or --json-array FILE (a JSON array, as 'samples --json' prints).", code: .usage)
        case (.some, .some):
            throw CLIFailure("--jsonl and --json-array cannot be used together: import one file at a time.", code: .usage)
        default: break
        }
    }

    @Flag(help: "Print the summary as JSON.")
    var json = false

    /// The file named, and whether it is an array.
    private var path: String { jsonl ?? jsonArray ?? "-" }
    private var isArray: Bool { jsonArray != nil }
    /// What a record of this file is called in messages.
    private var recordWord: String { isArray ? "element" : "line" }

    func run() throws {
        try reporting {
            try checkFileOptions()
            var p = Progress(array: isArray)
            do {
                try importFile(&p)
            } catch {
                let (message, code) = ExitCodeMapping.describe(error)
                if json { try JSONOutput.emit(p.object(error: message)) }
                throw CLIFailure(message, code: code)
            }
            let badLines = p.bad.first.map {
                "\(p.bad.count) bad \(recordWord)(s) in \(path) were skipped (first: \(recordWord) \($0.number)); the other \(recordWord)s were saved."
            }
            if json {
                try JSONOutput.emit(p.object(error: badLines))
            } else {
                print("imported \(path): \(p.summary)\(p.bad.isEmpty ? "" : "; \(p.bad.count) bad \(recordWord)(s) skipped")")
            }
            if let badLines { throw CLIFailure(badLines, code: .dataError) }
        }
    }

    /// What an import has done so far: the summary printed (and in JSON) in every outcome.
    struct Progress {
        /// A JSON array (records are elements) rather than JSON lines.
        let array: Bool
        var summary = SaveSummary()
        var bad: [(number: Int, line: Int, error: String)] = []
        /// Records (lines or elements) read.
        var read = 0
        /// The last record whose sample is committed (every record up to it is saved or skipped).
        var committedThrough = 0
        var complete = false
        /// A JSON array broke off: nothing after the break was read.
        var stoppedEarly = false

        init(array: Bool) { self.array = array }

        func object(error: String?) -> [String: Any] {
            var o: [String: Any] = ["inserted": summary.inserted, "replaced": summary.replaced, "ignored": summary.ignored,
                                    "duplicates": summary.duplicates, "complete": complete,
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

    /// `--all-or-nothing` found a bad record: the transaction rolls back.
    private struct Refused: Error {}

    private func importFile(_ p: inout Progress) throws {
        let what = isArray ? "the JSON array file" : "the JSON-lines file"
        let input = try ImportInput(path: path, what: what)
        defer { input.close() }
        let db = try store.open()
        var stream = SampleStream(input: input, path: path, what: what, array: isArray, registry: .standard)
        defer { stream.close() }
        var pending: [QuantitySample] = []
        pending.reserveCapacity(min(batch, 65_536))
        var firstPending = 0

        if allOrNothing {
            // One transaction for the whole file: nothing is kept if a record is bad or saving
            // fails, and memory stays one batch whatever the file's size.
            do {
                try db.write { w in
                    while let (sample, _) = try stream.next(&p) {
                        pending.append(sample)
                        if pending.count >= batch, p.bad.isEmpty {
                            p.summary.add(try w.insertImported(pending))
                            pending.removeAll(keepingCapacity: true)
                        }
                    }
                    if !p.bad.isEmpty { throw Refused() }
                    if !pending.isEmpty { p.summary.add(try w.insertImported(pending)) }
                }
            } catch is Refused {
                p.summary = SaveSummary()
                throw CLIFailure("\(path): \(p.bad.count) bad \(recordWord)(s), first at \(recordWord) \(p.bad[0].number); nothing was imported (--all-or-nothing). Fix the \(recordWord)s above and import again.",
                                 code: .dataError)
            } catch let e as StoreError {
                p.summary = SaveSummary()
                throw CLIFailure(savedSoFar(p, failedFrom: 1, through: p.read, because: e), code: e.sysexit)
            }
            p.committedThrough = p.read
            p.complete = !p.stoppedEarly
            return
        }

        func commit(through record: Int) throws {
            do {
                p.summary.add(try db.write { w in try w.insertImported(pending) })
            } catch let e as StoreError {
                throw CLIFailure(savedSoFar(p, failedFrom: firstPending, through: record, because: e), code: e.sysexit)
            }
            pending.removeAll(keepingCapacity: true)
            p.committedThrough = record
        }
        while let (sample, number) = try stream.next(&p) {
            if pending.isEmpty { firstPending = number }
            pending.append(sample)
            if pending.count >= batch { try commit(through: number) }
        }
        if !pending.isEmpty { try commit(through: p.read) }
        p.committedThrough = p.read
        p.complete = !p.stoppedEarly
    }

    /// The file's good samples, one at a time: records read in blocks, each parsed by the fast
    /// parser or, when it declines, by the Foundation parser (whose message a bad record gets).
    /// Bad records are reported on stderr and counted in the progress.
    private struct SampleStream {
        private enum Records {
            case lines(ByteLines)
            case array(ArrayElements)
        }
        private var records: Records
        private var parser: FastSampleParser
        private var meter: ImportMeter
        let path: String, what: String, array: Bool
        let registry: QuantityTypeRegistry

        init(input: ImportInput, path: String, what: String, array: Bool, registry: QuantityTypeRegistry) {
            records = array ? .array(ArrayElements(fd: input.fd)) : .lines(ByteLines(fd: input.fd))
            parser = FastSampleParser(registry: registry)
            meter = ImportMeter(path: path, total: input.size)
            self.path = path
            self.what = what
            self.array = array
            self.registry = registry
        }

        mutating func close() {
            meter.finish()
            switch records {
            case .lines(var r): r.close(); records = .lines(r)
            case .array(var r): r.close(); records = .array(r)
            }
        }

        /// The next record: its number, the line it starts on, its bytes (valid until the next call).
        private mutating func nextRecord() throws -> (number: Int, line: Int, bytes: UnsafeBufferPointer<UInt8>)? {
            switch records {
            case .lines(var r):
                defer { records = .lines(r); meter.tick(records: r.number, bytes: r.bytesRead) }
                guard let b = try r.next() else { return nil }
                return (r.number, r.number, b)
            case .array(var r):
                defer { records = .array(r); meter.tick(records: r.number, bytes: r.bytesRead) }
                guard let e = try r.next() else { return nil }
                return (e.number, e.line, e.bytes)
            }
        }

        private mutating func skip(_ p: inout Progress, _ number: Int, _ line: Int, _ why: String) {
            p.bad.append((number, line, why))
            meter.clear()
            Console.error(array ? "\(path): element \(number) (line \(line)): skipped: \(why)" : "\(path):\(number): skipped: \(why)")
        }

        /// The next good sample and its record number; nil at the end of the file.
        mutating func next(_ p: inout Progress) throws -> (QuantitySample, Int)? {
            while true {
                let record: (number: Int, line: Int, bytes: UnsafeBufferPointer<UInt8>)?
                do {
                    record = try nextRecord()
                } catch let e as ByteLines.ReadError {
                    throw FileAccess.failure(errno: e.errno, .read, path: path, what: what)
                } catch let e as ArrayElements.StructureError {
                    // Not an array (any more): a bad record, and nothing after it can be read.
                    p.read = e.element
                    p.stoppedEarly = true
                    skip(&p, e.element, e.line, "\(e.reason); nothing after it was read")
                    return nil
                }
                guard let (number, line, bytes) = record else { return nil }
                p.read = number
                if !LineText.isASCII(bytes), String(validating: bytes, as: UTF8.self) == nil {
                    let bad = LineText.firstBadByte(bytes) ?? LineText.BadText(byte: bytes.last ?? 0, offset: bytes.count)
                    skip(&p, number, line, array ? "\(bad)".replacingOccurrences(of: "of the line", with: "of the element") : "\(bad)")
                    continue
                }
                if let s = parser.sample(bytes) { return (s, number) }
                // Not the fast parser's shape (or a bad record): the Foundation parser decides, with its messages.
                let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
                if text.isEmpty, !array { continue }
                do {
                    return (try SampleJSON.sample(fromLine: text, registry: registry), number)
                } catch {
                    skip(&p, number, line, "\(error)")
                }
            }
        }
    }

    /// The sentence for a save that failed part-way: what is committed, what is not, how to go on.
    private func savedSoFar(_ p: Progress, failedFrom first: Int, through last: Int, because e: StoreError) -> String {
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
            + (p.committedThrough > 0 && path != "-" && !isArray ? ", or import only the rest: tail -n +\(from) \(path) | healthgate import --jsonl -." : ".")
    }
}
