import ArgumentParser
import BluetoothLinux
import Foundation
import Gateway
import HealthModel
import HealthStore
import HeartRateProfile
import Ingest
import Logging
import Systemd

/// `healthgate live`: stream heart rate from straps, and store it.
struct LiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live",
        abstract: "Stream heart rate, sensor contact, RR intervals and battery from straps, and store them.",
        discussion: """
            Connects to the straps named (addresses or paired names), or to every remembered strap, \
            and shows each Heart Rate Measurement as it arrives. By default every reading is also \
            stored: a heartRate sample (count/min) with its RR intervals (exact 1/1024 s ticks) and \
            sensor contact, and activeEnergyBurned samples from energy-expended deltas. Samples are \
            committed in batches (about once a second), never one transaction per reading.

            It runs the same strap path as `healthgate run` (connection setup, sample rules, \
            reconnects, the ingest pipeline); this command only prints. A strap that drops out is \
            reconnected by itself (pauses of 0.5 s, 1 s, then 2 s) and notifications are enabled \
            again on every new link; the first sample after a reconnect marks the gap. Ctrl-C (or SIGTERM, --duration, --count) disconnects cleanly, saves \
            what is pending and prints a summary: duration, samples, min/avg/max bpm.

            When `healthgate run` owns this store (it holds a lock on <db>.daemon), live does not \
            fight it for the straps: it says so on stderr and shows the heart-rate and energy \
            samples the daemon commits, as they land (see docs/change-feed.md).

            With --json every event is one JSON object per line: `event` is connected, heartRate, \
            battery, disconnected, connectFailed, storeFailed or summary; heartRate lines carry t \
            (receipt, Unix seconds), address, bpm, sensorContact, energyExpendedKJ, rr (ticks), \
            truncated, hex and connection.

            With --workout ACTIVITY the session is a workout (docs/workouts.md): it starts when the straps are \
            chosen, counts only their samples, ends with the session, and its totals (duration, energy, heart \
            rate, zones) follow the summary (with --json, as an event "workout").

            Example:
              healthgate live
              healthgate live chest --workout running
              healthgate live chest --json --duration 60
              healthgate live C4:7C:8D:6A:1F:02 --no-store
            """)

    @Argument(help: ArgumentHelp("Straps to connect to: addresses or paired names. Default: every remembered strap.",
                                 valueName: "address|name"))
    var straps: [String] = []

    @Flag(help: "Show readings without storing them.")
    var noStore = false

    @Flag(help: "Print one JSON object per event instead of text.")
    var json = false

    @Option(help: ArgumentHelp("Record the session as a workout of this HealthKit activity type (running, cycling, …).", valueName: "activity"))
    var workout: String?

    @OptionGroup var limits: SessionLimits
    @OptionGroup var connect: ConnectOptions
    @OptionGroup var store: StoreLocation

    func run() throws {
        if workout != nil, noStore {
            throw CLIFailure("--workout counts the samples it stores, and --no-store stores none: leave one out.", code: .usage)
        }
        if let owner = DaemonLock.owner(ofDatabase: store.path) {
            let marked = try workout.map { try WorkoutCommand.begin(try store.open(), activity: $0, devices: straps) }
            defer { if let marked { WorkoutCommand.finishReporting(store.path, marked, json: json) } }
            try followDaemon(pid: owner.pid, straps: owner.straps)
            return
        }
        let adapter = try connect.adapterOption.resolve()
        let db = try store.open()
        let targets = try StrapTarget.resolve(all: straps, store: db, addressType: connect.addressType)
        let marked = try workout.map { try WorkoutCommand.begin(db, activity: $0, devices: targets.map(\.localIdentifier)) }
        defer { if let marked { WorkoutCommand.finishReporting(store.path, marked, json: json) } }

        let (json, chosen) = (self.json, targets)
        if !json {
            Output.note("Connecting to \(targets.map(\.description).joined(separator: ", ")); Ctrl-C to stop.")
        }
        let strapSession = try StrapSession(
            straps: targets.map { .kernel($0, adapter: adapter, timeout: connect.attemptTimeout) },
            store: noStore ? nil : db, maxNotifications: limits.count, logger: Logger.standardError(level: .error)
        ) { event in
            if json { Output.json(event.jsonObject(straps: chosen)) } else { Output.say(event.text(straps: chosen)) }
        }
        let summary = try strapSession.run(duration: limits.duration.map { .milliseconds(Int($0 * 1000)) })
        if json {
            Output.json(summary.jsonObject(straps: targets))
        } else {
            summary.text(straps: targets, stored: !noStore).forEach(Output.line)
        }
        if summary.unsaved > 0 {
            throw CLIFailure("\(summary.unsaved) samples could not be saved because the store kept failing: check the disk and `--db`, then record again.", code: .ioError)
        }
    }

    // MARK: A daemon owns the straps

    /// `healthgate run` holds the straps (a strap allows one connection, often): instead of
    /// fighting it for them, show what it commits, as it commits it (docs/change-feed.md).
    private func followDaemon(pid: Int, straps daemonStraps: [String]) throws {
        // Said once the feed's anchor is taken: a reading committed after the note is shown.
        let note = "`healthgate run` (pid \(pid)) owns the straps\(daemonStraps.isEmpty ? "" : " (" + daemonStraps.joined(separator: ", ") + ")") and \(store.path): showing the readings it stores instead of connecting. Stop it to connect directly; Ctrl-C to stop."
        try DaemonReadings.follow(storeAt: store.path, straps: straps, duration: limits.duration, count: limits.count,
                                  ready: { Console.note(note) }) { sample in
            if json {
                var object = try SampleJSON.object(sample)
                object["event"] = sample.type == .heartRate ? "heartRate" : "energy"
                object["from"] = "daemon"
                try JSONOutput.emit(object)
            } else {
                let device = sample.device?.name ?? sample.device?.localIdentifier ?? "strap"
                let rr = sample.rrIntervals.map { "  " + EventText.rr($0.ticks) } ?? ""
                let contact = sample.metadata.sensorContact.map { "  contact \($0.name)" } ?? ""
                print("\(ISO8601.string(sample.endDate))  \(TerminalText.visible(device))  "
                      + "\(Table.number(sample.quantity.value)) \(sample.quantity.unit.unitString)\(contact)\(rr)")
                fflush(nil)
            }
        }
    }
}
