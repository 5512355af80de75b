import ArgumentParser
import BluetoothLinux
import Foundation
import Gateway
import HealthModel
import HealthStore
import HeartRateProfile
import Ingest
import Logging

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

            Example:
              healthgate live
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

    @OptionGroup var limits: SessionLimits
    @OptionGroup var connect: ConnectOptions
    @OptionGroup var store: StoreLocation

    func run() throws {
        if let owner = DaemonLock.owner(ofDatabase: store.path) {
            try followDaemon(pid: owner.pid, straps: owner.straps)
            return
        }
        let adapter = try connect.adapterOption.resolve()
        let db = try store.open()
        let targets = try StrapTarget.resolve(all: straps, store: db, addressType: connect.addressType)

        let (json, chosen) = (self.json, targets)
        if !json {
            Output.note("Connecting to \(targets.map(\.description).joined(separator: ", ")); Ctrl-C to stop.")
        }
        let session = try StrapSession(
            straps: targets.map { .kernel($0, adapter: adapter, timeout: connect.attemptTimeout) },
            store: noStore ? nil : db, maxNotifications: limits.count, logger: quietLogger()
        ) { event in
            if json { Output.json(event.jsonObject(straps: chosen)) } else { Self.show(event, chosen) }
        }
        let summary = try session.run(duration: limits.duration.map { .milliseconds(Int($0 * 1000)) })
        if json {
            Output.json(summary.jsonObject(straps: targets))
        } else {
            Self.show(summary, targets, stored: !noStore)
        }
        if summary.unsaved > 0 {
            throw CLIFailure("\(summary.unsaved) samples could not be saved because the store kept failing: check the disk and `--db`, then record again.", code: .ioError)
        }
    }

    // MARK: A daemon owns the straps

    /// `healthgate run` holds the straps (a strap allows one connection, often): instead of
    /// fighting it for them, show what it commits, as it commits it (docs/change-feed.md).
    private func followDaemon(pid: Int, straps daemonStraps: [String]) throws {
        Console.note("`healthgate run` (pid \(pid)) owns the straps\(daemonStraps.isEmpty ? "" : " (" + daemonStraps.joined(separator: ", ") + ")") and \(store.path): showing the readings it stores instead of connecting. Stop it to connect directly; Ctrl-C to stop.")
        try DaemonReadings.follow(storeAt: store.path, straps: straps, duration: limits.duration, count: limits.count) { sample in
            if json {
                var object = try SampleJSON.object(sample)
                object["event"] = sample.type == .heartRate ? "heartRate" : "energy"
                object["from"] = "daemon"
                try JSONOutput.emit(object)
            } else {
                let device = sample.device?.name ?? sample.device?.localIdentifier ?? "strap"
                let rr = sample.rrIntervals.map { "  " + Self.rrText($0.ticks) } ?? ""
                let contact = sample.metadata.sensorContact.map { "  contact \($0.name)" } ?? ""
                print("\(ISO8601.string(sample.endDate))  \(TerminalText.visible(device))  "
                      + "\(Table.number(sample.quantity.value)) \(sample.quantity.unit.unitString)\(contact)\(rr)")
                fflush(nil)
            }
        }
    }

    // MARK: Text

    static func time(_ d: Date) -> String {
        d.formatted(Date.VerbatimFormatStyle(format: "\(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits)", timeZone: .current, calendar: .current))
    }

    /// RR intervals for a human line, oldest first, in whole milliseconds with the unit
    /// (`RR 812 776 ms`); `--json` keeps the exact 1/1024 s ticks.
    static func rrText(_ ticks: [UInt16]) -> String {
        "RR " + ticks.map { String(format: "%.0f", Double($0) * 1000 / 1024) }.joined(separator: " ") + " ms"
    }

    static func contactText(_ c: SensorContact) -> String {
        switch c { case .notSupported: return "contact n/a"; case .notDetected: return "NO CONTACT"; case .detected: return "contact ok" }
    }

    static func show(_ event: StrapSession.Event, _ targets: [StrapTarget]) {
        switch event {
        case .connected(let k, let c):
            let t = targets[k]
            let loc = c.sensorLocation.map { ", \($0.name)" } ?? ""
            Output.note(c.number == 1 ? "Connected to \(t)\(loc)." : "Reconnected to \(t) (connection \(c.number)); notifications on again.")
        case .reading(let r):
            let who = targets[r.strap].name ?? targets[r.strap].address.description
            guard let m = r.measurement else {
                Output.line("\(time(r.receivedAt))  \(column(who, 14)) rejected payload \(Hex.string(r.payload)): \(r.rejection ?? "")")
                return
            }
            var s = "\(time(r.receivedAt))  \(column(who, 14)) \(String(format: "%3d", Int(m.beatsPerMinute))) bpm  \(column(contactText(m.sensorContact), 12))"
            if !m.rrIntervals.isEmpty { s += " " + rrText(m.rrIntervals.array) }
            if let e = m.energyExpendedKJ { s += "  \(e) kJ" }
            if m.truncated { s += "  (truncated)" }
            Output.line(s)
        case .battery(let k, let level, _):
            Output.note("\(targets[k].name ?? targets[k].address.description): battery \(level)%")
        case .disconnected(let k, let reason):
            Output.note("\(targets[k]) disconnected (\(reason)); reconnecting…")
        case .connectFailed(let k, let reason, let pause):
            Output.note("Could not connect to \(targets[k].name ?? targets[k].address.description): \(reason) Retrying in \(formatSeconds(pause)).")
        case .storeFailed(let why):
            Output.note("Saving failed (\(why)); the batch is kept and retried.")
        }
    }

    static func show(_ s: StrapSessionSummary, _ targets: [StrapTarget], stored: Bool) {
        let d = Int(s.duration.rounded())
        var line = "Summary: \(d / 3600 > 0 ? "\(d / 3600)h " : "")\(d / 60 % 60)m \(d % 60)s, \(s.notifications) readings"
        line += stored ? ", \(s.samplesStored) samples stored in \(s.batches) batches" : " (not stored)"
        if let mn = s.minBPM, let mx = s.maxBPM, let avg = s.averageBPM {
            line += String(format: ", bpm min %d / avg %.1f / max %d", mn, avg, mx)
        }
        Output.line(line + ".")
        if s.straps.count > 1 {
            for (k, st) in s.straps.enumerated() {
                var l = "  \(targets[k]): \(st.notifications) readings, \(st.connections) connections"
                if let mn = st.minBPM, let mx = st.maxBPM, let avg = st.averageBPM { l += String(format: ", bpm %d / %.1f / %d", mn, avg, mx) }
                Output.line(l)
            }
        }
    }
}

/// A logger for the interactive strap commands: they print their own progress, so only errors
/// the session cannot show (a failed fsync) reach stderr.
func quietLogger() -> Logger {
    var logger = Logger(label: "healthgate") { label in StreamLogHandler.standardError(label: label) }
    logger.logLevel = .error
    return logger
}
