import Foundation
import HealthModel

/// Which samples to read or delete (HealthKit's sample query predicate, sort and limit).
///
/// Time range: by default a sample matches when its span **overlaps** the half-open range
/// `[start, end)` — it starts before `end` and ends after `start`; an instantaneous sample
/// matches when `start ≤ t < end`. ``strictStartDate`` also requires the sample to start at or
/// after `start`; ``strictEndDate`` requires it to end at or before `end`. A nil bound is open.
public struct SampleQuery: Sendable, Hashable {
    /// How results are ordered.
    public enum SortKey: String, Sendable, Hashable, CaseIterable {
        case startDate, endDate
    }

    /// Only this type (nil: every type).
    public var type: QuantityType?
    /// Lower bound of the time range.
    public var start: Date?
    /// Upper bound (exclusive) of the time range.
    public var end: Date?
    /// Require `sample.start ≥ start`.
    public var strictStartDate: Bool
    /// Require `sample.end ≤ end`.
    public var strictEndDate: Bool
    /// Only samples whose device has this name, local identifier or registry alias.
    public var device: String?
    /// Only samples whose source has this name or identifier.
    public var source: String?
    /// Only samples with this heart-rate sensor location metadata.
    public var sensorLocation: HeartRateSensorLocation?
    /// Only these UUIDs.
    public var uuids: [UUID]?
    /// Sort key (ties break on the row id, i.e. save order).
    public var sortBy: SortKey
    /// Ascending (oldest first) when true.
    public var ascending: Bool
    /// At most this many samples.
    public var limit: Int?

    /// Creates a query; every filter defaults to "any", sorting to start date ascending.
    public init(type: QuantityType? = nil, start: Date? = nil, end: Date? = nil,
                strictStartDate: Bool = false, strictEndDate: Bool = false,
                device: String? = nil, source: String? = nil,
                sensorLocation: HeartRateSensorLocation? = nil, uuids: [UUID]? = nil,
                sortBy: SortKey = .startDate, ascending: Bool = true, limit: Int? = nil) {
        self.type = type; self.start = start; self.end = end
        self.strictStartDate = strictStartDate; self.strictEndDate = strictEndDate
        self.device = device; self.source = source; self.sensorLocation = sensorLocation
        self.uuids = uuids; self.sortBy = sortBy; self.ascending = ascending; self.limit = limit
    }

    /// The most recent sample of `type`: sorted by end date, descending, limit 1.
    public static func mostRecent(_ type: QuantityType) -> SampleQuery {
        SampleQuery(type: type, sortBy: .endDate, ascending: false, limit: 1)
    }

    var orderBy: String {
        let col = sortBy == .startDate ? "s.start" : "s.\"end\""
        let dir = ascending ? "ASC" : "DESC"
        return "\(col) \(dir), s.id \(dir)"
    }
}

extension HealthStore {
    /// The samples `query` selects, values in each type's canonical unit: individually stored
    /// samples and every quantity of quantity series (each with its series' UUID and
    /// ``HealthModel/QuantitySample/seriesIndex``), merged in the query's order. Ties on the
    /// sort date: individually stored samples in save order, then series quantities by series
    /// (oldest series first) and index (reversed when descending).
    public func samples(_ query: SampleQuery) throws -> [QuantitySample] {
        try samples(query, work: nil)
    }

    /// ``samples(_:)``, counting in `work` the series chunks it decodes (tests). With a limit,
    /// only the chunks that can hold one of the first `limit` quantities are decoded
    /// (``seriesHits(_:_:limit:rows:work:)``).
    package func samples(_ query: SampleQuery, work: StatisticsWork?) throws -> [QuantitySample] {
        try read { db in
            let rows = try sampleRows(db, query)
            let hits = try query.limit.map { try seriesHits(db, query, limit: $0, rows: rows, work: work) }
                ?? seriesHits(db, query, work: work)
            if hits.isEmpty { return rows.map(\.sample) }
            return Self.merge(rows, hits, query: query)
        }
    }

    /// Individually stored samples (in the query's order) and series quantities, in the
    /// query's order (see ``samples(_:)`` for ties), cut to its limit.
    static func merge(_ rows: [(sample: QuantitySample, id: Int64)], _ hits: [SeriesHit], query: SampleQuery) -> [QuantitySample] {
        // The one order key (SeriesLimit.swift's), which the limited path's threshold uses too.
        var all: [(key: SampleOrderKey, sample: QuantitySample)] = []
        all.reserveCapacity(rows.count + hits.count)
        for r in rows { all.append((SampleOrderKey(row: r.sample, id: r.id, sortBy: query.sortBy), r.sample)) }
        for h in hits { all.append((SampleOrderKey(hit: h, sortBy: query.sortBy), h.sample)) }
        if query.ascending { all.sort { $0.key < $1.key } } else { all.sort { $1.key < $0.key } }
        if let limit = query.limit, all.count > max(0, limit) { all.removeLast(all.count - max(0, limit)) }
        return all.map(\.sample)
    }

