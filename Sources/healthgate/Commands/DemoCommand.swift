import ArgumentParser
import Foundation
import Gateway
import GATT
import HealthModel
import HealthStore
import HeartRateProfile
import Ingest
import Logging
import Systemd
import Simulators

/// `healthgate demo`: the whole pipeline with simulated hardware, no setup needed.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the gateway against simulated straps and a pedometer: live view, then a summary.",
        discussion: """
            No hardware needed. Simulated heart-rate straps (Swift ATT servers over real socket \
            pairs, speaking the real Heart Rate profile bytes) and simulated serial pedometers \
            (real pseudo-terminals fed the line shapes real firmware prints) run through the very \
            same pipeline as `healthgate run`: GATT client and HRM decoder, line parser and step \
            counter, lock-free rings, the batching writer, the SQLite store. A live view shows what \
            was committed; at the end a summary comes from the store's statistics.

            Ctrl-C (SIGINT) or SIGTERM stops early: the sources stop, everything pushed is \
            committed, and the summary still prints.

            Examples:
              healthgate demo --duration 10
              healthgate demo --straps 10 --rate 1 --pedometers 4 --db /tmp/demo.sqlite
              healthgate demo --duration 5 --json
            """)

    @OptionGroup var store: StoreLocation

    @Option(help: "Seconds to run (0 runs until Ctrl-C).")
    var duration: Double = 10

    @OptionGroup var devices: SimulatedDevicesOptions<DemoCommand>

    @Option(help: "Samples per transaction.")
    var batchSize: Int = 1_000

    @Option(help: "Milliseconds a sample may wait before its batch commits.")
    var flushMs: Int = 250

    @Flag(help: "Print the summary as one JSON object (no live view).")
    var json = false

    func validate() throws {
        guard duration >= 0, duration <= 31_536_000 else {
            throw ValidationError("--duration must be 0 (until Ctrl-C) up to 31536000 seconds (a year)")
        }
    }

    func run() throws {
        let db = try store.open()
        let logger = Logger.standardError(level: json ? .error : .notice)
        let config = IngestConfiguration(batchSize: batchSize, flushInterval: .milliseconds(flushMs))
        do { try config.validate() } catch { throw CLIFailure("\(error)", code: .usage) }
        let runtime = try GatewayRuntime(store: db, configuration: config, logger: logger)
        let sim = try DemoSimulation(straps: devices.straps, rate: devices.rate, pedometers: devices.pedometers)
        let view = LiveView(tally: CommitTally(runtime.pipeline), enabled: !json)
        let began = Date()
        sim.start()
        let final = try runtime.run(sources: sim.sources, duration: duration > 0 ? .milliseconds(Int(duration * 1000)) : nil,
                                    statusInterval: .seconds(3600), status: { view.tick($0) })
        sim.stop()
        view.finish()
        let summary = try DemoSummary(store: db, since: began, stats: final, simulation: sim)
        if json { try JSONOutput.emit(summary.jsonObject) } else { summary.lines.forEach { print($0) } }
        if let failure = final.abandonedFailure(check: "the database, then retry") { throw failure }
    }
}

extension DemoCommand: SimulatedDevicesLimits {
    static let straps = 3, rate = 4.0, pedometers = 1, minimumDevices = 0
    static let strapRange = 0...64, pedometerRange = 0...16
    static let rateRange = 0.01...1_000.0, rateText = "0.01…1000"
    static let strapTransport = "socket pairs in this process", pedometerTransport = "ptys"
}

/// The live view: what the pipeline committed (``CommitTally``), redrawn once a second.
struct LiveView: Sendable {
    let tally: CommitTally
    let enabled: Bool
    private let tty = isatty(1) != 0

    /// Redraws (once a second, from the runtime's timer).
    func tick(_ stats: IngestStats) {
        guard enabled else { return }
        let s = tally.snapshot
        let hr = s.latestBPM.prefix(6).map { "\($0.device): \(Int($0.bpm))" }.joined(separator: "  ")
        let line = "stored \(s.committed) samples in \(s.batches) commits | \(hr.isEmpty ? "no straps" : hr) bpm | steps \(Int(s.steps)) | waiting \(stats.pending + stats.held), dropped \(stats.dropped)"
        if tty { print("\r\u{1B}[2K" + line, terminator: "") } else { print(line) }
        fflush(nil)
    }

    func finish() {
        if enabled && tty { print("") }
    }
}
