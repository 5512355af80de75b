import Capture
import Foundation
import HealthModel
import HeartRateProfile
import Ingest
import SerialPedometer
import Synchronization

/// A capture file (docs/capture-format.md) as an ingest source: every BLE record is decoded as a
/// Heart Rate Measurement and every serial line goes through the pedometer session (framing,
/// parsing, the step counter), exactly as live data would, with the capture's receipt times as
/// sample times. Paced at `speed`× the recorded rate, or as fast as the pipeline takes it.
///
/// A file is not a sensor: when the ring is full the replay waits for the writer instead of
/// spilling, so nothing is dropped however fast it runs.
public struct ReplaySource: IngestSource {
    public let name: String
    public let reconnects = false
    private let records: [CaptureRecord]
    private let speed: Double?
    private let counters = Counters()

    /// What the replay did (any thread).
    public final class Counters: Sendable {
        /// Records read from the file.
        public let records = Atomic<Int>(0)
        /// Samples pushed.
        public let pushed = Atomic<Int>(0)
        /// BLE payloads that were not a heart-rate value, or 0 bpm (counted, skipped).
        public let skippedBLE = Atomic<Int>(0)
        /// Serial lines the parser rejected (counted, skipped).
        public let rejectedLines = Atomic<Int>(0)
        init() {}
    }

    /// The replay's counters.
    public var stats: Counters { counters }

    /// Replays `records` (from `file`, for logs) at `speed`× real time, or as fast as possible when nil.
    public init(file: String, records: [CaptureRecord], speed: Double?) {
        self.name = "replay \(URL(fileURLWithPath: file).lastPathComponent)"
        self.records = records
        self.speed = speed
    }

    public func run(into ring: SampleRing, slots: SlotTable, stop: IngestStop) throws {
        let steps = try slots.slot(for: .stepCount)
        let serial = try slots.slot(for: PedometerSource.source)
        var deviceSlots: [Device: UInt16] = [:]
        var sessions: [Device: PedometerSession] = [:]
        var mappers: [Device: HeartRateRecordMapper] = [:]   // the daemon's rules, one per strap
        let t0 = records.first?.t ?? 0
        let wall0 = Date().timeIntervalSince1970
        for rec in records {
            if stop.isRaised { return }
            counters.records.add(1, ordering: .relaxed)
            if let speed {
                let wait = wall0 + (rec.t - t0) / speed - Date().timeIntervalSince1970
                if wait > 0, stop.sleep(.microseconds(Int64(wait * 1_000_000))) { return }
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
                let stored = mappers[rec.device]!.map(m, at: rec.t) { push($0, into: ring, stop: stop) }
                if !stored { counters.skippedBLE.add(1, ordering: .relaxed) }
            case .serial:
                guard let line = rec.line else { continue }
                var session = try sessions[rec.device] ?? PedometerSession(
                    format: .auto, counter: StepCounter(configuration: try CounterConfiguration(
                        deviceID: rec.device.localIdentifier ?? rec.device.name ?? "replay")))
                for e in session.feedLine(line, receivedAt: rec.receivedAt) {
                    switch e {
                    case .rejected: counters.rejectedLines.add(1, ordering: .relaxed)
                    case .sample(let i):
                        push(SampleRecord(typeSlot: steps, value: Double(i.steps), start: i.start.timeIntervalSince1970,
                                          end: i.end.timeIntervalSince1970, sourceSlot: serial, deviceSlot: device),
                             into: ring, stop: stop)
                    case .accepted, .counter: break
                    }
                }
                sessions[rec.device] = session
            }
        }
    }

    /// Back-pressure for files: wait while the ring is full rather than spill.
    private func push(_ r: SampleRecord, into ring: SampleRing, stop: IngestStop) {
        while ring.pendingCount >= ring.capacity, !stop.isRaised { usleep(200) }
        ring.push(r)
        counters.pushed.add(1, ordering: .relaxed)
    }
}
