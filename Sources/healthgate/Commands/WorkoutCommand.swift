import ArgumentParser
import Foundation
import HealthModel
import HealthStore
import WorkoutFiles
import WorkoutSummary

/// `healthgate workout …`: mark a workout's start, pauses and end; show or delete one.
struct WorkoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workout",
        abstract: "Start, pause, resume, stop, show or delete a workout (HealthKit's HKWorkout).",
        discussion: """
            A workout is an interval you mark; the gateway never guesses one. Its totals — duration without \
            pauses, active energy, steps, distance, heart rate, time in five heart-rate zones — are computed from \
            the samples stored inside it, so deleting a workout keeps its samples. With --device, only those \
            devices' samples count (each type from the first listed device that has it); without, every device's, \
            merged by source priority. Zones need 'healthgate profile set' (docs/workouts.md).

            Examples:
              healthgate workout start --activity running --device "Polar H10"
              healthgate workout pause; healthgate workout resume
              healthgate workout stop
              healthgate workout show 019a4a5c-… --json
              healthgate workout export 019a4a5c-… --format fit --output run.fit
            """,
        subcommands: [Start.self, Pause.self, Resume.self, Stop.self, Show.self, Delete.self, Export.self, Changes.self])

    /// The source of workouts marked on the command line.
    static let source = Source(name: "HealthGate", identifier: "org.healthgate.workout")

    /// Which workout in progress a command means: `uuid` when given, else the only one in
    /// progress (of `device`, when given).
    static func inProgress(_ store: HealthStore, uuid: String?, device: String?) throws -> Workout {
        if let uuid { return try stored(store, uuid) }
        let open = try store.workoutsInProgress(device: device)
        guard open.count == 1, let w = open.first else {
            if open.isEmpty { throw CLIFailure("no workout is in progress\(device.map { " for \($0)" } ?? ""): start one with 'healthgate workout start --activity running'.", code: .usage) }
            throw CLIFailure("\(open.count) workouts are in progress (\(open.map { "\($0.uuid.uuidString) with \($0.devices.joined(separator: ", "))" }.joined(separator: "; "))): name one by its UUID or --device.", code: .usage)
        }
        return w
    }

    static func stored(_ store: HealthStore, _ text: String) throws -> Workout {
        guard let u = UUID(uuidString: text) else { throw CLIFailure("'\(text)' is not a workout UUID ('healthgate workouts' lists them).", code: .usage) }
        guard let w = try store.workout(uuid: u) else { throw CLIFailure("no workout \(text) in this store ('healthgate workouts' lists them).", code: .dataError) }
        return w
    }

    /// Starts a workout of `activity` over `devices` now (`live --workout`).
    static func begin(_ db: HealthStore, activity: String, devices: [String], at: Date = Date()) throws -> Workout {
        guard let type = WorkoutActivityType(name: activity) else {
            throw CLIFailure("--activity '\(activity)' is not one of HealthKit's activity types: use running, cycling, walking, … or other (docs/workouts.md).", code: .usage)
        }
        let w = Workout(uuid: UUID(), activity: type, start: at, devices: devices, source: source)
        try db.saveWorkout(w)
        return w
    }

    /// Ends `w` now and prints its totals (`live --workout`): text, or a JSON line with
    /// `"event": "workout"`.
    static func finish(_ db: HealthStore, _ w: Workout, json: Bool) throws {
        let s = try WorkoutSummary(try db.updateWorkout(uuid: w.uuid, end: Date()), store: db, characteristics: try db.characteristics())
        if json {
            var o = s.json()
            o["event"] = "workout"
            return try JSONOutput.emit(o)
        }
        for line in s.lines(timeZone: .current) { print(line) }
    }

    /// ``finish(_:_:json:)`` at the end of a session, whatever ended it: a failure to end the
    /// workout is a note saying how to end it by hand.
    static func finishReporting(_ path: String, _ w: Workout, json: Bool) {
        do { try finish(try HealthStore(path: path), w, json: json) } catch {
            Console.note("the workout \(w.uuid.uuidString) could not be ended (\(error)): end it with 'healthgate workout stop \(w.uuid.uuidString)'")
        }
    }

    static func date(_ text: String?) throws -> Date {
        try text.map { try InputValues.date($0, option: "--at", timeZone: nil) } ?? Date()
    }

    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start a workout now (or --at a past time).")
        @OptionGroup var store: StoreLocation
        @Option(help: ArgumentHelp("HealthKit's activity type: running, cycling, walking, hiking, swimming, rowing, traditionalStrengthTraining, highIntensityIntervalTraining, yoga, other, … (docs/workouts.md lists all).", valueName: "type"))
        var activity: String
        @Option(help: ArgumentHelp("Only this device's samples count (name, local identifier or alias); repeatable, first listed first.", valueName: "name"))
        var device: [String] = []
        @Option(help: ArgumentHelp("When it started (ISO 8601; default now).", valueName: "date")) var at: String?
        @Flag(help: "Print the workout as JSON.") var json = false

        func run() throws {
            let w = try WorkoutCommand.begin(try store.open(), activity: activity, devices: device, at: try WorkoutCommand.date(at))
            if json { return try JSONOutput.emit(w.json()) }
            print("started \(w.activity.rawValue) workout \(w.uuid.uuidString) at \(Table.time(w.start, in: .current))\(device.isEmpty ? "" : " (\(device.joined(separator: ", ")))")")
        }
    }

    /// The options of pause, resume and stop: which workout, and when.
    struct Target: ParsableArguments {
        @Argument(help: ArgumentHelp("The workout (default: the one in progress).", valueName: "uuid")) var uuid: String?
        @Option(help: ArgumentHelp("The workout in progress that counts this device.", valueName: "name")) var device: String?
        @Option(help: ArgumentHelp("When (ISO 8601; default now).", valueName: "date")) var at: String?

        /// Adds a pause or resume to the workout meant, and says so.
        func add(_ kind: WorkoutEvent.Kind, to store: StoreLocation) throws {
            let db = try store.open()
            let w = try WorkoutCommand.inProgress(db, uuid: uuid, device: device)
            try db.updateWorkout(uuid: w.uuid, adding: WorkoutEvent(kind, at: try WorkoutCommand.date(at)))
            print("\(kind == .pause ? "paused" : "resumed") workout \(w.uuid.uuidString)")
        }
    }

    struct Pause: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Pause the workout in progress: what follows counts only after 'resume'.")
        @OptionGroup var store: StoreLocation
        @OptionGroup var target: Target
        func run() throws { try target.add(.pause, to: store) }
    }

    struct Resume: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Resume a paused workout.")
        @OptionGroup var store: StoreLocation
        @OptionGroup var target: Target
        func run() throws { try target.add(.resume, to: store) }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End the workout in progress and print its totals.")
        @OptionGroup var store: StoreLocation
        @OptionGroup var target: Target
        @Flag(help: "Print the workout and its totals as JSON.") var json = false
        func run() throws {
            let db = try store.open()
            let w = try WorkoutCommand.inProgress(db, uuid: target.uuid, device: target.device)
            let ended = try db.updateWorkout(uuid: w.uuid, end: try WorkoutCommand.date(target.at))
            try WorkoutCommand.report(try WorkoutSummary(ended, store: db, characteristics: try db.characteristics()), json: json)
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A workout's totals, heart-rate zones and heart rate per minute.")
        @OptionGroup var store: StoreLocation
        @Argument(help: ArgumentHelp("The workout ('healthgate workouts' lists them).", valueName: "uuid")) var uuid: String
        @Flag(help: "Print JSON (with perMinute).") var json = false
        func run() throws {
            let db = try store.openForReading()
            let s = try WorkoutSummary(try WorkoutCommand.stored(db, uuid), store: db, characteristics: try db.characteristics(), perMinute: true)
            try WorkoutCommand.report(s, json: json)
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a workout as a FIT, TCX or GPX file for Garmin Connect, Strava, GoldenCheetah, ….",
            discussion: """
                FIT: records of heart rate per second, RR intervals in hrv messages (gaps kept), timer events at the \
                pauses, lap, session and activity with the totals. TCX: one lap of trackpoints with heart rate. GPX: \
                needs positions, which a strap does not record: a strap's workout is refused with a pointer to TCX or \
                FIT (docs/workout-files.md).
                """)
        @OptionGroup var store: StoreLocation
        @Argument(help: ArgumentHelp("The workout.", valueName: "uuid")) var uuid: String
        @Option(help: "fit, tcx or gpx.") var format: String
        @Option(help: ArgumentHelp("Write to this file (all or nothing); default: standard output, unless it is a terminal.", valueName: "file"))
        var output: String?

        func run() throws {
            guard let f = WorkoutFileFormat(rawValue: format.lowercased()) else {
                throw CLIFailure("--format '\(format)' is not a workout file format: use fit, tcx or gpx.", code: .usage)
            }
            if output == nil, isatty(STDOUT_FILENO) == 1 {
                throw CLIFailure("a \(f.rawValue.uppercased()) file is not for a terminal: give --output run.\(f.fileExtension), or redirect standard output.", code: .usage)
            }
            let db = try store.openForReading()
            let summary = try WorkoutSummary(try WorkoutCommand.stored(db, uuid), store: db, characteristics: try db.characteristics())
            let bytes: [UInt8]
            do {
                bytes = try f.write(try summary.track(store: db))
            } catch let e as WorkoutFileError {
                if case .noPositions = e { throw CLIFailure("\(e)", code: .usage) }
                throw CLIFailure("workout \(uuid) cannot be written as \(f.rawValue.uppercased()): \(e)", code: .dataError)
            } catch let e as WorkoutSummaryError {
                throw CLIFailure("\(e).", code: .usage)
            }
            var out = try OutputFile(path: output, what: output == nil ? "the workout to" : "the workout file")
            try out.write(bytes)
            try out.finish()
            if let output { Console.note("wrote \(summary.workout.activity.rawValue) workout \(uuid) as \(f.rawValue.uppercased()) to \(output) (\(bytes.count) bytes)") }
        }
    }

    struct Changes: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Workouts added, changed or deleted since an anchor (HealthKit's anchored query for workouts).",
            discussion: """
                Prints {"anchor", "workouts": [as 'workout export'-able records], "deleted": [uuids], "hasMore"}: keep the \
                anchor and pass it next time. Each changed workout comes once, as it is now. An anchor of another store \
                (or ahead of this one) exits 65: start again without --anchor (docs/workouts.md).
                """)
        @OptionGroup var store: StoreLocation
        @Option(help: ArgumentHelp("Continue after this anchor (from a previous answer).", valueName: "anchor")) var anchor: String?
        @Option(help: "At most this many workouts and deletions.") var limit: Int?

        func run() throws {
            let (page, next) = try store.openForReading().workoutChanges(since: anchor, limit: limit)
            try JSONOutput.emit(WorkoutRecordJSON.page(page, anchor: next))
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a workout; its samples stay.")
        @OptionGroup var store: StoreLocation
        @Argument(help: ArgumentHelp("The workout.", valueName: "uuid")) var uuid: String
        func run() throws {
            let db = try store.open()
            let w = try WorkoutCommand.stored(db, uuid)
            _ = try db.deleteWorkout(uuid: w.uuid)
            print("deleted workout \(w.uuid.uuidString); its samples stay")
        }
    }

    /// Prints a workout's totals as text or JSON.
    static func report(_ s: WorkoutSummary, json: Bool) throws {
        if json { return try JSONOutput.emit(s.json()) }
        for line in s.lines(timeZone: .current) { print(line) }
        guard !s.minutes.isEmpty else { return }
        print("")
        Table.print(["MINUTE", "AVG", "MIN", "MAX", "READINGS", "RUNNING (s)"], s.minutes.map { m in
            [Table.time(m.start, in: .current), Table.number(m.average), Table.number(m.minimum), Table.number(m.maximum),
             "\(m.samples)", Table.number(m.activeSeconds)]
        })
    }
}

