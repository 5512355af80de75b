import Foundation
import HealthModel
import HealthStore
import Logging
import PostgresNIO

/// One change-feed page as the server receives it: the types, sources and devices its samples
/// name (sent first), its tombstones, and its samples and series quantities as column arrays,
/// each table written by one `INSERT … SELECT FROM unnest(…)` (a round trip per table, not per row).
struct UplinkBatch: Sendable {
    struct Columns: Sendable {
        var uuid: [UUID] = []
        var index: [Int32] = []
        var type: [String] = []
        var value: [Double] = []
        var start: [Double] = []
        var end: [Double] = []
        var source: [String] = []
        var device: [String] = []     // "" for none
        var metadata: [String] = []   // "" for none
        var rr: [String] = []         // "" for none, else an integer[] literal
        var rrGap: [Int32] = []       // -1 for none

        var isEmpty: Bool { uuid.isEmpty }

        mutating func append(_ s: QuantitySample, deviceKey: String?) {
            uuid.append(s.uuid)
            index.append(Int32(clamping: s.seriesIndex ?? 0))
            type.append(s.type.identifier)
            value.append(s.canonicalValue)
            start.append(s.startDate.timeIntervalSince1970)
            end.append(s.endDate.timeIntervalSince1970)
            source.append(s.source.identifier)
            device.append(deviceKey ?? "")
            metadata.append(UplinkBatch.metadataJSON(s.metadata) ?? "")
            if let r = s.rrIntervals {
                rr.append("{" + r.ticks.map { String($0) }.joined(separator: ",") + "}")
                rrGap.append(r.precededByGap ? 1 : 0)
            } else {
                rr.append("")
                rrGap.append(-1)
            }
        }
    }

    let gateway: String
    var types: [QuantityType] = []
    var sources: [Source] = []
    var devices: [(key: String, device: Device)] = []
    var deleted: [UUID] = []
    var samples = Columns()
    var quantities = Columns()

    init(_ page: ChangeSet, gateway: String) {
        self.gateway = gateway
        var typeSeen = Set<String>(), sourceSeen = Set<String>(), deviceSeen = Set<String>()
        // A page holds a sample or a series' quantity once; the dictionaries only guard the
        // server's "ON CONFLICT DO UPDATE cannot affect a row twice" should that ever change.
        var sampleAt: [UUID: Int] = [:]
        var quantityAt: [String: Int] = [:]
        var ordinary: [QuantitySample] = [], series: [QuantitySample] = []
        for s in page.samples {
            if typeSeen.insert(s.type.identifier).inserted { types.append(s.type) }
            if sourceSeen.insert(s.source.identifier).inserted { sources.append(s.source) }
            if let d = s.device {
                let k = Self.deviceKey(d)
                if deviceSeen.insert(k).inserted { devices.append((k, d)) }
            }
            if let i = s.seriesIndex {
                let k = "\(s.uuid)#\(i)"
                if let at = quantityAt[k] { series[at] = s } else { quantityAt[k] = series.count; series.append(s) }
            } else {
                if let at = sampleAt[s.uuid] { ordinary[at] = s } else { sampleAt[s.uuid] = ordinary.count; ordinary.append(s) }
            }
        }
        for s in ordinary { samples.append(s, deviceKey: s.device.map(Self.deviceKey)) }
        for s in series { quantities.append(s, deviceKey: s.device.map(Self.deviceKey)) }
        deleted = page.deleted.map(\.uuid)
        // Types are shared by every gateway: a fixed order keeps concurrent pushes from deadlocking.
        types.sort { $0.identifier < $1.identifier }
    }

    /// The device's key on the server: its local identifier, else its fields.
    static func deviceKey(_ d: Device) -> String {
        if let id = d.localIdentifier { return "id:" + id }
        return "fields:" + [d.name, d.manufacturer, d.model, d.hardwareVersion, d.firmwareVersion, d.softwareVersion,
                            d.udiDeviceIdentifier].map { $0 ?? "" }.joined(separator: "|")
    }

