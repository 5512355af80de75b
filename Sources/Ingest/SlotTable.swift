import HealthModel
import Synchronization
import Locking

/// The small ids a ``SampleRecord`` uses for its type, source and device.
///
/// A source registers what it will write once, before it produces (registration takes a lock
/// and allocates, which is fine off the hot path); then each record names them by slot. The
/// writer and observers turn slots back into values. Slots are never reused or removed, so a
/// record stays meaningful for as long as the table lives. Thread-safe.
package final class SlotTable: Sendable {
    /// The device slot of a record that has no device.
    package static let noDevice: UInt16 = .max

    private struct Tables {
        var types: [QuantityType] = []
        var sources: [Source] = []
        var devices: [Device] = []
    }
    private let tables = Lock(Tables())

    /// Creates an empty table.
    package init() {}

    /// The slot for `type`, registering it on first use.
    /// - Throws: ``IngestError/tooManySlots(_:)`` past 65,535 distinct entries.
    package func slot(for type: QuantityType) throws(IngestError) -> UInt16 {
        try tables.withLock { t throws(IngestError) in try Self.intern(type, in: &t.types, kind: "quantity types") }
    }

    /// The slot for `source`, registering it on first use.
    package func slot(for source: Source) throws(IngestError) -> UInt16 {
        try tables.withLock { t throws(IngestError) in try Self.intern(source, in: &t.sources, kind: "sources") }
    }

    /// The slot for `device` (``noDevice`` for `nil` or an empty device), registering it on first use.
    package func slot(for device: Device?) throws(IngestError) -> UInt16 {
        guard let device, !device.isEmpty else { return Self.noDevice }
        return try tables.withLock { t throws(IngestError) in try Self.intern(device, in: &t.devices, kind: "devices") }
    }

    /// The type registered at `slot`, or nil.
    package func type(_ slot: UInt16) -> QuantityType? {
        tables.withLock { t in Int(slot) < t.types.count ? t.types[Int(slot)] : nil }
    }

    /// The source registered at `slot`, or nil.
    package func source(_ slot: UInt16) -> Source? {
        tables.withLock { t in Int(slot) < t.sources.count ? t.sources[Int(slot)] : nil }
    }

    /// The device registered at `slot`, or nil (also for ``noDevice``).
    package func device(_ slot: UInt16) -> Device? {
        tables.withLock { t in Int(slot) < t.devices.count ? t.devices[Int(slot)] : nil }
    }

    /// A consistent copy of all three tables, for a writer resolving a whole batch at once.
    package func snapshot() -> (types: [QuantityType], sources: [Source], devices: [Device]) {
        tables.withLock { t in (t.types, t.sources, t.devices) }
    }

    private static func intern<T: Equatable>(_ value: T, in list: inout [T], kind: String) throws(IngestError) -> UInt16 {
        if let i = list.firstIndex(of: value) { return UInt16(i) }
        guard list.count < Int(noDevice) else { throw .tooManySlots(kind) }
        list.append(value)
        return UInt16(list.count - 1)
    }
}
