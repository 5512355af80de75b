import Platform
import Capture
import Foundation
import HealthStore
import HealthModel
import HeartRateProfile
import Ingest
import Logging
import SerialPedometer
import Synchronization

/// A capture file (docs/capture-format.md) as an ingest source: every BLE record is decoded as a
/// Heart Rate Measurement and every serial line goes through the pedometer path `run` uses
/// (``PedometerStream``: parsing, the step counter, sync identifiers), exactly as live data would, with the capture's receipt
/// times as sample times. Paced at `speed`× the recorded rate, or as fast as the pipeline takes it.
///
/// A captured pedometer's id is its device's local identifier without the `serial:` prefix (what
/// the live path writes), else its name, and its steps carry sync identifiers made by the live
/// rules. A capture is a complete past stream: its counter starts at the capture's first reading
/// and its state is not persisted (it would overwrite the live device's counter, which is
/// further on). So replaying a capture a second time gives the same sync identifiers, and the
/// store keeps each step once.
///
/// A file is not a sensor: when the ring is full the replay waits for the writer instead of
/// spilling, so nothing is dropped however fast it runs.
package struct ReplaySource: IngestSource {
    package let name: String
    package let reconnects = false
    private let records: [CaptureRecord]
    private let speed: Double?
    private let counters = Counters()

    /// What the replay did (any thread).
    package final class Counters: Sendable {
        /// Records read from the file.
        package let records = Atomic<Int>(0)
        /// Samples pushed.
        package let pushed = Atomic<Int>(0)
        /// BLE payloads that were not a heart-rate value, or 0 bpm (counted, skipped).
        package let skippedBLE = Atomic<Int>(0)
        /// Serial lines the parser rejected (counted, skipped).
        package let rejectedLines = Atomic<Int>(0)
        init() {}
    }

    /// The replay's counters.
    package var stats: Counters { counters }

    /// Replays `records` (from `file`, for logs) at `speed`× real time, or as fast as possible when nil.
    package init(file: String, records: [CaptureRecord], speed: Double?) {
        self.name = "replay \(URL(fileURLWithPath: file).lastPathComponent)"
        self.records = records
        self.speed = speed
    }

    package func run(into ring: SampleRing, slots: SlotTable, stop: StopSignal) throws {
        let steps = try slots.slot(for: .stepCount)
        let serial = try slots.slot(for: PedometerSource.source)
        var deviceSlots: [Device: UInt16] = [:]
        var pedometers: [Device: PedometerStream] = [:]
        let pedometerCounters = PedometerSource.Counters()
        defer {
            // The end of the file is the end of each pedometer's stream: settle held readings
            // (also when stopped early).
            let end = Date(timeIntervalSince1970: records.last?.t ?? Date().timeIntervalSince1970)
            for device in pedometers.keys { pedometers[device]!.finish(at: end) }
            counters.rejectedLines.add(pedometerCounters.rejected.load(ordering: .relaxed), ordering: .relaxed)
            counters.pushed.add(pedometerCounters.intervals.load(ordering: .relaxed), ordering: .relaxed)
        }
        var mappers: [Device: HeartRateRecordMapper] = [:]   // the daemon's rules, one per strap
        let t0 = records.first?.t ?? 0
        let wall0 = Date().timeIntervalSince1970
        for rec in records {
            if stop.isRaised { return }
            counters.records.add(1, ordering: .relaxed)
            if let speed {
                // A capture's times come from a file: a gap of years (or t = 1e300) waits in
                // hour-long steps, stoppable, instead of overflowing a Duration.
                let due = wall0 + (rec.t - t0) / speed
                var wait = due - Date().timeIntervalSince1970
                while wait > 0 {
                    if stop.sleep(.microseconds(Int64(min(wait, 3600) * 1_000_000))) { return }
                    wait = due - Date().timeIntervalSince1970
                }
            }
            let device: UInt16
            if let d = deviceSlots[rec.device] { device = d } else {
                device = try slots.slot(for: rec.device)
                deviceSlots[rec.device] = device
            }
            switch rec.kind {
            case .ble:
                guard let bytes = rec.payload, let m = bytes.withUnsafeBytes({ try? HeartRateMeasurement.decode($0) }) else {
                    counters.skippedBLE.add(1, ordering: .relaxed)
                    continue
                }
                if mappers[rec.device] == nil {
                    mappers[rec.device] = HeartRateRecordMapper(slots: try HeartRateRecordMapper.Slots(table: slots, source: StrapSource.source, device: rec.device))
                }
                let stored = mappers[rec.device]!.map(m, at: rec.t) { push($0, $1, into: ring, stop: stop) }
                if !stored { counters.skippedBLE.add(1, ordering: .relaxed) }
            case .serial:
                guard let line = rec.line else { continue }
                if pedometers[rec.device] == nil {
                    let id = Self.pedometerID(rec.device)
                    let counter = StepCounter(configuration: try CounterConfiguration(deviceID: id))
                    pedometers[rec.device] = PedometerStream(
                        session: PedometerSession(format: .auto, counter: counter), ring: ring, key: nil,
                        counters: pedometerCounters, device: rec.device, slots: (steps, serial, device),
                        beforePush: { [self] in waitForRoom(in: ring, stop: stop) })
                }
                pedometers[rec.device]!.feedLine(line, at: rec.receivedAt)
            }
        }
    }

    /// The pedometer id of a captured device: its local identifier without `serial:`, else its name.
    static func pedometerID(_ device: Device) -> String {
        if let local = device.localIdentifier, !local.isEmpty {
            return local.hasPrefix("serial:") && local.count > 7 ? String(local.dropFirst(7)) : local
        }
        return device.name ?? "replay"
    }

    /// Back-pressure for files: wait while the ring is full rather than spill.
    private func waitForRoom(in ring: SampleRing, stop: StopSignal) {
        while ring.pendingCount >= ring.capacity, !stop.isRaised { usleep(200) }
    }

    /// Pushes a record (with its attachment, for a notification with many RR), waiting for room.
    private func push(_ r: SampleRecord, _ extra: SampleAttachment?, into ring: SampleRing, stop: StopSignal) {
        waitForRoom(in: ring, stop: stop)
        if let extra { ring.push(r, attachment: extra) } else { ring.push(r) }
        counters.pushed.add(1, ordering: .relaxed)
    }
}