/// `healthgate workouts`: the workouts in a range with their totals.
struct WorkoutsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workouts",
        abstract: "List workouts with their duration, energy, steps and heart rate.",
        discussion: """
            Examples:
              healthgate workouts --from 2026-11-01
              healthgate workouts --json
            """)
    @OptionGroup var store: StoreLocation
    @Option(help: ArgumentHelp("Workouts that end after this (ISO 8601).", valueName: "date")) var from: String?
    @Option(help: ArgumentHelp("Workouts that start before this.", valueName: "date")) var to: String?
    @Flag(help: "Print a JSON array.") var json = false

    func run() throws {
        let from = try from.map { try InputValues.date($0, option: "--from", timeZone: nil) }
        let to = try to.map { try InputValues.date($0, option: "--to", timeZone: nil) }
        try InputValues.checkRange(from: from, to: to)
        let db = try store.openForReading()
        let profile = try db.characteristics()
        let summaries = try db.workouts(from: from, to: to).map { try WorkoutSummary($0, store: db, characteristics: profile) }
        if json { return try JSONOutput.emit(summaries.map { $0.json() }) }
        if summaries.isEmpty { return print("no workouts\(from != nil || to != nil ? " in the range" : ""): start one with 'healthgate workout start --activity running'") }
        Table.print(["UUID", "ACTIVITY", "START", "DURATION", "ENERGY (kcal)", "STEPS", "AVG HR", "MAX HR", "STATE"], summaries.map { s in
            [s.workout.uuid.uuidString, s.workout.activity.rawValue, Table.time(s.workout.start, in: .current), WorkoutSummary.clock(s.duration),
             Table.number(s.activeEnergy.map { ($0.value * 10).rounded() / 10 }), Table.number(s.steps?.value),
             Table.number(s.heartRate.map { ($0.average * 10).rounded() / 10 }),
             Table.number(s.heartRate?.maximum), s.workout.state.rawValue]
        })
    }
}
