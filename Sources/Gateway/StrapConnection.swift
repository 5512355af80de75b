import BluetoothLinux
import Foundation
import GATT
import HealthModel
import HeartRateProfile
import Synchronization

/// What HealthGate reads from a strap once connected: Device Information (0x180A), Body Sensor
/// Location (0x2A38), Battery Level (0x2A19), the GAP name (0x2A00) and which optional
/// characteristics it has. Every field is optional: a strap may lack any of them.
///
/// One type for every command (`pair`, `live`, `record`, `run`), and one rule for the Device
/// Information strings: ``HeartRateProfile/DeviceInformation/string(_:)``.
package struct StrapInfo: Sendable, Hashable {
    /// The GAP Device Name (0x2A00), decoded by the Device Information string rule.
    package var gapName: String?
    /// The Device Information strings.
    package var deviceInformation = DeviceInformation()
    /// Body Sensor Location as sent (0–6 defined, 7–255 reserved).
    package var sensorLocationRaw: UInt8?
    /// Battery level in percent (0–100; reserved values are left out).
    package var battery: Int?
    /// Whether the strap has a Heart Rate Control Point (0x2A39: reset energy expended).
    package var hasControlPoint = false
    /// Whether the Battery Level can be subscribed to.
    package var batteryNotifies = false

    /// Nothing known yet.
    package init() {}

    /// Device Information: Manufacturer Name String.
    package var manufacturer: String? { deviceInformation.manufacturerName }
    /// Device Information: Model Number String.
    package var model: String? { deviceInformation.modelNumber }
    /// Device Information: Serial Number String (shown by `pair`, never used as an identifier).
    package var serialNumber: String? { deviceInformation.serialNumber }
    /// Device Information: Hardware Revision String.
    package var hardwareRevision: String? { deviceInformation.hardwareRevision }
    /// Device Information: Firmware Revision String.
    package var firmwareRevision: String? { deviceInformation.firmwareRevision }
    /// Device Information: Software Revision String.
    package var softwareRevision: String? { deviceInformation.softwareRevision }

    /// The location as HealthKit's enumeration; reserved values (7–255) are `.other`.
    package var sensorLocation: HeartRateSensorLocation? {
        sensorLocationRaw.map { (try? BodySensorLocation(bytes: [$0]))?.location ?? .other }
    }

    /// The device record for samples and the registry (HKDevice fields), keyed by
    /// `localIdentifier` (the strap's address, or `socket:<path>`). Its name is the strap's own
    /// (the GAP name), else `fallbackName` (the name the user gave it); the user's name is the
    /// registry's alias.
    package func device(localIdentifier: String, fallbackName: String? = nil) -> Device {
        deviceInformation.device(name: gapName ?? fallbackName, localIdentifier: localIdentifier)
    }
}