/// What `replay` did: the capture's records through the pipeline into a store, and how fast.
package struct ReplaySummary {
    /// Records read from the capture.
    package var records: Int
    /// The pipeline's final counters.
    package var stats: IngestStats
    /// BLE notifications without a heart rate (skipped, counted).
    package var skippedNotifications: Int
    /// Serial lines the pedometer path rejected.
    package var rejectedLines: Int
    /// Cut-off last lines of the file (a capture whose writer was killed).
    package var truncatedTail: Int
    /// Wall-clock seconds the replay took.
    package var seconds: Double

    /// Committed samples per second of wall clock.
    package var samplesPerSecond: Double { Double(stats.committed) / max(seconds, 1e-9) }

    /// Feeds `reader`'s records of `file` through a pipeline of its own into `store`, at `speed`×
    /// the recorded rate (nil: as fast as the pipeline takes them), until the capture ends.
    package static func replay(file: String, reader: CaptureReader, into store: HealthStore, speed: Double?,
                               logger: Logger) throws -> ReplaySummary {
        let runtime = try GatewayRuntime(store: store, configuration: IngestConfiguration(), logger: logger)
        let source = ReplaySource(file: file, records: reader.records, speed: speed)
        let start = Date()
        let final = try runtime.run(sources: [source], endWhenSourcesEnd: true, statusInterval: .seconds(3600))
        let s = source.stats
        return ReplaySummary(records: s.records.load(ordering: .relaxed), stats: final,
                             skippedNotifications: s.skippedBLE.load(ordering: .relaxed),
                             rejectedLines: s.rejectedLines.load(ordering: .relaxed), truncatedTail: reader.truncatedTail,
                             seconds: Date().timeIntervalSince(start))
    }

    /// `replay --json`: `records`, `pushed`, `committed`, `dropped`, `skippedNotifications`,
    /// `rejectedLines`, `truncatedTail`, `seconds`, `samplesPerSecond`.
    package var jsonObject: [String: Any] {
        ["records": records, "pushed": stats.pushed, "committed": stats.committed, "dropped": stats.dropped,
         "skippedNotifications": skippedNotifications, "rejectedLines": rejectedLines, "truncatedTail": truncatedTail,
         "seconds": seconds, "samplesPerSecond": samplesPerSecond]
    }
}
