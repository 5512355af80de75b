import Foundation
import GATT
import HealthModel
import HeartRateProfile
import Ingest
import Synchronization

/// A BLE heart-rate strap as an ingest source: over any ATT bearer (the kernel's L2CAP socket
/// or a Unix socket carrying the ATT channel for `run`, a socket pair to the simulated strap for
/// `demo`), it exchanges the MTU, discovers
/// the Heart Rate, Device Information and Battery services, reads the device record, subscribes
/// to Heart Rate Measurement and, on the GATT reader thread, decodes each notification straight
/// into a ``SampleRecord`` and pushes it: no allocation and no lock per notification.
///
/// Every connection rediscovers and re-subscribes (non-bonded straps forget their CCCD), and
/// the first RR intervals after a (re)connect are flagged as preceded by a gap. Notifications
/// with 0 bpm (no skin contact on many straps) and payloads without a heart-rate value are
/// counted, not stored.
public struct StrapSource: IngestSource {
    public let name: String
    public let reconnects: Bool
    /// A stable id for the device registry: the strap's Bluetooth address (`AA:BB:…`), as
    /// `pair` and `live` register it, so every command files the strap under one device.
    public let localIdentifier: String
    private let alias: String?
    private let connect: @Sendable (IngestStop) throws -> any ATTBearer
    private let counters: Counters

    /// Per-strap counters (any thread).
    public final class Counters: Sendable {
        /// Notifications decoded and pushed.
        public let pushed = Atomic<Int>(0)
        /// Notifications skipped: 0 bpm, or no heart-rate value at all.
        public let skipped = Atomic<Int>(0)
        /// Connections made.
        public let connections = Atomic<Int>(0)
        init() {}
    }

    /// The strap's counters.
    public var stats: Counters { counters }

    /// The source HealthGate's BLE samples carry.
    public static let source = Source(name: "HealthGate BLE", identifier: "org.healthgate.ble")

    /// A strap reached through `connect` (called once per connection attempt; it should give up
    /// when the stop signal is raised).
    public init(name: String, localIdentifier: String, alias: String? = nil, reconnects: Bool = true,
                connect: @escaping @Sendable (IngestStop) throws -> any ATTBearer) {
        self.name = name
        self.localIdentifier = localIdentifier
        self.alias = alias
        self.reconnects = reconnects
        self.connect = connect
        self.counters = Counters()
    }

    public func run(into ring: SampleRing, slots: SlotTable, stop: IngestStop) throws {
        let bearer = try connect(stop)
        let ended = DispatchSemaphore(value: 0)
        let client = GATTClient(bearer: bearer, transactionTimeout: .seconds(10), onDisconnect: { _ in ended.signal() })
        stop.onRaise { client.close() }
        counters.connections.add(1, ordering: .relaxed)
        let setupError = Mutex<(any Error)?>(nil)
        let setupDone = DispatchSemaphore(value: 0)
        let (name, alias, localIdentifier, counters) = (self.name, self.alias, self.localIdentifier, self.counters)
        Task {
            do {
                try await Self.setUp(client: client, ring: ring, slots: slots, name: name, alias: alias,
                                     localIdentifier: localIdentifier, counters: counters)
            } catch {
                setupError.withLock { $0 = error }
                client.close()
            }
            setupDone.signal()
        }
        setupDone.wait()
        if let e = setupError.withLock({ $0 }) { throw e }
        ended.wait()
        client.close()
        if stop.isRaised { return }
        if let why = client.endReason { throw why }
    }

    private static func setUp(client: GATTClient, ring: SampleRing, slots: SlotTable, name: String, alias: String?,
                              localIdentifier: String, counters: Counters) async throws {
        _ = try await client.exchangeMTU()
        let db = try await client.discover(services: [BluetoothUUID(HeartRateUUIDs.heartRateService),
                                                      BluetoothUUID(HeartRateUUIDs.deviceInformationService),
                                                      BluetoothUUID(0x1800)])
        guard let hrm = db.characteristic(BluetoothUUID(HeartRateUUIDs.heartRateMeasurement)) else {
            throw GATTError.noCCCD(characteristic: BluetoothUUID(HeartRateUUIDs.heartRateMeasurement))
        }
        var info = DeviceInformation()
        for uuid in DeviceInformation.characteristicUUIDs {
            if let c = db.characteristic(BluetoothUUID(uuid)), let v = try? await client.read(c) { info.set(v, for: uuid) }
        }
        var deviceName = alias
        if deviceName == nil, let c = db.characteristic(BluetoothUUID(HeartRateUUIDs.deviceName)), let v = try? await client.read(c) {
            deviceName = DeviceInformation.string(v)
        }
        let typeSlot = try slots.slot(for: .heartRate)
        let sourceSlot = try slots.slot(for: source)
        let deviceSlot = try slots.slot(for: info.device(name: deviceName ?? name, localIdentifier: localIdentifier))
        let firstAfterConnect = Atomic<Bool>(true)
        try await client.subscribe(to: hrm) { event in
            // The GATT reader thread: this ring's single producer for this connection.
            guard let m = try? HeartRateMeasurement.decode(event.value), m.beatsPerMinute > 0 else {
                counters.skipped.add(1, ordering: .relaxed)
                return
            }
            let t = event.receivedAt.timeIntervalSince1970
            var flags: SampleRecord.Flags = []
            switch m.sensorContact {
            case .notSupported: break
            case .notDetected: flags.insert(.contactSupported)
            case .detected: flags.formUnion([.contactSupported, .contactDetected])
            }
            var r = SampleRecord(typeSlot: typeSlot, value: Double(m.beatsPerMinute), start: t, end: t,
                                 sourceSlot: sourceSlot, deviceSlot: deviceSlot, flags: flags)
            for tick in m.rrIntervals where tick != 0 && tick != 0xFFFF { r.appendRR(tick) }
            if r.rrCount > 0, firstAfterConnect.exchange(false, ordering: .relaxed) { r.flags.insert(.rrPrecededByGap) }
            ring.push(r)
            counters.pushed.add(1, ordering: .relaxed)
        }
    }
}
