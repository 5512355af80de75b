import Foundation
import HealthModel
import HealthStore
import HeartRateProfile
import Synchronization

/// One Heart Rate Measurement notification as `live` shows it.
public struct LiveReading: Sendable {
    /// The strap that sent it.
    public var target: StrapTarget
    /// Receipt time (the sample's timestamp).
    public var receivedAt: Date
    /// The payload exactly as received.
    public var payload: [UInt8]
    /// The decode, or `nil` when the payload was rejected (see ``rejection``).
    public var measurement: HeartRateMeasurement?
    /// Why the payload was rejected (empty, flags only, cut-short bpm).
    public var rejection: String?
    /// Which connection (1, 2, … after reconnects) delivered it.
    public var connection: Int
}

/// What `live` reports as it runs.
public enum LiveEvent: Sendable {
    case connected(StrapTarget, StrapInfo, connection: Int)
    case reading(LiveReading)
    case battery(StrapTarget, level: UInt8, at: Date)
    case disconnected(StrapTarget, reason: String)
    case connectFailed(StrapTarget, reason: String, retryIn: Double)
    /// Saving a batch failed; it is kept and retried (nothing accepted is lost).
    case storeFailed(String)
}

/// Per-strap totals for the summary.
public struct StrapSummary: Sendable {
    public var target: StrapTarget
    /// Heart Rate Measurement notifications received.
    public var notifications = 0
    /// Payloads rejected by the decoder (counted, not stored).
    public var rejected = 0
    /// bpm of the accepted readings with bpm > 0.
    public var minBPM: Int?
    public var maxBPM: Int?
    public var bpmSum = 0
    public var bpmCount = 0
    /// Connections made (1 + reconnects).
    public var connections = 0
    /// The builder's counters (truncated payloads, RR gaps, energy resets, …).
    public var counters = HeartRateSampleBuilder.Counters()

    public var averageBPM: Double? { bpmCount > 0 ? Double(bpmSum) / Double(bpmCount) : nil }
}

/// What a `live` run did.
public struct LiveSummary: Sendable {
    /// From start to stop, in seconds.
    public var duration: Double
    /// One entry per strap, in the order given.
    public var straps: [StrapSummary]
    /// Samples committed to the store (0 with no storage).
    public var samplesStored: Int
    /// Transactions committed.
    public var batches: Int
    /// Samples that could not be saved when the run ended (the store kept failing).
    public var unsaved: Int

    public var notifications: Int { straps.reduce(0) { $0 + $1.notifications } }
    public var minBPM: Int? { straps.compactMap(\.minBPM).min() }
    public var maxBPM: Int? { straps.compactMap(\.maxBPM).max() }
    public var averageBPM: Double? {
        let n = straps.reduce(0) { $0 + $1.bpmCount }
        return n > 0 ? Double(straps.reduce(0) { $0 + $1.bpmSum }) / Double(n) : nil
    }
}

/// Where `live` keeps what it receives.
public protocol LiveStorage: AnyObject, Sendable {
    /// Saves a batch of samples in one transaction (throws: nothing of it was kept).
    func save(_ samples: [QuantitySample]) throws
    /// Records a (re)connection: the device's registry entry, last seen, battery, location.
    func connected(_ target: StrapTarget, device: Device, info: StrapInfo, at: Date) throws
    /// Records a new battery level and that the strap was seen.
    func battery(_ target: StrapTarget, level: UInt8, at: Date) throws
}

/// The health store as ``LiveStorage``: samples in batches, the strap in the device registry.
public final class HealthStoreLiveStorage: LiveStorage {
    public let store: HealthStore
    public init(_ store: HealthStore) { self.store = store }

    public func save(_ samples: [QuantitySample]) throws { try store.save(samples) }

