import ArgumentParser
import Foundation
import HealthModel
import HealthStore

/// `healthgate watch`: print samples and workouts as they are committed, by any process.
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print each newly committed sample, deletion and workout change as it lands, whoever writes it.",
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

            Workouts started, paused, resumed, ended or deleted by anyone ('workout start' in \
            another terminal, 'live --workout', an import) are printed too, each as it is then; \
            --type workout selects them (alone, or beside quantity types), and a --type list \
            without it leaves them out. They are live: --anchor resumes the samples only \
            ('workout changes --anchor' catches workouts up); workouts in progress are printed \
            first; --from-start prints every workout.

            Output: one line per added sample ('+'), deletion ('-') or workout ('*': its state, \
            start, activity, end when ended); with --json, one line per committed batch: \
            {"samples": […], "deleted": [uuid…], "anchor": "…", "hasMore": false} in the shape of \
            'changes --json', and for workouts {"workouts": [records with "state"], \
            "deletedWorkouts": [uuid…], "workoutAnchor": "…"} ('workout changes' takes that anchor). \
            Ctrl-C stops.

            Example:
              healthgate watch --type heartRate --type workout
              healthgate watch --json | jq -c '.samples[]? | {start, value}'
            """)

    @OptionGroup var store: StoreLocation

    @Option(help: "Only this quantity type, or 'workout' for workouts (repeatable; default: every type and workouts).")
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
        let quantityNames = type.filter { $0 != Self.workoutType }
        let types = try quantityNames.map(InputValues.type)
        // No --type: samples and workouts; a list: what it names.
        let samplesWanted = type.isEmpty || !quantityNames.isEmpty
        let workoutsWanted = type.isEmpty || type.contains(Self.workoutType)
        let start: ObservationStart = try anchor.map { .anchor(try ChangeAnchor(string: $0)) }
            ?? (fromStart ? .beginning : .now)
        let observer = try ChangeObserver.waitingForStore(path: store.path, types: types, start: start, poll: .milliseconds(intervalMs)) {
            Console.note("watching for the health store at \(store.path) to be created (watch never creates one) — Ctrl-C stops")
        }
        observer.interval = .milliseconds(intervalMs)
        var workouts = WorkoutFollower(store: observer.store, position: fromStart ? 0 : try observer.store.workoutPosition())
        // Workouts already in progress are shown first, as the live page shows them: a coach
        // starting watch mid-session sees the session (--from-start shows every workout anyway).
        if workoutsWanted && !fromStart { try workouts.printInProgress(json: json) }
        Console.note("watching \(store.path) from anchor \(observer.anchor.map(\.description) ?? "(the beginning)")\(workoutsWanted ? " and its workouts" : "") — Ctrl-C stops")
        let pause = Double(intervalMs) / 1000
        while true {
            var delivered = false
            do {
                if samplesWanted {
                    delivered = try observer.poll { change in
                        if json {
                            try JSONOutput.emit(try change.jsonObject())
                        } else {
                            ChangeOutput.lines(change).forEach { print($0) }
                            fflush(nil)
                        }
                    }
                }
                if workoutsWanted, try workouts.poll(json: json) { delivered = true }
            } catch let e as StoreError where e.kind == .busy {
                observer.lookAgain()   // a writer recovering the WAL: the same changes come next tick
                workouts.lookAgain()
            }
            if !delivered { Thread.sleep(forTimeInterval: pause) }
        }
    }

    /// What `--type` takes for workouts (as `/v1/live?type=workout`).
    static let workoutType = "workout"
}

/// `watch`'s follower of the workouts' change feed: checks at each commit (SQLite's
/// `data_version`), prints each changed workout as it is then, and deletions.
private struct WorkoutFollower {
    let store: HealthStore
    var position: Int64
    private var lastVersion: Int64?

    init(store: HealthStore, position: Int64) {
        self.store = store
        self.position = position
    }

    /// Prints the workouts in progress now, as a page of changes up to ``position`` would.
    func printInProgress(json: Bool) throws {
        let running = try store.workoutsInProgress()
        guard !running.isEmpty else { return }
        try print(WorkoutChanges(workouts: running, deleted: [], position: position, hasMore: false), json: json)
    }

    /// Forgets the commit last seen, so the next ``poll(json:)`` reads the feed.
    mutating func lookAgain() { lastVersion = nil }

    /// Prints what changed since ``position`` when anything was committed since the last call.
    /// - Returns: true when something was printed.
    mutating func poll(json: Bool) throws -> Bool {
        let version = try store.dataVersion()
        guard version != lastVersion else { return false }
        var printed = false
        while true {
            let page = try store.workoutChanges(after: position, limit: 200)
            if !page.workouts.isEmpty || !page.deleted.isEmpty {
                try print(page, json: json)
                printed = true
            }
            position = page.position
            if !page.hasMore { break }
        }
        lastVersion = version
        return printed
    }

    /// Prints a page: one JSON line, or a line per deletion and workout.
    private func print(_ page: WorkoutChanges, json: Bool) throws {
        if json {
            let anchor = "w1:\(try store.currentAnchor().storeID):\(page.position)"
            try JSONOutput.emit([
                "workouts": page.workouts.map { w -> [String: Any] in
                    var o = WorkoutRecordJSON.object(w)
                    o["state"] = w.state.rawValue
                    return o
                },
                "deletedWorkouts": page.deleted.map { $0.uuidString.lowercased() },
                "workoutAnchor": anchor,
            ] as [String: Any])
            return
        }
        for u in page.deleted { Swift.print("- deleted  workout  \(u.uuidString.lowercased())") }
        for w in page.workouts {
            let end = w.end.map { "  ended \(ISO8601.string($0))" } ?? ""
            Swift.print("* workout \(w.state.rawValue)  \(ISO8601.string(w.start))  \(w.activity.rawValue)\(end)  "
                        + TerminalText.visible(w.source.name) + "  \(w.uuid.uuidString.lowercased())")
        }
        fflush(nil)
    }
}
