import Foundation
import HealthModel

/// A sample's place in a query's order (docs/queries.md, "Sample queries"): the sort date, then
/// individually stored samples (group 0, by row id) before series quantities (group 1, by
/// series row id, then index); the whole key reversed when descending.
struct SampleOrderKey: Comparable {
    var date: Double
    var group: Int
    var id: Int64
    var index: Int

    static func < (a: Self, b: Self) -> Bool {
        (a.date, a.group, a.id, a.index) < (b.date, b.group, b.id, b.index)
    }

    /// An individually stored sample's key (its row id).
    init(row sample: QuantitySample, id: Int64, sortBy: SampleQuery.SortKey) {
        self.init(date: Self.date(sample, sortBy), group: 0, id: id, index: 0)
    }

    /// A series quantity's key (its series' row id and its index).
    init(hit: SeriesHit, sortBy: SampleQuery.SortKey) {
        self.init(date: Self.date(hit.sample, sortBy), group: 1, id: hit.seriesID, index: hit.index)
    }

    init(date: Double, group: Int, id: Int64, index: Int) {
        self.date = date; self.group = group; self.id = id; self.index = index
    }

    private static func date(_ s: QuantitySample, _ sortBy: SampleQuery.SortKey) -> Double {
        sortBy == .startDate ? s.startDate.timeIntervalSince1970 : s.endDate.timeIntervalSince1970
    }
}

