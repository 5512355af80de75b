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
/// the notifications become records by ``HeartRateRecordMapper`` — the rules `live` applies:
/// heart rate with contact, body sensor location (read on every connection) and RR intervals
/// (the first after a (re)connect flagged as preceded by a gap), and Energy Expended as
/// `activeEnergyBurned` intervals that continue across reconnects. Notifications with 0 bpm
/// (no skin contact on many straps) and payloads without a heart-rate value are counted, not
/// stored.
public struct StrapSource: IngestSource {
    public let name: String
    public let reconnects: Bool
    /// A stable id for the device registry: the strap's Bluetooth address (`AA:BB:…`), as
    /// `pair` and `live` register it, so every command files the strap under one device.
    public let localIdentifier: String
    private let alias: String?
    private let connect: @Sendable (IngestStop) throws -> any ATTBearer
    private let counters: Counters
    private let mapper = MapperBox()

    /// The record mapper, kept across connections (energy continues over an outage). Touched
    /// only by the GATT reader thread of the current connection and by setup before it
    /// subscribes: a connection's `run` returns only after its reader thread has ended, so two
    /// connections never touch it at once.
    final class MapperBox: @unchecked Sendable {
        var mapper: HeartRateRecordMapper?
    }

    /// Per-strap counters (any thread).
    public final class Counters: Sendable {
        /// Notifications decoded and pushed.
        public let pushed = Atomic<Int>(0)
        /// Notifications skipped: 0 bpm, or no heart-rate value at all.
        public let skipped = Atomic<Int>(0)
        /// Connections made.
        public let connections = Atomic<Int>(0)
        /// Subscribed to Heart Rate Measurement right now.
        public let subscribed = Atomic<Bool>(false)
        init() {}
    }

    /// The strap's counters.
    public var stats: Counters { counters }

    /// The source HealthGate's BLE samples carry.
    public static let source = Source(name: "HealthGate BLE", identifier: "org.healthgate.ble")

    /// What a connection learned about the strap, for the device registry (`healthgate devices`).
    public struct Connection: Sendable {
        /// Which connection this is: 1 for the first, above 1 a reconnect.
        public var number: Int
        /// The device record: name, Device Information strings, the local identifier.
        public var device: Device
        /// The Body Sensor Location, when the strap has one.
        public var sensorLocation: HeartRateSensorLocation?
        /// The Battery Level in percent, when the strap has the Battery service.
        public var battery: Int?
        /// When the connection was set up.
        public var at: Date
    }

    /// What happens to the strap, once per event: for the log, the device registry and
    /// front-ends (``StrapEventLog``, ``StrapRegistry``).
    public enum Event: Sendable {
        /// Connected and set up (discovery done, the device record read); notifications are
        /// enabled next.
        case connected(Connection)
        /// Heart Rate Measurement notifications are on (the CCCD was written) for connection
        /// `number`.
        case subscribed(connection: Int)
        /// A Battery Level notification.
        case battery(level: Int, at: Date)
        /// The link of a set-up connection ended by itself (not by a stop); the runner reconnects.
        case disconnected(reason: String)
    }

    private let events: (@Sendable (Event) -> Void)?

    /// A strap reached through `connect` (called once per connection attempt; it should give up
    /// when the stop signal is raised). `events` hears every ``Event``, on the connection's
    /// threads (the GATT reader's for battery notifications), so it should hand slow work (a
    /// store write) to a queue of its own.
    public init(name: String, localIdentifier: String, alias: String? = nil, reconnects: Bool = true,
                events: (@Sendable (Event) -> Void)? = nil,
                connect: @escaping @Sendable (IngestStop) throws -> any ATTBearer) {
        self.name = name
        self.localIdentifier = localIdentifier
        self.alias = alias
        self.reconnects = reconnects
        self.connect = connect
        self.counters = Counters()
        self.events = events
    }

