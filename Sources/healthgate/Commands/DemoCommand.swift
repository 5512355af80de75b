import ArgumentParser
import Foundation
import Gateway
import GATT
import HealthModel
import HealthStore
import HeartRateProfile
import Ingest
import Logging
import Simulators
import Synchronization

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

    @Option(help: "Simulated heart-rate straps.")
    var straps: Int = 3

    @Option(help: "Notifications per second per strap.")
    var rate: Double = 4

    @Option(help: "Simulated serial pedometers.")
    var pedometers: Int = 1

    @Option(help: "Samples per transaction.")
    var batchSize: Int = 1_000

    @Option(help: "Milliseconds a sample may wait before its batch commits.")
    var flushMs: Int = 250

    @Flag(help: "Print the summary as one JSON object (no live view).")
    var json = false

    func validate() throws {
        guard (0...64).contains(straps), (0...16).contains(pedometers) else {
            throw ValidationError("--straps must be 0…64 and --pedometers 0…16")
        }
        guard rate >= 0.01, rate <= 1_000 else { throw ValidationError("--rate must be 0.01…1000 notifications per second") }
        guard duration >= 0, duration <= 31_536_000 else {
            throw ValidationError("--duration must be 0 (until Ctrl-C) up to 31536000 seconds (a year)")
        }
    }

    func run() throws {
        try reporting {
            let db = try openHealthStore(store)
            let logger = demoLogger(quiet: json)
            let config = IngestConfiguration(batchSize: batchSize, flushInterval: .milliseconds(flushMs))
            do { try config.validate() } catch { throw CLIFailure("\(error)", code: .usage) }
            let runtime = try GatewayRuntime(store: db, configuration: config, logger: logger)
            let sim = try DemoSimulation(straps: straps, rate: rate, pedometers: pedometers)
            let view = LiveView(slots: runtime.pipeline.slots, enabled: !json)
            runtime.pipeline.addObserver { view.committed($0) }
            let began = Date()
            sim.start()
            let final = try runtime.run(sources: sim.sources, duration: duration > 0 ? .milliseconds(Int(duration * 1000)) : nil,
                                        statusInterval: .seconds(3600), status: { view.tick($0) })
            sim.stop()
            view.finish()
            let summary = try DemoSummary(store: db, since: began, stats: final, simulation: sim)
            if json { JSONOutput.emit(summary.json) } else { summary.printTable() }
            if final.abandoned > 0 {
                throw CLIFailure("\(final.abandoned) samples could not be committed before shutdown because the store kept failing (\(final.stalledBy ?? "unknown")); free disk space or check the database, then retry.", code: .ioError)
            }
        }
    }
}

/// A logger for the demo: notices and up on stderr (or only errors with --json).
func demoLogger(quiet: Bool) -> Logger {
    var logger = Logger(label: "healthgate") { label in StreamLogHandler.standardError(label: label) }
    logger.logLevel = quiet ? .error : .notice
    return logger
}

/// The simulated hardware of `demo`: straps with a driver thread, pedometers on ptys.
final class DemoSimulation: Sendable {
    let strapPeripherals: [SimulatedPeripheral]
    let strapSources: [StrapSource]
    let pedometerDevices: [SimulatedPedometer]
    let pedometerSources: [PedometerSource]
    let rate: Double
    private let running = Atomic<Bool>(false)
    private let notificationsSent = Atomic<Int>(0)
    private let driverDone = DispatchSemaphore(value: 0)

    var sources: [any IngestSource] { strapSources as [any IngestSource] + pedometerSources }
    var sent: Int { notificationsSent.load(ordering: .relaxed) }

    init(straps: Int, rate: Double, pedometers: Int) throws {
        self.rate = rate
        var peripherals: [SimulatedPeripheral] = []
        var sources: [StrapSource] = []
        for k in stride(from: 1, through: straps, by: 1) {
            var c = SimulatedStrapConfiguration()
            c.name = "Sim Strap \(k)"
            c.serialNumber = String(format: "SIM%04d", k)
            let p = SimulatedPeripheral.heartRateStrap(c)
            p.recordsTranscript = false   // `demo --duration 0` runs until Ctrl-C: keep memory flat
            peripherals.append(p)
            sources.append(StrapSource(name: "strap-\(k)", localIdentifier: "sim:strap-\(k)") { _ in
                try p.connectSocketPair()
            })
        }
        strapPeripherals = peripherals
        strapSources = sources
        var peds: [SimulatedPedometer] = []
        var pedSources: [PedometerSource] = []
        for k in stride(from: 1, through: pedometers, by: 1) {
            let d = try SimulatedPedometer()
            peds.append(d)
            pedSources.append(PedometerSource(path: d.path, name: "Sim Pedometer \(k)"))
        }
        pedometerDevices = peds
        pedometerSources = pedSources
    }

    /// Starts the strap driver (one thread for all straps) and the pedometers' writers.
    func start() {
        for d in pedometerDevices { d.start(interval: .milliseconds(500)) }
        guard !strapPeripherals.isEmpty, !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            let period = 1 / rate
            var next = Date().timeIntervalSince1970
            var beat = 0
            while running.load(ordering: .acquiring) {
                beat += 1
                for (k, p) in strapPeripherals.enumerated() {
                    // A resting-to-active heart rate wandering per strap, with matching RR.
                    let bpm = 62 + 20 * (1 + sin(Double(beat) / 15 + Double(k))) / 2 + Double(k % 5)
                    let rr = UInt16(60 * 1024 / bpm)
                    let m = HeartRateMeasurement(beatsPerMinute: UInt16(bpm.rounded()), sensorContact: .detected,
                                                 rrIntervals: RRTicks([rr]))
                    if p.notifyHeartRate(m.encode()) { notificationsSent.add(1, ordering: .relaxed) }
                }
                next += period
                // Short naps: a stop is noticed within 50 ms even at the lowest rate (100 s apart).
                while running.load(ordering: .acquiring) {
                    let wait = next - Date().timeIntervalSince1970
                    if wait <= 0 { break }
                    usleep(UInt32(min(wait, 0.05) * 1_000_000))
                }
            }
            driverDone.signal()
        }
        thread.name = "sim-straps"
        thread.start()
    }

    func stop() {
        if running.exchange(false, ordering: .acquiringAndReleasing) { driverDone.wait() }
        for d in pedometerDevices { d.stop() }
    }
}