    /// The most recent sample (latest end date) of `type`, or nil when there is none.
    public func mostRecentSample(of type: QuantityType) throws -> QuantitySample? {
        try samples(.mostRecent(type)).first
    }

    /// The latest end date of anything stored — a sample or a series' quantity — with its
    /// type's identifier; nil for an empty store. One index lookup per type (and a scan of the
    /// series rows, a few thousand a year): cheap enough for a check at start.
    package func newestSampleEnd() throws -> (end: Date, type: String)? {
        try read { db in
            var newest: (end: Double, type: String)?
            let st = try db.prepare("""
                SELECT t.identifier, max(coalesce((SELECT max("end") FROM samples WHERE type_id = t.id), -1e300),
                                         coalesce((SELECT max(\(SeriesTotalsSQL.end("sr"))) FROM series sr WHERE sr.type_id = t.id), -1e300))
                FROM types t
                """, cached: false)
            while try st.step() {
                guard let end = st.optionalDouble(1), end > -1e299 else { continue }
                if newest.map({ end > $0.end }) ?? true { newest = (end, st.string(0) ?? "?") }
            }
            return newest.map { (Date(timeIntervalSince1970: $0.end), $0.type) }
        }
    }

    /// How many samples `query` selects (its limit ignored), series quantities included.
    public func count(_ query: SampleQuery) throws -> Int {
        try read { db in
            let (whereSQL, args) = try whereClause(query)
            let st = try db.prepare("SELECT count(*) FROM samples s WHERE \(whereSQL)", cached: false)
            st.bind(all: args)
            _ = try st.step()
            let n = st.int(0)
            st.reset()
            return n + (try seriesHits(db, query).count)
        }
    }

    /// The SELECT … FROM part that ``decodeSample(_:)`` reads (alias `s` for samples; column 25
    /// is the row id, which decoding ignores); shared with the change feed's anchored query.
    static let sampleSelectSQL = """
        SELECT s.uuid, s.type_id, s.value, s.start, s."end", src.name, src.identifier, src.version,
               d.name, d.manufacturer, d.model, d.hardware_version, d.firmware_version, d.software_version,
               d.local_identifier, d.udi_device_identifier, s.device_id,
               s.sensor_location, s.sensor_contact, s.motion_context, s.sync_identifier, s.sync_version,
               s.metadata, s.rr, s.rr_gap, s.id
        FROM samples s JOIN sources src ON src.id = s.source_id LEFT JOIN devices d ON d.id = s.device_id
        """

    /// One row of ``sampleSelectSQL`` as a sample.
    /// The individually stored samples `query` matches, in its order and up to its limit, with
    /// their row ids (series quantities are merged in by the caller).
    func sampleRows(_ db: Connection, _ query: SampleQuery) throws -> [(sample: QuantitySample, id: Int64)] {
        let (whereSQL, args) = try whereClause(query)
        var sql = "\(Self.sampleSelectSQL) WHERE \(whereSQL) ORDER BY \(query.orderBy)"
        if let limit = query.limit { sql += " LIMIT \(max(0, limit))" }
        let st = try db.prepare(sql, cached: false)
        st.bind(all: args)
        var rows: [(sample: QuantitySample, id: Int64)] = []
        while try st.step() { rows.append((try decodeSample(st), st.int64(25))) }
        return rows
    }

    func decodeSample(_ st: Statement) throws -> QuantitySample {
        guard let uuid = st.uuid(0) else { throw StoreError.corruptRow("a sample's uuid is not 16 bytes") }
        let type = try type(id: st.int64(1))
        let source = Source(name: st.string(5) ?? "?", identifier: st.string(6), version: st.string(7))
        var device: Device?
        if !st.isNull(16) {
            device = Device(name: st.string(8), manufacturer: st.string(9), model: st.string(10),
                            hardwareVersion: st.string(11), firmwareVersion: st.string(12),
                            softwareVersion: st.string(13), localIdentifier: st.string(14),
                            udiDeviceIdentifier: st.string(15))
        }
        var m = Metadata()
        m.heartRateSensorLocation = st.optionalInt(17).flatMap(HeartRateSensorLocation.init(rawValue:))
        m.sensorContact = st.optionalInt(18).flatMap(SensorContact.init(rawValue:))
        m.heartRateMotionContext = st.optionalInt(19).flatMap(HeartRateMotionContext.init(rawValue:))
        m.syncIdentifier = st.string(20)
        m.syncVersion = st.optionalInt(21)
        if let json = st.string(22) { MetadataColumn.decode(json, into: &m) }
        var rr: RRIntervals?
        if let blob = st.data(23) { rr = RRIntervals(ticks: RRColumn.decode(blob), precededByGap: st.int(24) != 0) }
        do {
            return try QuantitySample(
                uuid: uuid, type: type, quantity: Quantity(st.double(2), type.canonicalUnit),
                start: Date(timeIntervalSince1970: st.double(3)), end: Date(timeIntervalSince1970: st.double(4)),
                source: source, device: device, metadata: m, rrIntervals: rr, checkingPlausibility: false)
        } catch {
            throw StoreError.corruptRow("sample \(uuid): \(error)")
        }
    }

