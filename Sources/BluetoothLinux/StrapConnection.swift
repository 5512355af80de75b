import Foundation
import GATT
import HealthModel
import Synchronization

/// A heart-rate strap to connect to: where it is, and how HealthGate names it.
public struct StrapTarget: Sendable, Hashable, CustomStringConvertible {
    /// The strap's address.
    public var address: BluetoothAddress
    /// Public or random: both are needed to connect.
    public var addressType: AddressType
    /// The user's name for it (its alias), or its advertised name, if known.
    public var name: String?

    public init(address: BluetoothAddress, addressType: AddressType, name: String? = nil) {
        self.address = address
        self.addressType = addressType
        self.name = name
    }

    /// The registry and sample key for a BLE device: its address (`AA:BB:CC:DD:EE:FF`).
    public var localIdentifier: String { address.description }

    /// `chest (C4:7C:8D:6A:1F:02)`, or just the address.
    public var description: String { name.map { "\($0) (\(address))" } ?? address.description }

    /// The address type to use when none is given: the stored one if known, else random for a
    /// static random address (top two bits `11`, what straps without a public address use),
    /// else public. A wrong guess shows up as a connect timeout; `--address-type` overrides it.
    public static func guessAddressType(_ address: BluetoothAddress) -> AddressType {
        address.randomKind == .staticAddress ? .random : .public
    }
}

/// Makes a connected ATT bearer to a strap. The kernel's is ``kernelConnector(adapter:security:timeout:)``;
/// tests pass one that connects to a simulated strap over a socket pair.
public typealias StrapConnector = @Sendable (StrapTarget, StopSignal) throws -> any ATTBearer

/// Connects over the kernel's L2CAP ATT socket.
public func kernelConnector(adapter: Adapter?, security: SecurityLevel = .low, timeout: Double = 10) -> StrapConnector {
    { target, stop in
        let socket = try L2CAPSocket.connect(to: target.address, type: target.addressType, adapter: adapter,
                                             security: security, timeout: timeout, stop: stop)
        if security != .low {
            // The kernel pairs as soon as the link is up; make sure the level was reached.
            try socket.raiseSecurity(to: security, timeout: 15)
        }
        return socket
    }
}

/// What HealthGate reads from a strap once connected: Device Information (0x180A), Body Sensor
/// Location (0x2A38), Battery Level (0x2A19), the GAP name (0x2A00) and which optional
/// characteristics it has. Every field is optional: a strap may lack any of them.
public struct StrapInfo: Sendable, Hashable {
    public var gapName: String?
    public var manufacturer: String?
    public var model: String?
    public var serialNumber: String?
    public var hardwareRevision: String?
    public var firmwareRevision: String?
    public var softwareRevision: String?
    /// Body Sensor Location as sent (0–6 defined, 7–255 reserved).
    public var sensorLocationRaw: UInt8?
    /// Battery level in percent.
    public var battery: UInt8?
    /// Whether the strap has a Heart Rate Control Point (0x2A39: reset energy expended).
    public var hasControlPoint = false
    /// Whether the Battery Level can be subscribed to.
    public var batteryNotifies = false

    public init() {}

    /// The location as HealthKit's enumeration; reserved values (7–255) are `.other`.
    public var sensorLocation: HeartRateSensorLocation? {
        sensorLocationRaw.map { HeartRateSensorLocation(rawValue: Int($0)) ?? .other }
    }

    /// The device record for samples and the registry (HKDevice fields), keyed by address.
    public func device(for target: StrapTarget, advertisedName: String? = nil) -> Device {
        Device(name: gapName ?? advertisedName ?? target.name, manufacturer: manufacturer, model: model,
               hardwareVersion: hardwareRevision, firmwareVersion: firmwareRevision,
               softwareVersion: softwareRevision, localIdentifier: target.localIdentifier)
    }
}

/// The UUIDs HealthGate uses.
public enum StrapUUID {
    public static let heartRateService: BluetoothUUID = 0x180D
    public static let heartRateMeasurement: BluetoothUUID = 0x2A37
    public static let bodySensorLocation: BluetoothUUID = 0x2A38
    public static let heartRateControlPoint: BluetoothUUID = 0x2A39
    public static let deviceInformation: BluetoothUUID = 0x180A
    public static let battery: BluetoothUUID = 0x180F
    public static let batteryLevel: BluetoothUUID = 0x2A19
    public static let genericAccess: BluetoothUUID = 0x1800
    public static let deviceName: BluetoothUUID = 0x2A00
}

