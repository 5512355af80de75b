import Foundation
import HealthModel

/// How a device reaches the gateway.
public enum DeviceKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Bluetooth Low Energy (a heart-rate strap).
    case ble
    /// A serial line (a USB pedometer).
    case serial
    /// Anything else (imported or manually entered data).
    case other
}

/// A device in the gateway's registry: HKDevice's fields plus what the gateway needs to find
/// and show it again (kind, address, alias, when it was last seen, battery, sensor location).
public struct DeviceRecord: Sendable, Hashable {
    /// The row id (set by the store; ignored on upsert).
    public var id: Int64?
    /// HKDevice fields. `localIdentifier` is the registry key and must be set.
    public var device: Device
    /// How the device is reached.
    public var kind: DeviceKind
    /// BLE address (`AA:BB:CC:DD:EE:FF`) or serial path (`/dev/ttyUSB0`).
    public var address: String?
    /// BLE address type (`public`, `random`), if BLE.
    public var addressType: String?
    /// A short name the user gave it (`chest-strap`).
    public var alias: String?
    /// When data last arrived from it.
    public var lastSeen: Date?
    /// Battery level in percent (0–100), if known.
    public var battery: Int?
    /// Where a heart-rate sensor sits (BLE Body Sensor Location).
    public var sensorLocation: HeartRateSensorLocation?
    /// Anything else, as JSON text (the owner module defines its shape).
    public var extra: String?

    /// Creates a record. `device.localIdentifier` must be set for ``HealthStore/upsertDevice(_:)``.
    public init(id: Int64? = nil, device: Device, kind: DeviceKind = .other, address: String? = nil,
                addressType: String? = nil, alias: String? = nil, lastSeen: Date? = nil, battery: Int? = nil,
                sensorLocation: HeartRateSensorLocation? = nil, extra: String? = nil) {
        self.id = id; self.device = device; self.kind = kind; self.address = address
        self.addressType = addressType; self.alias = alias; self.lastSeen = lastSeen; self.battery = battery
        self.sensorLocation = sensorLocation; self.extra = extra
    }
}

extension HealthStore {
    /// The `ON CONFLICT(local_identifier) DO UPDATE` assignments of the HKDevice columns: a
    /// value given fills in or replaces the stored one, a missing one keeps it. Shared by the
    /// registry's upsert and the device ids samples are saved with.
    static let deviceFieldsKeptWhereSet = """
        name = coalesce(excluded.name, name), manufacturer = coalesce(excluded.manufacturer, manufacturer),
        model = coalesce(excluded.model, model),
        hardware_version = coalesce(excluded.hardware_version, hardware_version),
        firmware_version = coalesce(excluded.firmware_version, firmware_version),
        software_version = coalesce(excluded.software_version, software_version),
        udi_device_identifier = coalesce(excluded.udi_device_identifier, udi_device_identifier)
        """

    private static let deviceColumns = """
        id, name, manufacturer, model, hardware_version, firmware_version, software_version, local_identifier,
        udi_device_identifier, kind, address, address_type, alias, last_seen, battery, sensor_location, extra
        """

    /// Inserts or updates a device keyed by its local identifier. Fields that are nil in
    /// `record` keep their stored value; `kind` is always written. Returns the stored record.
    /// - Throws: ``StoreError/notFound(_:)`` when `record.device.localIdentifier` is nil.
    @discardableResult
    public func upsertDevice(_ record: DeviceRecord) throws -> DeviceRecord {
        guard let local = record.device.localIdentifier else {
            throw StoreError.notFound("a registry device needs a local identifier")
        }
        try write { w in
            let st = try w.connection.prepare("""
                INSERT INTO devices(name, manufacturer, model, hardware_version, firmware_version, software_version,
                    local_identifier, udi_device_identifier, kind, address, address_type, alias, last_seen, battery,
                    sensor_location, extra)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(local_identifier) DO UPDATE SET
                    \(Self.deviceFieldsKeptWhereSet),
                    kind = excluded.kind,
                    address = coalesce(excluded.address, address),
                    address_type = coalesce(excluded.address_type, address_type),
                    alias = coalesce(excluded.alias, alias),
                    last_seen = coalesce(excluded.last_seen, last_seen),
                    battery = coalesce(excluded.battery, battery),
                    sensor_location = coalesce(excluded.sensor_location, sensor_location),
                    extra = coalesce(excluded.extra, extra)
                """)
            let d = record.device
            st.bind(1, d.name); st.bind(2, d.manufacturer); st.bind(3, d.model); st.bind(4, d.hardwareVersion)
            st.bind(5, d.firmwareVersion); st.bind(6, d.softwareVersion); st.bind(7, local)
            st.bind(8, d.udiDeviceIdentifier); st.bind(9, record.kind.rawValue); st.bind(10, record.address)
            st.bind(11, record.addressType); st.bind(12, record.alias)
            st.bind(13, record.lastSeen?.timeIntervalSince1970); st.bind(14, record.battery)
            st.bind(15, record.sensorLocation?.rawValue); st.bind(16, record.extra)
            try st.run()
        }
        guard let stored = try device(localIdentifier: local) else {
            throw StoreError.corruptRow("device \(local) vanished right after it was written")
        }
        return stored
    }

    /// Records that a device was seen (and, if given, its battery level).
    public func markDeviceSeen(localIdentifier: String, at date: Date = Date(), battery: Int? = nil) throws {
        try write { w in
            let st = try w.connection.prepare(
                "UPDATE devices SET last_seen = ?, battery = coalesce(?, battery) WHERE local_identifier = ?")
            st.bind(1, date.timeIntervalSince1970); st.bind(2, battery); st.bind(3, localIdentifier)
            try st.run()
        }
    }

