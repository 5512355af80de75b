import ArgumentParser
import Foundation
import HealthModel
import HealthStore

/// `healthgate watch`: print samples as they are committed, by any process.
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print each newly committed sample (and deletion) as it lands, whoever writes it.",
        discussion: """
            Works next to 'healthgate run', 'import', 'add' or any other writer, in another terminal \
            or as another user who may read the database file: it opens the store read-only and \
            never takes the straps or the write lock (docs/store.md, "Open modes"). Started before \
            the store exists, it waits for a writer to create it (it never creates one) and then \
            prints everything from its beginning. It checks the database's change counter (SQLite's data_version) every \
            --interval-ms milliseconds and reads what changed through the change feed, so nothing \
            is missed or printed twice, even across writer restarts (docs/change-feed.md).

            Starts with changes committed after it starts; --from-start prints the whole history \
            first, --anchor A resumes after a 'changes' answer or a previous watch. The anchor it \
            starts from is noted on stderr.

            Output: one line per added sample ('+') or deletion ('-'); with --json, one line per \
            committed batch: {"samples": […], "deleted": [uuid…], "anchor": "…", "hasMore": false} \
            in the shape of 'changes --json'. Ctrl-C stops.

            Example:
              healthgate watch --type heartRate
              healthgate watch --json | jq -c '.samples[] | {start, value}'
            """)

    @OptionGroup var store: StoreLocation

    @Option(help: "Only this quantity type (repeatable; default: every type).")
    var type: [String] = []

    @Option(help: ArgumentHelp("Resume after this anchor.", valueName: "anchor"))
    var anchor: String?

    @Flag(help: "Print the whole history first, then new changes.")
    var fromStart = false

    @Option(help: ArgumentHelp("How often to check for commits, in milliseconds (5–1000).", valueName: "ms"))
    var intervalMs = 20

    @Flag(help: "Print one JSON object per committed batch.")
    var json = false

    func validate() throws {
        if anchor != nil && fromStart { throw ValidationError("--anchor and --from-start exclude each other.") }
        if !(5...1000).contains(intervalMs) { throw ValidationError("--interval-ms must be between 5 and 1000.") }
    }

    func run() throws {
        let types = try type.map(InputValues.type)
        let start: ObservationStart = try anchor.map { .anchor(try ChangeAnchor(string: $0)) }
            ?? (fromStart ? .beginning : .now)
        let observer = try ChangeObserver.waitingForStore(path: store.path, types: types, start: start, poll: .milliseconds(intervalMs)) {
            Console.note("watching for the health store at \(store.path) to be created (watch never creates one) — Ctrl-C stops")
        }
        observer.interval = .milliseconds(intervalMs)
        Console.note("watching \(store.path) from anchor \(observer.anchor.map(\.description) ?? "(the beginning)") — Ctrl-C stops")
        try observer.run(while: { true }) { change in
            if json {
                try JSONOutput.emit(try change.jsonObject())
            } else {
                ChangeOutput.lines(change).forEach { print($0) }
                fflush(nil)
            }
        }
    }
}