/// One GATT connection to a strap: discovery done, ready to read, subscribe and write.
///
/// Discovery runs on every connection (handles may differ) and subscriptions must be made on
/// every connection (non-bonded straps forget their CCCDs). ``close()`` ends the link.
public final class StrapConnection: Sendable {
    /// The strap.
    public let target: StrapTarget
    /// The GATT client over the bearer.
    public let client: GATTClient
    /// What discovery found.
    public let database: GATTDatabase
    private let ended: Mutex<String?>

    private init(target: StrapTarget, client: GATTClient, database: GATTDatabase) {
        self.target = target
        self.client = client
        self.database = database
        self.ended = Mutex(nil)
    }

    /// Takes over `bearer`, exchanges MTUs and discovers the services HealthGate uses.
    /// - Throws: ``BluetoothError`` `.notSupported` when the device has no Heart Rate
    ///   Measurement, or the link's failure (``GATTError``).
    /// The services read on a first connection.
    public static let allServices = [StrapUUID.heartRateService, StrapUUID.deviceInformation, StrapUUID.battery,
                                     StrapUUID.genericAccess]
    /// The services a reconnect needs (heart rate and battery): fewer round trips before
    /// notifications resume.
    public static let streamingServices = [StrapUUID.heartRateService, StrapUUID.battery]

    public static func open(_ target: StrapTarget, bearer: any ATTBearer, transactionTimeout: Duration = .seconds(30),
                            services: [BluetoothUUID] = StrapConnection.allServices) async throws -> StrapConnection {
        let box = EndBox()
        let client = GATTClient(bearer: bearer, transactionTimeout: transactionTimeout) { reason in
            box.set(Self.describe(reason))
        }
        do {
            _ = try? await client.exchangeMTU()
            let db = try await client.discover(services: services)
            guard db.characteristic(StrapUUID.heartRateMeasurement, in: StrapUUID.heartRateService) != nil else {
                client.close()
                throw BluetoothError(.notSupported,
                                     "\(target) has no Heart Rate Measurement characteristic (0x2A37): it is not a heart-rate strap; check the address with `healthgate scan`.")
            }
            let connection = StrapConnection(target: target, client: client, database: db)
            box.attach(connection)
            return connection
        } catch {
            client.close()
            throw error
        }
    }

    /// Connects with `connector` (on its own thread: a kernel connect blocks for seconds) and
    /// opens the connection.
    public static func connect(_ target: StrapTarget, connector: @escaping StrapConnector, stop: StopSignal,
                               transactionTimeout: Duration = .seconds(30)) async throws -> StrapConnection {
        let bearer = try await onThread { try connector(target, stop) }
        return try await open(target, bearer: bearer, transactionTimeout: transactionTimeout)
    }

    /// The kernel socket under this connection, when it is one (for its security level).
    public var kernelSocket: L2CAPSocket? { client.bearer as? L2CAPSocket }

    /// Why the link ended, or `nil` while it is up.
    public var endReason: String? { ended.withLock { $0 } }

    fileprivate func markEnded(_ reason: String) {
        ended.withLock { if $0 == nil { $0 = reason } }
    }

    /// Reads everything ``StrapInfo`` holds. Characteristics the strap lacks or refuses to
    /// read are left `nil`; a lost link throws.
    public func readInfo() async throws -> StrapInfo {
        var info = StrapInfo()
        info.gapName = try await readString(StrapUUID.deviceName, in: StrapUUID.genericAccess)
        info.manufacturer = try await readString(0x2A29, in: StrapUUID.deviceInformation)
        info.model = try await readString(0x2A24, in: StrapUUID.deviceInformation)
        info.serialNumber = try await readString(0x2A25, in: StrapUUID.deviceInformation)
        info.hardwareRevision = try await readString(0x2A27, in: StrapUUID.deviceInformation)
        info.firmwareRevision = try await readString(0x2A26, in: StrapUUID.deviceInformation)
        info.softwareRevision = try await readString(0x2A28, in: StrapUUID.deviceInformation)
        info.sensorLocationRaw = try await readOptional(StrapUUID.bodySensorLocation, in: StrapUUID.heartRateService)?.first
        info.battery = try await readBattery()
        info.hasControlPoint = database.characteristic(StrapUUID.heartRateControlPoint, in: StrapUUID.heartRateService) != nil
        info.batteryNotifies = database.characteristic(StrapUUID.batteryLevel, in: StrapUUID.battery)?.cccdHandle != nil
        return info
    }