    public func connected(_ target: StrapTarget, device: Device, info: StrapInfo, at: Date) throws {
        try store.upsertDevice(DeviceRecord(
            device: device, kind: .ble, address: target.address.description, addressType: target.addressType.rawValue,
            lastSeen: at, battery: info.battery.map { Int($0) }, sensorLocation: info.sensorLocation))
    }

    public func battery(_ target: StrapTarget, level: UInt8, at: Date) throws {
        try store.markDeviceSeen(localIdentifier: target.localIdentifier, at: at, battery: Int(level))
    }
}

/// `live`'s engine: keeps every strap connected (``StrapRunner``), decodes each notification,
/// turns it into samples (``HeartRateSampleBuilder``: heartRate with RR and contact,
/// activeEnergyBurned from energy deltas, a gap mark after each reconnect), and saves them in
/// **batches** — one transaction per ``flushInterval``, never one per notification — then a
/// last batch when stopped. A failing save keeps its batch and retries it.
public final class LiveSession: Sendable {
    private final class StrapState: Sendable {
        let target: StrapTarget
        let state: Mutex<(builder: HeartRateSampleBuilder, summary: StrapSummary, knowsDevice: Bool)>
        init(_ target: StrapTarget) {
            self.target = target
            state = Mutex((HeartRateSampleBuilder(device: nil, sensorLocation: nil), StrapSummary(target: target), false))
        }
    }

    private let straps: [StrapState]
    private let connector: StrapConnector
    private let policy: ReconnectPolicy
    private let stop: StopSignal
    private let storage: (any LiveStorage)?
    private let flushInterval: Double
    private let maxNotifications: Int?
    private let transactionTimeout: Duration
    private let events: @Sendable (LiveEvent) -> Void
    private let pending = Mutex<[QuantitySample]>([])
    private let totals = Mutex<(stored: Int, batches: Int, notifications: Int)>((0, 0, 0))

    /// - Parameters:
    ///   - targets: the straps (each gets its own connection loop).
    ///   - storage: where samples go; `nil` for `--no-store`.
    ///   - flushInterval: seconds between batch commits.
    ///   - maxNotifications: stop after this many notifications in all (`--count`).
    ///   - events: progress for the display, called from several threads.
    public init(targets: [StrapTarget], connector: @escaping StrapConnector, policy: ReconnectPolicy = ReconnectPolicy(),
                stop: StopSignal, storage: (any LiveStorage)?, flushInterval: Double = 1, maxNotifications: Int? = nil,
                transactionTimeout: Duration = .seconds(30), events: @escaping @Sendable (LiveEvent) -> Void) {
        self.straps = targets.map(StrapState.init)
        self.connector = connector
        self.policy = policy
        self.stop = stop
        self.storage = storage
        self.flushInterval = flushInterval
        self.maxNotifications = maxNotifications
        self.transactionTimeout = transactionTimeout
        self.events = events
    }

    /// Runs until the stop signal (or ``maxNotifications``), then commits what is pending.
    /// - Throws: an error no retry can fix (no Bluetooth, no permission, not a strap), after
    ///   stopping every strap and committing what was received.
    public func run() async throws -> LiveSummary {
        let started = monotonicSeconds()
        var failure: (any Error)?
        await withTaskGroup(of: (any Error)?.self) { group in
            group.addTask { [self] in
                while !stop.isTriggered {
                    // Sleep in short steps so a stop is noticed at once.
                    let due = monotonicSeconds() + max(0.01, flushInterval)
                    while !stop.isTriggered && monotonicSeconds() < due {
                        try? await Task.sleep(for: .milliseconds(Int(min(0.05, max(0.001, due - monotonicSeconds())) * 1000) + 1))
                    }
                    if !stop.isTriggered { flush() }
                }
                return nil
            }
            for strap in straps {
                group.addTask { [self] in
                    let runner = StrapRunner(target: strap.target, connector: connector, policy: policy, stop: stop,
                                             transactionTimeout: transactionTimeout) { [self] e in handle(e, strap) }
                    do { try await runner.run(); return nil } catch {
                        stop.trigger()
                        return error
                    }
                }
            }
            for await result in group { if failure == nil, let result { failure = result } }
        }
        // Last batch: a few tries, then report what could not be saved.
        var unsaved = 0
        for attempt in 0..<3 {
            if flush() { break }
            if attempt < 2 { try? await Task.sleep(for: .milliseconds(200)) }
        }
        unsaved = pending.withLock { $0.count }
        if let failure { throw failure }
        let t = totals.withLock { $0 }
        return LiveSummary(duration: monotonicSeconds() - started,
                           straps: straps.map { $0.state.withLock { $0.summary } },
                           samplesStored: t.stored, batches: t.batches, unsaved: unsaved)
    }