    /// Sets or clears (nil) a device's alias.
    public func setAlias(_ alias: String?, forLocalIdentifier local: String) throws {
        try write { w in
            let st = try w.connection.prepare("UPDATE devices SET alias = ? WHERE local_identifier = ?")
            st.bind(1, alias); st.bind(2, local)
            try st.run()
            if w.connection.changes == 0 { throw StoreError.notFound("no device has local identifier '\(local)'") }
        }
    }

    /// Removes a device from the registry (`healthgate devices forget`), HealthKit-like: its
    /// samples stay, each still naming its device. In one transaction: the given persisted
    /// state keys (a pedometer's counter state) are removed; the row is deleted when no sample
    /// references it, otherwise it keeps only the sample-facing fields (name, manufacturer,
    /// model, versions, local identifier) and loses the registry's (kind becomes `other`;
    /// address, alias, last seen, battery, sensor location and extra are cleared), so it is no
    /// longer listed and a later pairing or connection registers it afresh.
    /// - Throws: ``StoreError/notFound(_:)`` when no registry device has this local identifier.
    @discardableResult
    public func forgetDevice(localIdentifier: String, stateKeys: [String] = []) throws -> ForgottenDevice {
        guard let record = try device(localIdentifier: localIdentifier), record.kind != .other, let id = record.id else {
            throw StoreError.notFound("no remembered device has local identifier '\(localIdentifier)'; `healthgate devices` lists them")
        }
        return try write { w in
            let db = w.connection
            // Series quantities name the device through their series row.
            let count = try db.prepare("""
                SELECT (SELECT count(*) FROM samples WHERE device_id = ?1)
                     + (SELECT coalesce(sum(max(\(SeriesTotalsSQL.count("sr")), 1)), 0) FROM series sr WHERE device_id = ?1)
                """)
            count.bind(1, id)
            _ = try count.step()
            let samples = count.int(0)
            count.reset()
            var removed: [String] = []
            let del = try db.prepare("DELETE FROM state WHERE key = ?")
            for key in stateKeys {
                del.reset()
                del.bind(1, key)
                try del.run()
                if db.changes > 0 { removed.append(key) }
            }
            let row = try db.prepare(samples == 0 ? "DELETE FROM devices WHERE id = ?" : """
                UPDATE devices SET kind = 'other', address = NULL, address_type = NULL, alias = NULL, last_seen = NULL,
                    battery = NULL, sensor_location = NULL, extra = NULL WHERE id = ?
                """, cached: false)
            row.bind(1, id)
            try row.run()
            forgetCachedDeviceIDs()
            return ForgottenDevice(record: record, samples: samples, removedStateKeys: removed, rowDeleted: samples == 0)
        }
    }

    /// Every known device, registry devices (with a kind other than `other`) first, then by name.
    public func devices(kind: DeviceKind? = nil) throws -> [DeviceRecord] {
        try queryDevices(kind.map { ("kind = ?", [SQLValue.text($0.rawValue)]) } ?? ("1", []))
    }

    /// The device with this local identifier.
    public func device(localIdentifier: String) throws -> DeviceRecord? {
        try queryDevices(("local_identifier = ?", [.text(localIdentifier)])).first
    }

    /// The device with this alias.
    public func device(alias: String) throws -> DeviceRecord? {
        try queryDevices(("alias = ?", [.text(alias)])).first
    }

    /// The device with this address (BLE address, case-insensitive, or serial path).
    public func device(address: String) throws -> DeviceRecord? {
        try queryDevices(("address = ? COLLATE NOCASE", [.text(address)])).first
    }

    /// The device a user means by `text`: alias, then local identifier, then address, then name.
    public func device(matching text: String) throws -> DeviceRecord? {
        if let d = try device(alias: text) { return d }
        if let d = try device(localIdentifier: text) { return d }
        if let d = try device(address: text) { return d }
        return try queryDevices(("name = ?", [.text(text)])).first
    }

    private func queryDevices(_ filter: (String, [SQLValue])) throws -> [DeviceRecord] {
        try read { db in
            let st = try db.prepare(
                "SELECT \(Self.deviceColumns) FROM devices WHERE \(filter.0) ORDER BY kind = 'other', name, id",
                cached: false)
            st.bind(all: filter.1)
            var out: [DeviceRecord] = []
            while try st.step() {
                out.append(DeviceRecord(
                    id: st.int64(0),
                    device: Device(name: st.string(1), manufacturer: st.string(2), model: st.string(3),
                                   hardwareVersion: st.string(4), firmwareVersion: st.string(5),
                                   softwareVersion: st.string(6), localIdentifier: st.string(7),
                                   udiDeviceIdentifier: st.string(8)),
                    kind: DeviceKind(rawValue: st.string(9) ?? "other") ?? .other,
                    address: st.string(10), addressType: st.string(11), alias: st.string(12),
                    lastSeen: st.optionalDouble(13).map(Date.init(timeIntervalSince1970:)),
                    battery: st.optionalInt(14),
                    sensorLocation: st.optionalInt(15).flatMap(HeartRateSensorLocation.init(rawValue:)),
                    extra: st.string(16)))
            }
            return out
        }
    }
}

/// What ``HealthStore/forgetDevice(localIdentifier:stateKeys:)`` did.
public struct ForgottenDevice: Sendable, Hashable {
    /// The registry record as it was before.
    public var record: DeviceRecord
    /// Samples from the device; they stay in the store.
    public var samples: Int
    /// The persisted state keys that existed and were removed.
    public var removedStateKeys: [String]
    /// True when the row was deleted (no sample referenced it); false when it was kept, without
    /// its registry fields, for the samples that name it.
    public var rowDeleted: Bool
}