    /// Reads the battery level (percent), or `nil` without a Battery service.
    public func readBattery() async throws -> UInt8? {
        try await readOptional(StrapUUID.batteryLevel, in: StrapUUID.battery)?.first
    }

    /// Subscribes to Heart Rate Measurement notifications (writes the CCCD).
    /// `handler` runs on the client's reader thread with the payload bytes and receipt time.
    public func subscribeHeartRate(_ handler: @escaping @Sendable ([UInt8], Date) -> Void) async throws {
        guard let c = database.characteristic(StrapUUID.heartRateMeasurement, in: StrapUUID.heartRateService) else { return }
        try await client.subscribe(to: c) { event in handler(Array(event.value), event.receivedAt) }
    }

    /// Subscribes to Battery Level notifications when the strap offers them; returns whether it did.
    @discardableResult
    public func subscribeBattery(_ handler: @escaping @Sendable (UInt8, Date) -> Void) async throws -> Bool {
        guard let c = database.characteristic(StrapUUID.batteryLevel, in: StrapUUID.battery), c.cccdHandle != nil else { return false }
        do {
            try await client.subscribe(to: c) { event in
                if let level = event.value.first { handler(level, event.receivedAt) }
            }
            return true
        } catch let e as GATTError {
            if case .attribute = e { return false }  // optional: a refusal is not fatal
            throw e
        }
    }

    /// Writes 0x01 (Reset Energy Expended) to the Heart Rate Control Point.
    /// - Throws: ``BluetoothError`` `.notSupported` when the strap has no control point or
    ///   answers 0x80 (Control Point Not Supported); other ``GATTError``s as they come.
    public func resetEnergyExpended() async throws {
        guard let c = database.characteristic(StrapUUID.heartRateControlPoint, in: StrapUUID.heartRateService) else {
            throw BluetoothError(.notSupported,
                                 "\(target) has no Heart Rate Control Point (0x2A39): it does not count energy expended, so there is nothing to reset.")
        }
        do {
            try await client.write([0x01], to: c)
        } catch GATTError.attribute(let code, _, _) where code.rawValue == 0x80 {
            throw BluetoothError(.notSupported,
                                 "\(target) answered \"Heart Rate Control Point Not Supported\" (0x80) to Reset Energy Expended: it cannot reset its energy counter.")
        }
    }

    /// Ends the link (for L2CAP this disconnects the strap). Idempotent.
    public func close() {
        markEnded("closed by HealthGate")
        client.close()
    }

    private func readOptional(_ uuid: BluetoothUUID, in service: BluetoothUUID) async throws -> [UInt8]? {
        guard let c = database.characteristic(uuid, in: service), c.properties.contains(.read) else { return nil }
        do { return try await client.read(c) } catch let e as GATTError {
            if case .attribute = e { return nil }  // refused (e.g. needs encryption): leave it out
            throw e
        }
    }

    private func readString(_ uuid: BluetoothUUID, in service: BluetoothUUID) async throws -> String? {
        guard let bytes = try await readOptional(uuid, in: service) else { return nil }
        // utf8s has no terminator, but some firmware pads with NULs: drop them and spaces.
        let trimmed = bytes.prefix { $0 != 0 }
        let s = String(decoding: trimmed, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        return s.isEmpty ? nil : s
    }

    static func describe(_ reason: GATTError) -> String {
        switch reason {
        case .disconnected(let why): return why
        default: return reason.description
        }
    }
}

/// Carries the disconnect callback's reason to the connection once it exists (the client is
/// created, and may fail, before the connection object).
private final class EndBox: Sendable {
    private let state = Mutex<(reason: String?, connection: StrapConnection?)>((nil, nil))
    func set(_ reason: String) {
        let c = state.withLock { s -> StrapConnection? in
            if s.reason == nil { s.reason = reason }
            return s.connection
        }
        c?.markEnded(reason)
    }
    func attach(_ c: StrapConnection) {
        let r = state.withLock { s -> String? in
            s.connection = c
            return s.reason
        }
        if let r { c.markEnded(r) }
    }
}

/// Runs blocking work (a connect that polls for seconds) on its own thread, off the
/// cooperative pool.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
        let t = Thread { c.resume(with: Result { try body() }) }
        t.name = "ble-connect"
        t.start()
    }
}
