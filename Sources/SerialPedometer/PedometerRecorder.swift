import Foundation
import HealthModel
import HealthStore

/// Stores one pedometer's step samples in batches, together with its counter state.
///
/// The samples of a batch and the counter state after them are written in **one transaction**
/// (``HealthStore/save(_:state:)``), so the store never holds samples without the state that
/// produced them or the reverse. After a crash or restart the counter resumes from the last
/// committed state; readings after it are counted again from there, and because the counter is
/// cumulative the steps of an uncommitted batch are not lost: the next committed sample covers
/// them. Sync identifiers make a re-save of the same samples harmless.
///
/// Thread rules: not thread-safe; use it from one task or thread at a time.
public final class PedometerRecorder {
    /// The store.
    public let store: HealthStore
    /// The device id (keys the state).
    public let deviceID: String
    /// The source samples are written with.
    public let source: Source
    /// The device samples are attributed to.
    public let device: Device?
    /// Samples waiting for the next ``flush(state:)``.
    public private(set) var pending: [QuantitySample] = []
    /// Samples written so far.
    public private(set) var saved = 0

    /// The source serial pedometer samples are written with.
    public static let defaultSource = Source(name: "HealthGate serial", identifier: "org.healthgate.serial")

    /// The state-table key for a device's counter.
    public static func stateKey(deviceID: String) -> String { "serial.counter.\(deviceID)" }

    /// Creates a recorder for one device.
    public init(store: HealthStore, deviceID: String, source: Source = PedometerRecorder.defaultSource,
                device: Device? = nil) {
        self.store = store
        self.deviceID = deviceID
        self.source = source
        self.device = device
    }

    /// The device's persisted counter state, or nil when it was never seen (or the stored value
    /// cannot be read, which is treated as never seen: the next reading takes a new baseline).
    public func loadState() throws -> CounterState? {
        guard let data = try store.state(Self.stateKey(deviceID: deviceID)) else { return nil }
        return try? JSONDecoder().decode(CounterState.self, from: data)
    }

    /// Queues a step interval for the next flush.
    public func add(_ interval: StepInterval) throws {
        pending.append(try interval.quantitySample(source: source, device: device))
    }

    /// Writes the pending samples and `state` in one transaction. On error nothing is written and
    /// the samples stay pending.
    @discardableResult
    public func flush(state: CounterState) throws -> SaveSummary {
        let data = try JSONEncoder().encode(state)
        let summary = try store.save(pending, state: [Self.stateKey(deviceID: deviceID): data])
        saved += pending.count
        pending.removeAll()
        return summary
    }
}
