import Foundation
import HealthModel
import HealthStore
import HeartRateProfile
import Ingest
import Simulators
import Synchronization

/// The simulated hardware of `demo`: straps with a driver thread, pedometers on ptys.
package final class DemoSimulation: Sendable {
    /// The simulated straps (ATT servers over socket pairs).
    package let strapPeripherals: [SimulatedPeripheral]
    /// One strap source per simulated strap.
    package let strapSources: [StrapSource]
    /// The simulated pedometers (ptys).
    package let pedometerDevices: [SimulatedPedometer]
    /// One pedometer source per simulated pedometer.
    package let pedometerSources: [PedometerSource]
    /// Notifications per second per strap.
    package let rate: Double
    private let running = Atomic<Bool>(false)
    private let notificationsSent = Atomic<Int>(0)
    private let driverDone = DispatchSemaphore(value: 0)

    /// Every source, for the runtime.
    package var sources: [any IngestSource] { strapSources as [any IngestSource] + pedometerSources }
    /// Notifications the straps sent.
    package var sent: Int { notificationsSent.load(ordering: .relaxed) }

    /// `straps` straps notifying at `rate` and `pedometers` pedometers, not started yet.
    package init(straps: Int, rate: Double, pedometers: Int) throws {
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
    package func start() {
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

    /// Stops the driver and the pedometers.
    package func stop() {
        if running.exchange(false, ordering: .acquiringAndReleasing) { driverDone.wait() }
        for d in pedometerDevices { d.stop() }
    }
}

/// The end-of-demo summary, from the store's statistics.
package struct DemoSummary {
    package var stats: IngestStats
    package var heartRate: Statistics?
    package var steps: Statistics?
    package var heartRateRows: Int
    package var stepRows: Int
    package var notificationsSent: Int
    package var pedometerSteps: UInt64

    /// The figures of a run that began at `since`, from `store`'s statistics.
    package init(store: HealthStore, since: Date, stats: IngestStats, simulation: DemoSimulation) throws {
        self.stats = stats
        let start = since.addingTimeInterval(-1)
        heartRate = try store.statistics(StatisticsQuery(type: .heartRate, options: [.discreteAverage, .discreteMin, .discreteMax], start: start, end: Date().addingTimeInterval(1)))
        steps = try store.statistics(StatisticsQuery(type: .stepCount, options: [.cumulativeSum], start: start, end: Date().addingTimeInterval(1)))
        heartRateRows = try store.count(SampleQuery(type: .heartRate, start: start))
        stepRows = try store.count(SampleQuery(type: .stepCount, start: start))
        notificationsSent = simulation.sent
        pedometerSteps = simulation.pedometerDevices.reduce(0) { $0 + $1.steps }
    }

    /// Every pushed sample was committed or counted as dropped, and none was abandoned.
    package var everyPushedAccountedFor: Bool { stats.pushed == stats.committed + stats.dropped && stats.abandoned == 0 }

    /// `demo`'s closing table for people: what the store's statistics say of the run.
    package var lines: [String] {
        func f(_ v: Double?) -> String { v.map { String(format: "%.1f", $0) } ?? "-" }
        return ["", "Summary (from the store's statistics)",
                "  heart rate   \(heartRateRows) samples   avg \(f(heartRate?.values.average))  min \(f(heartRate?.values.minimum))  max \(f(heartRate?.values.maximum)) count/min",
                "  steps        \(stepRows) intervals  total \(Int(steps?.values.sum ?? 0)) (the simulated pedometers counted \(pedometerSteps); the first reading of each is its baseline)",
                "  pipeline     \(stats.pushed) pushed, \(stats.committed) committed in \(stats.batches) transactions, \(stats.dropped) dropped, \(stats.failedWrites) failed writes retried",
                "  straps       \(notificationsSent) notifications sent over socket pairs",
                everyPushedAccountedFor ? "  every pushed sample was committed or counted as dropped" : "  WARNING: \(stats.pushed - stats.committed - stats.dropped) samples unaccounted for"]
    }

    /// `demo --json`: the pipeline's counters, the stored heart rate's statistics and rows, the
    /// steps stored against those the simulated pedometers counted, and `noLoss` (nothing
    /// dropped, every pushed sample committed).
    package var jsonObject: [String: Any] {
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
}
