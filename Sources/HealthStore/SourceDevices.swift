import Foundation
import HealthModel

/// A device that one source's samples came from, with how many (HKSourceQuery plus devices).
public struct SourceDevice: Sendable, Hashable {
    /// The device's HKDevice fields.
    public var device: Device
    /// How the gateway reaches it (`ble`, `serial`), or `other` for devices known only from samples.
    public var kind: DeviceKind
    /// The alias the user gave it, if any.
    public var alias: String?
    /// Samples of this source from this device (of the requested type, if one was given).
    public var sampleCount: Int
}

extension HealthStore {
    /// For each source identifier, the devices its samples came from, most samples first.
    /// Samples without a device are not listed. With `type`, only samples of that type count.
    public func devicesBySource(type: QuantityType? = nil) throws -> [String: [SourceDevice]] {
        try read { db in
            // Individually stored samples and series quantities (a series row counts its quantities).
            let (typeFilter, args) = try samplesAndSeriesTypeFilter(type)
            let sql = """
                SELECT src.identifier, d.name, d.manufacturer, d.model, d.hardware_version, d.firmware_version,
                       d.software_version, d.local_identifier, d.udi_device_identifier, d.kind, d.alias, sum(n) AS total
                FROM (SELECT source_id, device_id, count(*) AS n FROM samples\(typeFilter) GROUP BY source_id, device_id
                      UNION ALL
                      SELECT source_id, device_id, sum(\(SeriesTotalsSQL.count("sr"))) AS n FROM series sr\(typeFilter)
                      GROUP BY source_id, device_id) s
                JOIN sources src ON src.id = s.source_id JOIN devices d ON d.id = s.device_id
                GROUP BY s.source_id, s.device_id ORDER BY total DESC, d.id
                """
            let st = try db.prepare(sql, cached: false)
            st.bind(all: args)
            var out: [String: [SourceDevice]] = [:]
            while try st.step() {
                let device = Device(name: st.string(1), manufacturer: st.string(2), model: st.string(3),
                                    hardwareVersion: st.string(4), firmwareVersion: st.string(5),
                                    softwareVersion: st.string(6), localIdentifier: st.string(7),
                                    udiDeviceIdentifier: st.string(8))
                out[st.string(0) ?? "?", default: []].append(SourceDevice(
                    device: device, kind: DeviceKind(rawValue: st.string(9) ?? "other") ?? .other,
                    alias: st.string(10), sampleCount: st.int(11)))
            }
            return out
        }
    }
}