/// The live view: what each commit stored, redrawn once a second.
final class LiveView: Sendable {
    private struct State {
        var latestBPM: [UInt16: Double] = [:]
        var steps: Double = 0
        var committed = 0
        var batches = 0
        var lastLatencyMs: Double = 0
    }
    private let state = Mutex(State())
    private let slots: SlotTable
    private let enabled: Bool
    private let tty = isatty(1) != 0
    private let heartRateSlot: UInt16?

    init(slots: SlotTable, enabled: Bool) {
        self.slots = slots
        self.enabled = enabled
        self.heartRateSlot = try? slots.slot(for: .heartRate)
    }

    /// Observer: called on the writer thread after each commit.
    func committed(_ batch: CommittedBatch) {
        let now = Date().timeIntervalSince1970
        state.withLock { s in
            for r in batch.records {
                if r.typeSlot == heartRateSlot { s.latestBPM[r.deviceSlot] = r.value } else { s.steps += r.value }
            }
            s.committed += batch.records.count
            s.batches += 1
            if let last = batch.records.last { s.lastLatencyMs = (now - last.end) * 1000 }
        }
    }

    /// Redraws (once a second, from the runtime's timer).
    func tick(_ stats: IngestStats) {
        guard enabled else { return }
        let s = state.withLock { $0 }
        let hr = s.latestBPM.sorted { $0.key < $1.key }.prefix(6).map { slot, bpm in
            "\(slots.device(slot)?.name ?? "?"): \(Int(bpm))"
        }.joined(separator: "  ")
        let line = "stored \(s.committed) samples in \(s.batches) commits | \(hr.isEmpty ? "no straps" : hr) bpm | steps \(Int(s.steps)) | waiting \(stats.pending + stats.held), dropped \(stats.dropped)"
        if tty { print("\r\u{1B}[2K" + line, terminator: "") } else { print(line) }
        fflush(nil)
    }

    func finish() {
        if enabled && tty { print("") }
    }
}

/// The end-of-demo summary, from the store's statistics.
struct DemoSummary {
    var stats: IngestStats
    var heartRate: Statistics?
    var steps: Statistics?
    var heartRateRows: Int
    var stepRows: Int
    var notificationsSent: Int
    var pedometerSteps: UInt64

    init(store: HealthStore, since: Date, stats: IngestStats, simulation: DemoSimulation) throws {
        self.stats = stats
        let start = since.addingTimeInterval(-1)
        heartRate = try store.statistics(StatisticsQuery(type: .heartRate, options: [.discreteAverage, .discreteMin, .discreteMax], start: start, end: Date().addingTimeInterval(1)))
        steps = try store.statistics(StatisticsQuery(type: .stepCount, options: [.cumulativeSum], start: start, end: Date().addingTimeInterval(1)))
        heartRateRows = try store.count(SampleQuery(type: .heartRate, start: start))
        stepRows = try store.count(SampleQuery(type: .stepCount, start: start))
        notificationsSent = simulation.sent
        pedometerSteps = simulation.pedometerDevices.reduce(0) { $0 + $1.steps }
    }

    var json: [String: Any] {
        [
            "pushed": stats.pushed, "committed": stats.committed, "dropped": stats.dropped,
            "abandoned": stats.abandoned, "batches": stats.batches, "failedWrites": stats.failedWrites,
            "heartRateSamples": heartRateRows, "stepSamples": stepRows,
            "heartRateAverage": heartRate?.values.average ?? NSNull(),
            "heartRateMin": heartRate?.values.minimum ?? NSNull(),
            "heartRateMax": heartRate?.values.maximum ?? NSNull(),
            "stepsStored": steps?.values.sum ?? 0,
            "notificationsSent": notificationsSent, "pedometerStepsCounted": pedometerSteps,
            "noLoss": stats.pushed == stats.committed + stats.dropped && stats.dropped == 0,
        ]
    }

    func printTable() {
        func f(_ v: Double?) -> String { v.map { String(format: "%.1f", $0) } ?? "-" }
        print("")
        print("Summary (from the store's statistics)")
        print("  heart rate   \(heartRateRows) samples   avg \(f(heartRate?.values.average))  min \(f(heartRate?.values.minimum))  max \(f(heartRate?.values.maximum)) count/min")
        print("  steps        \(stepRows) intervals  total \(Int(steps?.values.sum ?? 0)) (the simulated pedometers counted \(pedometerSteps); the first reading of each is its baseline)")
        print("  pipeline     \(stats.pushed) pushed, \(stats.committed) committed in \(stats.batches) transactions, \(stats.dropped) dropped, \(stats.failedWrites) failed writes retried")
        print("  straps       \(notificationsSent) notifications sent over socket pairs")
        let ok = stats.pushed == stats.committed + stats.dropped && stats.abandoned == 0
        print(ok ? "  every pushed sample was committed or counted as dropped" : "  WARNING: \(stats.pushed - stats.committed - stats.dropped) samples unaccounted for")
    }
}