    static func metadataJSON(_ m: Metadata) -> String? {
        let o = SampleJSON.metadataObject(m)
        guard !o.isEmpty, let data = try? JSONSerialization.data(withJSONObject: o, options: [.sortedKeys]) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Writes the batch inside the caller's transaction: reference rows, deletes, upserts.
    func apply(on c: PostgresConnection, logger: Logger) async throws {
        for t in types {
            try await c.query("""
                INSERT INTO healthgate.types(identifier, unit, aggregation)
                VALUES (\(t.identifier), \(t.canonicalUnitString), \(t.aggregationStyle.rawValue))
                ON CONFLICT (identifier) DO NOTHING
                """, logger: logger)
        }
        for s in sources {
            try await c.query("""
                INSERT INTO healthgate.sources(gateway, identifier, name, version)
                VALUES (\(gateway), \(s.identifier), \(s.name), \(s.version))
                ON CONFLICT (gateway, identifier) DO UPDATE SET name = EXCLUDED.name, version = EXCLUDED.version
                """, logger: logger)
        }
        for (key, d) in devices {
            try await c.query("""
                INSERT INTO healthgate.devices(gateway, key, name, manufacturer, model, hardware_version,
                    firmware_version, software_version, local_identifier, udi_device_identifier)
                VALUES (\(gateway), \(key), \(d.name), \(d.manufacturer), \(d.model), \(d.hardwareVersion),
                    \(d.firmwareVersion), \(d.softwareVersion), \(d.localIdentifier), \(d.udiDeviceIdentifier))
                ON CONFLICT (gateway, key) DO UPDATE SET
                    name = coalesce(EXCLUDED.name, healthgate.devices.name),
                    manufacturer = coalesce(EXCLUDED.manufacturer, healthgate.devices.manufacturer),
                    model = coalesce(EXCLUDED.model, healthgate.devices.model),
                    hardware_version = coalesce(EXCLUDED.hardware_version, healthgate.devices.hardware_version),
                    firmware_version = coalesce(EXCLUDED.firmware_version, healthgate.devices.firmware_version),
                    software_version = coalesce(EXCLUDED.software_version, healthgate.devices.software_version),
                    udi_device_identifier = coalesce(EXCLUDED.udi_device_identifier, healthgate.devices.udi_device_identifier)
                """, logger: logger)
        }
        if !deleted.isEmpty {
            // A tombstone names a sample or a whole series: drop both kinds under that UUID.
            try await c.query("DELETE FROM healthgate.samples WHERE gateway = \(gateway) AND uuid = ANY(\(deleted))", logger: logger)
            try await c.query("DELETE FROM healthgate.series_quantities WHERE gateway = \(gateway) AND uuid = ANY(\(deleted))", logger: logger)
        }
        if !samples.isEmpty {
            let x = samples
            try await c.query("""
                INSERT INTO healthgate.samples(gateway, uuid, type, value, start_s, end_s, source, device, metadata, rr_ticks, rr_gap)
                SELECT \(gateway), u, ty, v, s, e, src, NULLIF(dev, ''), NULLIF(md, '')::jsonb, NULLIF(rr, '')::integer[],
                       CASE gap WHEN -1 THEN NULL ELSE gap = 1 END
                  FROM unnest(\(x.uuid)::uuid[], \(x.type)::text[], \(x.value)::float8[], \(x.start)::float8[], \(x.end)::float8[],
                              \(x.source)::text[], \(x.device)::text[], \(x.metadata)::text[], \(x.rr)::text[], \(x.rrGap)::int4[])
                       AS b(u, ty, v, s, e, src, dev, md, rr, gap)
                ON CONFLICT (gateway, uuid) DO UPDATE SET type = EXCLUDED.type, value = EXCLUDED.value,
                    start_s = EXCLUDED.start_s, end_s = EXCLUDED.end_s, source = EXCLUDED.source, device = EXCLUDED.device,
                    metadata = EXCLUDED.metadata, rr_ticks = EXCLUDED.rr_ticks, rr_gap = EXCLUDED.rr_gap
                """, logger: logger)
        }
        if !quantities.isEmpty {
            let x = quantities
            try await c.query("""
                INSERT INTO healthgate.series_quantities(gateway, uuid, series_index, type, value, start_s, end_s, source, device, metadata, rr_ticks, rr_gap)
                SELECT \(gateway), u, i, ty, v, s, e, src, NULLIF(dev, ''), NULLIF(md, '')::jsonb, NULLIF(rr, '')::integer[],
                       CASE gap WHEN -1 THEN NULL ELSE gap = 1 END
                  FROM unnest(\(x.uuid)::uuid[], \(x.index)::int4[], \(x.type)::text[], \(x.value)::float8[], \(x.start)::float8[],
                              \(x.end)::float8[], \(x.source)::text[], \(x.device)::text[], \(x.metadata)::text[], \(x.rr)::text[],
                              \(x.rrGap)::int4[])
                       AS b(u, i, ty, v, s, e, src, dev, md, rr, gap)
                ON CONFLICT (gateway, uuid, series_index) DO UPDATE SET type = EXCLUDED.type, value = EXCLUDED.value,
                    start_s = EXCLUDED.start_s, end_s = EXCLUDED.end_s, source = EXCLUDED.source, device = EXCLUDED.device,
                    metadata = EXCLUDED.metadata, rr_ticks = EXCLUDED.rr_ticks, rr_gap = EXCLUDED.rr_gap
                """, logger: logger)
        }
    }
}