/// One GATT connection to a strap over any ATT bearer (the kernel's L2CAP socket, a Unix socket
/// carrying the ATT channel, a socket pair to a simulated strap): discovery done, ready to read,
/// subscribe and write. The one strap setup every command uses (`pair`, `reset-energy`, and
/// through ``StrapSource`` `live`, `record`, `run`, `demo`).
///
/// Discovery runs on every connection (handles may differ) and subscriptions must be made on
/// every connection (non-bonded straps forget their CCCDs). ``close()`` ends the link.
package final class StrapConnection: Sendable {
    /// The strap, for messages (`chest (AA:BB:…)`).
    package let name: String
    /// The GATT client over the bearer.
    package let client: GATTClient
    /// What discovery found.
    package let database: GATTDatabase

    /// The services read on a first connection.
    package static let allServices = [BluetoothUUID(HeartRateUUIDs.heartRateService), BluetoothUUID(HeartRateUUIDs.deviceInformationService),
                                     BluetoothUUID(HeartRateUUIDs.batteryService), BluetoothUUID(0x1800)]
    /// The services a reconnect needs (heart rate and battery): fewer round trips before
    /// notifications resume.
    package static let streamingServices = [BluetoothUUID(HeartRateUUIDs.heartRateService), BluetoothUUID(HeartRateUUIDs.batteryService)]

    private init(name: String, client: GATTClient, database: GATTDatabase) {
        self.name = name
        self.client = client
        self.database = database
    }

    /// Takes over `bearer`, exchanges MTUs and discovers `services`. `onDisconnect` runs once
    /// when the link ends, whoever ended it (the peer, a failure, or ``close()``).
    /// - Throws: ``BluetoothLinux/BluetoothError`` `.notSupported` when the device has no Heart
    ///   Rate Measurement, or the link's failure (``GATT/GATTError``).
    package static func open(_ name: String, bearer: any ATTBearer, transactionTimeout: Duration = .seconds(30),
                            services: [BluetoothUUID] = StrapConnection.allServices,
                            onDisconnect: (@Sendable (GATTError) -> Void)? = nil) async throws -> StrapConnection {
        let client = GATTClient(bearer: bearer, transactionTimeout: transactionTimeout) { reason in onDisconnect?(reason) }
        do {
            _ = try? await client.exchangeMTU()
            let db = try await client.discover(services: services)
            guard db.characteristic(BluetoothUUID(HeartRateUUIDs.heartRateMeasurement), in: BluetoothUUID(HeartRateUUIDs.heartRateService)) != nil else {
                throw BluetoothError(.notSupported,
                                     "\(name) has no Heart Rate Measurement characteristic (0x2A37): it is not a heart-rate strap; check the address with `healthgate scan`.")
            }
            return StrapConnection(name: name, client: client, database: db)
        } catch {
            client.close()
            client.waitForReaderToEnd()
            throw error
        }
    }

    /// Why the link ended, or `nil` while it is up.
    package var endReason: String? {
        client.endReason.map { e in
            if case .disconnected(let why) = e { return why }
            return e.description
        }
    }

    /// Reads everything ``StrapInfo`` holds. Characteristics the strap lacks or refuses to
    /// read are left `nil`; a lost link throws.
    package func readInfo() async throws -> StrapInfo {
        var info = StrapInfo()
        info.gapName = try await readOptional(HeartRateUUIDs.deviceName, in: 0x1800).flatMap(DeviceInformation.string)
        for uuid in DeviceInformation.characteristicUUIDs {
            if let v = try await readOptional(uuid, in: HeartRateUUIDs.deviceInformationService) { info.deviceInformation.set(v, for: uuid) }
        }
        info.sensorLocationRaw = try await readOptional(HeartRateUUIDs.bodySensorLocation, in: HeartRateUUIDs.heartRateService)?.first
        info.battery = try await readBattery()
        info.hasControlPoint = characteristic(HeartRateUUIDs.heartRateControlPoint, in: HeartRateUUIDs.heartRateService) != nil
        info.batteryNotifies = characteristic(HeartRateUUIDs.batteryLevel, in: HeartRateUUIDs.batteryService)?.cccdHandle != nil
        return info
    }

    /// Reads the battery level (percent), or `nil` without a Battery service (or a reserved value).
    package func readBattery() async throws -> Int? {
        try await readOptional(HeartRateUUIDs.batteryLevel, in: HeartRateUUIDs.batteryService).flatMap { try? BatteryLevel.decode($0) }
    }

    /// Subscribes to Heart Rate Measurement notifications (writes the CCCD). `handler` runs on
    /// the client's reader thread with the payload borrowed from its receive buffer (no
    /// allocation per notification).
    package func subscribeHeartRate(_ handler: @escaping GATTValueHandler) async throws {
        guard let c = characteristic(HeartRateUUIDs.heartRateMeasurement, in: HeartRateUUIDs.heartRateService) else {
            throw BluetoothError(.notSupported,
                                     "\(name) has no Heart Rate Measurement characteristic (0x2A37): it is not a heart-rate strap; check the address with `healthgate scan`.")
        }
        try await client.subscribe(to: c, handler: handler)
    }

    /// Subscribes to Battery Level notifications when the strap offers them; returns whether it
    /// did. A refusal is not fatal (the level is optional).
    @discardableResult
    package func subscribeBattery(_ handler: @escaping @Sendable (Int, Date) -> Void) async throws -> Bool {
        guard let c = characteristic(HeartRateUUIDs.batteryLevel, in: HeartRateUUIDs.batteryService), c.cccdHandle != nil else { return false }
        do {
            try await client.subscribe(to: c) { event in
                if let level = try? BatteryLevel.decode(Array(event.value)) { handler(level, event.receivedAt) }
            }
            return true
        } catch let e as GATTError {
            if case .attribute = e { return false }
            throw e
        }
    }

    /// Writes 0x01 (Reset Energy Expended) to the Heart Rate Control Point.
    /// - Throws: ``BluetoothLinux/BluetoothError`` `.notSupported` when the strap has no control
    ///   point or answers 0x80 (Control Point Not Supported); other ``GATT/GATTError``s as they come.
    package func resetEnergyExpended() async throws {
        guard let c = characteristic(HeartRateUUIDs.heartRateControlPoint, in: HeartRateUUIDs.heartRateService) else {
            throw BluetoothError(.notSupported,
                                 "\(name) has no Heart Rate Control Point (0x2A39): it does not count energy expended, so there is nothing to reset.")
        }
        do {
            try await client.write(HeartRateControlPoint.resetEnergyExpended, to: c)
        } catch GATTError.attribute(let code, _, _) where code.rawValue == HeartRateControlPoint.notSupportedErrorCode {
            throw BluetoothError(.notSupported,
                                 "\(name) answered \"Heart Rate Control Point Not Supported\" (0x80) to Reset Energy Expended: it cannot reset its energy counter.")
        }
    }

    /// Ends the link (for L2CAP this disconnects the strap). Idempotent.
    package func close() { client.close() }

    /// Closes the link and waits until the client's reader thread has ended: no handler of
    /// this connection runs after it returns. Blocks; never call it from a handler.
    package func closeAndWait() {
        client.close()
        client.waitForReaderToEnd()
    }

    private func characteristic(_ uuid: UInt16, in service: UInt16) -> GATTCharacteristic? {
        database.characteristic(BluetoothUUID(uuid), in: BluetoothUUID(service))
    }

    private func readOptional(_ uuid: UInt16, in service: UInt16) async throws -> [UInt8]? {
        guard let c = characteristic(uuid, in: service), c.properties.contains(.read) else { return nil }
        do { return try await client.read(c) } catch let e as GATTError {
            if case .attribute = e { return nil }  // refused (e.g. needs encryption): leave it out
            throw e
        }
    }
}
