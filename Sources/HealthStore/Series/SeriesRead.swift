import Foundation
import HealthModel

/// One quantity of a series read back, with what merging it among individually stored samples
/// needs: the series' row id and the quantity's index.
struct SeriesHit {
    var sample: QuantitySample
    var seriesID: Int64
    var index: Int
    /// The series' `change_seq` (the change feed's position of its last growth).
    var changeSeq: Int64
    /// The series' source row id.
    var sourceID: Int64
}

/// A series row's totals as readers must take them (docs/store.md, "Writes"). The writer
/// rewrites an open series' row only when a chunk fills (a commit then writes its chunk rows
/// alone, not the row and its `change_seq` index entry): the row holds `count`, `end` and
/// `change_seq` of its chunks before `pending_seq`, and the chunks from `pending_seq` on hold
/// the rest. For a closed series `pending_seq` is NULL and these are the row's own columns.
/// Each expression names the series row by `s` (a table name or alias in scope), and reads
/// no chunk for a closed series (a year holds thousands of series rows; few are open).
enum SeriesTotalsSQL {
    /// Quantities stored.
    static func count(_ s: String) -> String {
        """
        (CASE WHEN \(s).pending_seq IS NULL THEN \(s).count ELSE \(s).count + coalesce((SELECT sum(c.count) FROM series_chunks c \
        WHERE c.series_id = \(s).id AND c.seq >= \(s).pending_seq), 0) END)
        """
    }

    /// The latest end of its quantities.
    static func end(_ s: String) -> String { latest("\"end\"", s) }

    /// The change feed's position of its last growth.
    static func changeSeq(_ s: String) -> String { latest("change_seq", s) }

    /// The larger of the row's `column` and the pending chunks'.
    private static func latest(_ column: String, _ s: String) -> String {
        """
        (CASE WHEN \(s).pending_seq IS NULL THEN \(s).\(column) ELSE coalesce((SELECT max(max(c.\(column)), \(s).\(column)) \
        FROM series_chunks c WHERE c.series_id = \(s).id AND c.seq >= \(s).pending_seq), \(s).\(column)) END)
        """
    }

    /// The SET list that makes a row exact and closed (its pending chunks folded in).
    static let fold = """
        "end" = \(end("series")), count = \(count("series")), change_seq = \(changeSeq("series")), pending_seq = NULL, open = 0
        """
}

extension HealthStore {
    /// The columns of a series row with its source and device, as ``seriesHits(_:_:work:)`` and the change feed
    /// reads them.
    static let seriesSelectSQL = """
        SELECT s.id, s.uuid, s.type_id, src.name, src.identifier, src.version,
               d.name, d.manufacturer, d.model, d.hardware_version, d.firmware_version, d.software_version,
               d.local_identifier, d.udi_device_identifier, s.device_id, s.sensor_location, \(SeriesTotalsSQL.changeSeq("s")), s.source_id
        FROM series s JOIN sources src ON src.id = s.source_id LEFT JOIN devices d ON d.id = s.device_id
        """

    /// The series quantities `q` selects (its sort and limit not applied), lock held. `work`
    /// counts the chunks decoded (tests).
    func seriesHits(_ db: Connection, _ q: SampleQuery, work: StatisticsWork? = nil) throws -> [SeriesHit] {
        let rows = try seriesRows(db, q)
        guard !rows.isEmpty else { return [] }
        var chunkSQL = "SELECT first_index, data FROM series_chunks WHERE series_id = ?"
        var chunkArgs: [SQLValue] = []
        if let e = q.end { chunkSQL += " AND start < ?"; chunkArgs.append(.double(e.timeIntervalSince1970)) }
        if let b = q.start { chunkSQL += " AND \"end\" >= ?"; chunkArgs.append(.double(b.timeIntervalSince1970)) }
        chunkSQL += " ORDER BY seq"
        let chunks = try db.prepare(chunkSQL)
        let range = QuantityRange(q)
        var out: [SeriesHit] = []
        for (id, r) in rows {
            chunks.reset()
            chunks.bind(all: [.int(id)] + chunkArgs)
            while try chunks.step() {
                let first = chunks.int(0)
                let bytes = [UInt8](chunks.data(1) ?? Data())
                let quantities = try SeriesCodec.decodeStored(bytes, "series \(r.uuid)")
                work?.chunksDecoded += 1
                for (k, x) in quantities.enumerated() where range.contains(x) {
                    out.append(SeriesHit(sample: try Self.sample(x, of: r.uuid, type: r.type, source: r.source, device: r.device,
                                                                 location: r.location, index: first + k),
                                         seriesID: id, index: first + k, changeSeq: r.changeSeq, sourceID: r.sourceID))
                }
            }
        }
        return out
    }

    /// The series quantities `q` selects as statistics points (lock held). A point's `id`
    /// orders it after every individually stored sample's and by series, then index: ids
    /// from 2^52 on are series quantities (series row id × 2^24 + index; a series holds fewer
    /// than 2^24 quantities, 194 days at 1 Hz).
    func seriesStatPoints(_ db: Connection, _ q: SampleQuery) throws -> [StatPoint] {
        let base: Int64 = 1 << 52
        return try seriesHits(db, q).map { (h: SeriesHit) -> StatPoint in
            let id: Int64 = base + h.seriesID &* 16_777_216 + Int64(h.index)
            return StatPoint(value: h.sample.quantity.value, start: h.sample.startDate.timeIntervalSince1970,
                             end: h.sample.endDate.timeIntervalSince1970, source: h.sourceID, id: id)
        }
    }

    /// A series quantity as the sample `samples` lists (the series' UUID, its index).
    static func sample(_ x: SeriesQuantity, of uuid: UUID, type: QuantityType, source: Source, device: Device?,
                       location: HeartRateSensorLocation?, index: Int) throws -> QuantitySample {
        var m = Metadata()
        m.heartRateSensorLocation = location
        m.sensorContact = SeriesAttributes.contact(x.attributes)
        m.user = SeriesAttributes.userMetadata(x.attributes)
        let rr = x.rr.isEmpty ? nil : RRIntervals(ticks: x.rr, precededByGap: x.attributes & SeriesAttributes.gap != 0)
        do {
            return try QuantitySample(uuid: uuid, type: type, quantity: Quantity(x.value, type.canonicalUnit),
                                      start: Date(timeIntervalSince1970: x.start), end: Date(timeIntervalSince1970: x.end),
                                      source: source, device: device, metadata: m, rrIntervals: rr,
                                      checkingPlausibility: false, seriesIndex: index)
        } catch {
            throw StoreError.corruptRow("series \(uuid), quantity \(index): \(error)")
        }
    }
}

/// The time predicate of a ``SampleQuery`` applied to one quantity, exactly as
/// ``HealthStore/rangeClause(start:end:strictStart:strictEnd:)`` applies it to a row.
struct QuantityRange {
    var start: Double?
    var end: Double?
    var strictStart: Bool
    var strictEnd: Bool

    init(_ q: SampleQuery) {
        start = q.start?.timeIntervalSince1970
        end = q.end?.timeIntervalSince1970
        strictStart = q.strictStartDate
        strictEnd = q.strictEndDate
    }

    func contains(_ x: SeriesQuantity) -> Bool {
        if let e = end, !(x.start < e) { return false }
        if let b = start {
            guard x.end > b || (x.start == x.end && x.start >= b) else { return false }
            if strictStart, !(x.start >= b) { return false }
        }
        if let e = end, strictEnd, !(x.end <= e) { return false }
        return true
    }
}
