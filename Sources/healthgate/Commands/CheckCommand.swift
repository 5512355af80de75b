import ArgumentParser
import Foundation
import HealthModel
import HealthStore
import Sysexits

/// `healthgate check`: is the store intact (after a power cut, on a worn SD card)?
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check that the store's file is intact (after a power cut, or on a worn SD card).",
        discussion: """
            Runs SQLite's integrity check over the whole store as readers see it (the main file \
            with its write-ahead log), read-only: it never writes the store, so it may run beside \
            `healthgate run`. A power cut loses at most the last few seconds that were not yet \
            synced (docs/operations.md, "SD cards"), never the store: this is how to confirm it.

            Exit codes: 0 intact; 65 damaged (SQLite's findings are printed; restore the file from a \
            backup, docs/operations.md "Backups", or salvage what is readable with \
            `sqlite3 STORE .recover`); 66 no store at that path.

            Output: one line, or with --json {"path", "ok", "problems", "schema", "samples", \
            "walBytes", "seconds"}.

            Examples:
              healthgate check
              sudo -u healthgate healthgate check --db /var/lib/healthgate/health.sqlite --json
            """)

    @OptionGroup var store: StoreLocation

    @Flag(help: "SQLite's quick_check: every page is read, but indexes are not compared with their tables (faster on a large store).")
    var quick = false

    @Flag(help: "Print a JSON object.")
    var json = false

    func run() throws {
        let started = Date()
        let db = try store.openForReading()
        let problems = try db.integrityProblems(quick: quick)
        let schema = try db.schemaVersion
        // Counted only in an intact store: a damaged index could make the count itself fail.
        let samples = problems.isEmpty ? try db.count(SampleQuery()) : nil
        let wal = ((try? FileManager.default.attributesOfItem(atPath: store.path + "-wal"))?[.size] as? NSNumber)?.intValue ?? 0
        let seconds = (Date().timeIntervalSince(started) * 1000).rounded() / 1000
        if json {
            try JSONOutput.emit(["path": store.path, "ok": problems.isEmpty, "problems": problems, "schema": schema,
                                 "samples": samples.map { $0 as Any } ?? NSNull(), "walBytes": wal, "seconds": seconds] as [String: Any])
        } else if problems.isEmpty {
            print("The health store \(store.path) is intact (SQLite's \(quick ? "quick_check" : "integrity_check"): ok; "
                  + "schema \(schema), \(samples ?? 0) samples, write-ahead log \(wal) bytes; checked in \(seconds) s).")
        }
        if !problems.isEmpty {
            let listed = problems.prefix(10).map { "  \($0)" }.joined(separator: "\n")
            throw CLIFailure("""
                the health store \(store.path) is damaged: SQLite's \(quick ? "quick_check" : "integrity_check") found
                \(listed)\(problems.count > 10 ? "\n  … (\(problems.count - 10) more)" : "")
                Stop what writes it, then restore it from a backup (docs/operations.md, "Backups") or salvage what is \
                readable: sqlite3 \(store.path) .recover | sqlite3 recovered.sqlite
                """, code: .dataError)
        }
    }
}