    /// Commits the pending samples in one transaction. Returns false when the store failed
    /// (the batch is put back in front, in order).
    @discardableResult
    private func flush() -> Bool {
        guard let storage else { return true }
        let batch = pending.withLock { p -> [QuantitySample] in defer { p.removeAll() }; return p }
        guard !batch.isEmpty else { return true }
        do {
            try storage.save(batch)
            totals.withLock { $0.stored += batch.count; $0.batches += 1 }
            return true
        } catch {
            pending.withLock { $0.insert(contentsOf: batch, at: 0) }
            events(.storeFailed("\(error)"))
            return false
        }
    }

    private func handle(_ event: StrapEvent, _ strap: StrapState) {
        switch event {
        case .connected(let target, let info, let n):
            strap.state.withLock { s in
                if !s.knowsDevice {
                    s.builder.device = info.device(for: target)
                    s.builder.sensorLocation = info.sensorLocation
                    s.knowsDevice = true
                }
                s.builder.connectionStarted(energyContinues: true)
                s.summary.connections = n
            }
            if let storage {
                do { try storage.connected(target, device: info.device(for: target), info: info, at: Date()) } catch {
                    events(.storeFailed("\(error)"))
                }
            }
            events(.connected(target, info, connection: n))
        case .heartRate(let target, let payload, let at, let n, _):
            var reading = LiveReading(target: target, receivedAt: at, payload: payload, measurement: nil, rejection: nil, connection: n)
            var samples: [QuantitySample] = []
            do {
                let m = try HeartRateMeasurement.decode(bytes: payload)
                reading.measurement = m
                samples = strap.state.withLock { s -> [QuantitySample] in
                    s.summary.notifications += 1
                    if m.beatsPerMinute > 0 {
                        let bpm = Int(m.beatsPerMinute)
                        s.summary.minBPM = min(s.summary.minBPM ?? bpm, bpm)
                        s.summary.maxBPM = max(s.summary.maxBPM ?? bpm, bpm)
                        s.summary.bpmSum += bpm
                        s.summary.bpmCount += 1
                    }
                    let out = (try? s.builder.add(m, receivedAt: at))?.samples ?? []
                    s.summary.counters = s.builder.counters
                    return out
                }
            } catch {
                reading.rejection = "\(error)"
                strap.state.withLock { $0.summary.notifications += 1; $0.summary.rejected += 1 }
            }
            if storage != nil, !samples.isEmpty { pending.withLock { $0.append(contentsOf: samples) } }
            events(.reading(reading))
            let total = totals.withLock { t -> Int in t.notifications += 1; return t.notifications }
            if let maxNotifications, total >= maxNotifications { stop.trigger() }
        case .battery(let target, let level, let at):
            if let storage {
                do { try storage.battery(target, level: level, at: at) } catch { events(.storeFailed("\(error)")) }
            }
            events(.battery(target, level: level, at: at))
        case .disconnected(let target, let reason):
            events(.disconnected(target, reason: reason))
        case .connectFailed(let target, let reason, let pause):
            events(.connectFailed(target, reason: reason, retryIn: pause))
        }
    }
}