    /// Why a set-up connection ended: already reported as ``Event/disconnected(reason:)``, so
    /// the runner does not log it again.
    struct LinkEnded: Error, ReportedBySource, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    public func run(into ring: SampleRing, slots: SlotTable, stop: IngestStop) throws {
        let bearer = try connect(stop)
        let ended = DispatchSemaphore(value: 0)
        let client = GATTClient(bearer: bearer, transactionTimeout: .seconds(10), onDisconnect: { _ in ended.signal() })
        let hook = stop.onRaise { client.close() }
        defer {
            hook.cancel()   // this connection is over: the hook must not keep it alive
            // The mapper goes to the next connection: this one's reader must be done with it.
            client.close()
            client.waitForReaderToEnd()
        }
        let number = counters.connections.add(1, ordering: .relaxed).newValue
        let setupError = Mutex<(any Error)?>(nil)
        let setupDone = DispatchSemaphore(value: 0)
        let (name, alias, localIdentifier, counters, mapper) = (self.name, self.alias, self.localIdentifier, self.counters, self.mapper)
        let events = self.events
        Task {
            do {
                try await Self.setUp(client: client, ring: ring, slots: slots, name: name, alias: alias,
                                     localIdentifier: localIdentifier, counters: counters, mapper: mapper,
                                     number: number, events: events)
            } catch {
                setupError.withLock { $0 = error }
                client.close()
            }
            setupDone.signal()
        }
        setupDone.wait()
        if let e = setupError.withLock({ $0 }) { throw e }
        counters.subscribed.store(true, ordering: .relaxed)
        events?(.subscribed(connection: number))
        ended.wait()
        counters.subscribed.store(false, ordering: .relaxed)
        if stop.isRaised { return }
        let why = client.endReason.map { "\($0)" } ?? "the link ended"
        events?(.disconnected(reason: why))
        throw LinkEnded(reason: why)
    }

    private static func setUp(client: GATTClient, ring: SampleRing, slots: SlotTable, name: String, alias: String?,
                              localIdentifier: String, counters: Counters, mapper: MapperBox,
                              number: Int, events: (@Sendable (Event) -> Void)?) async throws {
        _ = try await client.exchangeMTU()
        let db = try await client.discover(services: [BluetoothUUID(HeartRateUUIDs.heartRateService),
                                                      BluetoothUUID(HeartRateUUIDs.deviceInformationService),
                                                      BluetoothUUID(HeartRateUUIDs.batteryService),
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
        var location: HeartRateSensorLocation?
        if let c = db.characteristic(BluetoothUUID(HeartRateUUIDs.bodySensorLocation)), let v = try? await client.read(c),
           let bsl = try? BodySensorLocation(bytes: v) {
            location = bsl.location
        }
        let device = info.device(name: deviceName ?? name, localIdentifier: localIdentifier)
        let batteryChar = db.characteristic(BluetoothUUID(HeartRateUUIDs.batteryLevel))
        var battery: Int?
        if let c = batteryChar, let v = try? await client.read(c) { battery = try? BatteryLevel.decode(v) }
        events?(.connected(Connection(number: number, device: device, sensorLocation: location, battery: battery, at: Date())))
        if let events, let c = batteryChar, c.cccdHandle != nil {
            // Not every strap notifies its battery; one that does keeps the registry current.
            try? await client.subscribe(to: c) { event in
                if let level = try? BatteryLevel.decode(Array(event.value)) { events(.battery(level: level, at: event.receivedAt)) }
            }
        }
        let recordSlots = try HeartRateRecordMapper.Slots(table: slots, source: source, device: device)
        if mapper.mapper == nil { mapper.mapper = HeartRateRecordMapper(slots: recordSlots) }
        mapper.mapper!.slots = recordSlots
        mapper.mapper!.sensorLocation = location
        mapper.mapper!.connectionStarted()
        try await client.subscribe(to: hrm) { event in
            // The GATT reader thread: this ring's single producer for this connection.
            guard let m = try? HeartRateMeasurement.decode(event.value) else {
                counters.skipped.add(1, ordering: .relaxed)
                return
            }
            let stored = mapper.mapper!.map(m, at: event.receivedAt.timeIntervalSince1970, payload: event.value) { r, extra in
                if let extra { ring.push(r, attachment: extra) } else { ring.push(r) }
            }
            if stored { counters.pushed.add(1, ordering: .relaxed) } else { counters.skipped.add(1, ordering: .relaxed) }
        }
    }
}