    /// A start no sample of the type overlapping `[from, …)` starts before, from the rollups
    /// (docs/queries.md): a sample that overlaps `from` without starting after it ends after it,
    /// so its 15-minute slot's hull ends after `from`; the earliest such slot (or `from`'s own)
    /// bounds the index search from below. Without it, `start < to AND end > from` searched the
    /// (type, start) index from the type's first sample: a query at the end of a year of
    /// individually stored samples read the whole year. A second of slack, as the statistics
    /// engine takes, covers the slot division's rounding. Rollups are kept by triggers; a slot
    /// a delete made stale still holds the old hull, a superset. Nil when the type has no rows.
    func earliestOverlappingStart(typeID: Int64, from: Date) throws -> Double? {
        let f = from.timeIntervalSince1970
        guard f.isFinite else { return nil }
        let st = try unsafeConnection.prepare("SELECT slot FROM sample_rollups WHERE type_id = ? AND max_end > ? ORDER BY slot LIMIT 1")
        defer { st.reset() }
        st.bind(1, typeID)
        st.bind(2, f)
        let own = Rollups.slot(f)
        let slot = try st.step() ? min(st.int64(0), own) : own
        return Double(slot) * Rollups.slotSeconds - 1
    }

    /// The WHERE clause (over `samples s`) and its arguments for `q`.
    func whereClause(_ q: SampleQuery) throws -> (String, [SQLValue]) {
        var parts: [String] = []
        var args: [SQLValue] = []
        if let t = q.type {
            parts.append("s.type_id = ?")
            args.append(.int(try typeID(t)))
        }
        let (rangeSQL, rangeArgs) = Self.rangeClause(start: q.start, end: q.end,
                                                     strictStart: q.strictStartDate, strictEnd: q.strictEndDate)
        parts += rangeSQL
        args += rangeArgs
        if let t = q.type, let from = q.start, !q.strictStartDate, let earliest = try earliestOverlappingStart(typeID: try typeID(t), from: from) {
            parts.append("s.start >= ?")
            args.append(.double(earliest))
        }
        if let d = q.device {
            parts.append("s.device_id IN (SELECT id FROM devices WHERE name = ? OR local_identifier = ? OR alias = ?)")
            args += [.text(d), .text(d), .text(d)]
        }
        if let src = q.source {
            parts.append("s.source_id IN (SELECT id FROM sources WHERE name = ? OR identifier = ?)")
            args += [.text(src), .text(src)]
        }
        if let loc = q.sensorLocation {
            parts.append("s.sensor_location = ?")
            args.append(.int(Int64(loc.rawValue)))
        }
        if let uuids = q.uuids {
            if uuids.isEmpty {
                parts.append("0")
            } else {
                parts.append("s.uuid IN (\(Array(repeating: "?", count: uuids.count).joined(separator: ",")))")
                args += uuids.map { u in .blob(withUnsafeBytes(of: u.uuid) { Data($0) }) }
            }
        }
        return (parts.isEmpty ? "1" : parts.joined(separator: " AND "), args)
    }

    /// Overlap (and strictness) conditions for a half-open range `[start, end)`.
    static func rangeClause(start: Date?, end: Date?, strictStart: Bool = false,
                            strictEnd: Bool = false) -> ([String], [SQLValue]) {
        var parts: [String] = []
        var args: [SQLValue] = []
        if let e = end {
            parts.append("s.start < ?")
            args.append(.double(e.timeIntervalSince1970))
        }
        if let b = start {
            // Ends after the start, or is an instant at or after it.
            parts.append("(s.\"end\" > ? OR (s.start = s.\"end\" AND s.start >= ?))")
            args += [.double(b.timeIntervalSince1970), .double(b.timeIntervalSince1970)]
            if strictStart {
                parts.append("s.start >= ?")
                args.append(.double(b.timeIntervalSince1970))
            }
        }
        if let e = end, strictEnd {
            parts.append("s.\"end\" <= ?")
            args.append(.double(e.timeIntervalSince1970))
        }
        return (parts, args)
    }
}