extension HealthStore {
    /// The series quantities that can be among the first `limit` samples of `q`'s order, given
    /// the individually stored samples `rows` that the same query returns (its limit applied):
    /// every quantity that belongs in the answer is returned (others may be too; the caller
    /// merges and cuts, ``merge(_:_:query:)``). Decodes only the chunks that can hold one.
    ///
    /// How (docs/queries.md, "Sample queries"): series are visited in the order of a bound on
    /// their quantities' sort dates, and each series' chunks in the order of the same bound
    /// on theirs — ascending, a series' or chunk's earliest start (no quantity starts or ends
    /// before it); descending, its latest end (no quantity starts or ends after it). The
    /// `limit`-th best key among the rows and the quantities decoded so far is a threshold: a
    /// chunk (or series) whose bound lies beyond the threshold's date cannot hold a quantity
    /// that belongs (ties on the date are decoded: series quantities may order before rows
    /// there). So `mostRecentSample` decodes one chunk, or none when an individually stored
    /// sample ends later; `samples --limit N` decodes the chunks that hold the first N.
    ///
    /// Relies on the series row's and each chunk's `start`/`end` being the hull of every
    /// quantity they hold (what ``seriesHits(_:_:work:)`` relies on).
    func seriesHits(_ db: Connection, _ q: SampleQuery, limit: Int,
                    rows: [(sample: QuantitySample, id: Int64)], work: StatisticsWork? = nil) throws -> [SeriesHit] {
        let limit = max(0, limit)
        guard limit > 0 else { return [] }
        let ascending = q.ascending
        let byStart = q.sortBy == .startDate
        func date(_ start: Double, _ end: Double) -> Double { byStart ? start : end }
        /// Whether `a` comes before `b` in the query's order.
        func precedes(_ a: SampleOrderKey, _ b: SampleOrderKey) -> Bool { ascending ? a < b : b < a }
        /// Whether a block whose bound is `bound` may hold a quantity not after `threshold`.
        func mayHold(_ bound: Double, _ threshold: SampleOrderKey?) -> Bool {
            guard let t = threshold else { return true }
            return ascending ? bound <= t.date : bound >= t.date
        }

        // The best keys so far (rows and kept quantities), cut back to `limit` as they grow;
        // the last of them, once there are `limit`, is the threshold.
        var best: [SampleOrderKey] = rows.map { SampleOrderKey(row: $0.sample, id: $0.id, sortBy: q.sortBy) }
        var threshold: SampleOrderKey?
        func settle(force: Bool) {
            // Exact after every chunk for small limits; for large ones every time the pool
            // doubles (the threshold then lags, which only means more decoding, never less).
            guard best.count >= limit, force || limit <= 4096 || best.count >= 2 * limit else { return }
            best.sort(by: precedes)
            if best.count > limit { best.removeLast(best.count - limit) }
            threshold = best[limit - 1]
        }
        settle(force: true)
        func key(_ h: SeriesHit) -> SampleOrderKey { SampleOrderKey(hit: h, sortBy: q.sortBy) }

        // The series that match the filters and may overlap the range, in bound order.
        var filter = q
        filter.start = nil; filter.end = nil; filter.strictStartDate = false; filter.strictEndDate = false
        filter.sortBy = .startDate; filter.ascending = true; filter.limit = nil
        let (whereSQL, args) = try whereClause(filter)
        let end = SeriesTotalsSQL.end("s")
        var sql = "SELECT s.id, s.start, \(end) FROM series s WHERE \(whereSQL)"
        var seriesArgs = args
        if let e = q.end { sql += " AND s.start < ?"; seriesArgs.append(.double(e.timeIntervalSince1970)) }
        if let b = q.start { sql += " AND \(end) >= ?"; seriesArgs.append(.double(b.timeIntervalSince1970)) }
        sql += ascending ? " ORDER BY s.start, s.id" : " ORDER BY 3 DESC, s.id DESC"
        let list = try db.prepare(sql, cached: false)
        list.bind(all: seriesArgs)
        var candidates: [(id: Int64, bound: Double)] = []
        while try list.step() {
            candidates.append((list.int64(0), ascending ? list.double(1) : list.double(2)))
        }
        guard !candidates.isEmpty else { return [] }

        var chunkSQL = "SELECT first_index, start, \"end\", data FROM series_chunks WHERE series_id = ?"
        var chunkArgs: [SQLValue] = []
        if let e = q.end { chunkSQL += " AND start < ?"; chunkArgs.append(.double(e.timeIntervalSince1970)) }
        if let b = q.start { chunkSQL += " AND \"end\" >= ?"; chunkArgs.append(.double(b.timeIntervalSince1970)) }
        chunkSQL += ascending ? " ORDER BY start, seq" : " ORDER BY \"end\" DESC, seq DESC"
        let chunks = try db.prepare(chunkSQL)
        let info = try db.prepare("\(Self.seriesSelectSQL) WHERE s.id = ?")
        let range = QuantityRange(q)
        var out: [SeriesHit] = []
        for (seriesID, bound) in candidates {
            if !mayHold(bound, threshold) { break }
            var series: SeriesRowInfo?
            chunks.reset()
            chunks.bind(all: [.int(seriesID)] + chunkArgs)
            while try chunks.step() {
                if !mayHold(ascending ? chunks.double(1) : chunks.double(2), threshold) { break }
                if series == nil {
                    info.reset()
                    info.bind(1, seriesID)
                    guard try info.step() else { break }
                    series = try seriesRowInfo(info)
                    info.reset()
                }
                guard let r = series else { break }
                let first = chunks.int(0)
                let bytes = [UInt8](chunks.data(3) ?? Data())
                let quantities = try SeriesCodec.decodeStored(bytes, "series \(r.uuid)")
                work?.chunksDecoded += 1
                for (k, x) in quantities.enumerated() where range.contains(x) {
                    let own = SampleOrderKey(date: date(x.start, x.end), group: 1, id: seriesID, index: first + k)
                    if let t = threshold, !precedes(own, t) { continue }
                    best.append(own)
                    out.append(SeriesHit(sample: try Self.sample(x, of: r.uuid, type: r.type, source: r.source, device: r.device,
                                                                 location: r.location, index: first + k),
                                         seriesID: seriesID, index: first + k, changeSeq: r.changeSeq, sourceID: r.sourceID))
                }
                settle(force: false)
                if let t = threshold, out.count > 2 * limit {
                    // Quantities already after the threshold cannot belong: bounded memory.
                    out.removeAll { precedes(t, key($0)) }
                }
            }
            chunks.reset()
        }
        return out
    }

    /// A series row of ``seriesSelectSQL`` (its provenance), as quantities are built from it.
    struct SeriesRowInfo {
        var uuid: UUID
        var type: QuantityType
        var source: Source
        var device: Device?
        var location: HeartRateSensorLocation?
        var changeSeq: Int64
        var sourceID: Int64
    }

    /// Reads the current row of a ``seriesSelectSQL`` statement.
    func seriesRowInfo(_ st: Statement) throws -> SeriesRowInfo {
        guard let uuid = st.uuid(1) else { throw StoreError.corruptRow("a series' uuid is not 16 bytes") }
        var device: Device?
        if !st.isNull(14) {
            device = Device(name: st.string(6), manufacturer: st.string(7), model: st.string(8),
                            hardwareVersion: st.string(9), firmwareVersion: st.string(10),
                            softwareVersion: st.string(11), localIdentifier: st.string(12),
                            udiDeviceIdentifier: st.string(13))
        }
        return SeriesRowInfo(uuid: uuid, type: try type(id: st.int64(2)),
                             source: Source(name: st.string(3) ?? "?", identifier: st.string(4), version: st.string(5)),
                             device: device, location: st.optionalInt(15).flatMap(HeartRateSensorLocation.init(rawValue:)),
                             changeSeq: st.int64(16), sourceID: st.int64(17))
    }
}
