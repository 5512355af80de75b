import Foundation
import HealthModel

// The change feed's share of quantity series (docs/change-feed.md, "Quantity series"): which
// series changed since an anchor, and their changed chunks handed out in pieces so that a page
// holds at most its limit of quantities, however long the series.

/// The additions of one change-feed page as they are gathered: samples and series quantities,
/// each counting one toward the room the limit leaves.
struct AdditionsPage {
    /// How many more items fit (nil: no limit).
    let room: Int?
    /// The anchor the page continues.
    let from: ChangeAnchor
    var samples: [QuantitySample] = []

    init(room: Int?, from: ChangeAnchor) {
        self.room = room
        self.from = from
    }

    var isFull: Bool { room.map { samples.count >= $0 } ?? false }

    /// Adds the quantities of `series`' chunks written since the page's anchor — or, with a
    /// cursor, those the cursor has not reached — in (`change_seq`, `seq`) order. `cut` is true
    /// when the page filled first; `cursor` says how far the series went (with `cut` false: to
    /// its end; nil when it has no chunk to send).
    mutating func add(_ series: (id: Int64, info: HealthStore.SeriesRowInfo), chunksFrom cursor: ChangeAnchor.SeriesCursor?,
                      range: QuantityRange, _ store: HealthStore, _ db: Connection) throws -> (cut: Bool, cursor: ChangeAnchor.SeriesCursor?) {
        // The chunk list first, without the data: ordering blobs would hold them all in the sorter.
        var sql = "SELECT id, seq, change_seq, first_index FROM series_chunks WHERE series_id = ?"
        var args: [SQLValue] = [.int(series.id)]
        if let c = cursor {
            sql += " AND (change_seq > ? OR (change_seq = ? AND seq >= ?))"
            args += [.int(c.changeSeq), .int(c.changeSeq), .int(c.chunkSeq)]
        } else {
            sql += " AND change_seq > ?"
            args.append(.int(from.sampleID))
        }
        if let e = range.end { sql += " AND start < ?"; args.append(.double(e)) }
        if let b = range.start { sql += " AND \"end\" >= ?"; args.append(.double(b)) }
        sql += " ORDER BY change_seq, seq"
        let list = try db.prepare(sql)
        list.bind(all: args)
        var chunks: [(row: Int64, seq: Int64, changeSeq: Int64, first: Int)] = []
        while try list.step() { chunks.append((list.int64(0), list.int64(1), list.int64(2), list.int(3))) }
        list.reset()
        let data = try db.prepare("SELECT data FROM series_chunks WHERE id = ?")
        let r = series.info
        var reached = cursor
        for chunk in chunks {
            var skip = 0
            if let c = cursor, c.changeSeq == chunk.changeSeq, c.chunkSeq == chunk.seq { skip = c.sent }
            if isFull { return (true, .init(seriesID: series.id, changeSeq: chunk.changeSeq, chunkSeq: chunk.seq, sent: skip)) }
            data.bind(all: [.int(chunk.row)])
            guard try data.step() else { data.reset(); continue }
            let bytes = [UInt8](data.data(0) ?? Data())
            data.reset()
            let quantities = try SeriesCodec.decodeStored(bytes, "series \(r.uuid)")
            var k = skip
            while k < quantities.count {
                let x = quantities[k]
                if range.contains(x) {
                    if isFull { return (true, .init(seriesID: series.id, changeSeq: chunk.changeSeq, chunkSeq: chunk.seq, sent: k)) }
                    samples.append(try HealthStore.sample(x, of: r.uuid, type: r.type, source: r.source, device: r.device,
                                                          location: r.location, index: chunk.first + k))
                }
                k += 1
            }
            reached = .init(seriesID: series.id, changeSeq: chunk.changeSeq, chunkSeq: chunk.seq, sent: quantities.count)
        }
        return (false, reached)
    }
}

extension HealthStore {
    /// The series rows `filter` selects (its time range loosely: series hold the hull of their
    /// quantities' times), lock held. `after` keeps those that changed past that change-feed
    /// position and orders them by position (else by row id); `seriesID` picks one row.
    func seriesRows(_ db: Connection, _ filter: SampleQuery, typeIDs: [Int64] = [], after: Int64? = nil, seriesID: Int64? = nil,
                    limit: Int? = nil) throws -> [(id: Int64, info: SeriesRowInfo)] {
        var rowFilter = filter
        rowFilter.start = nil; rowFilter.end = nil; rowFilter.strictStartDate = false; rowFilter.strictEndDate = false
        let (whereSQL, whereArgs) = try whereClause(rowFilter)
        var sql = "\(Self.seriesSelectSQL) WHERE \(whereSQL)"
        var args = whereArgs
        if let e = filter.end { sql += " AND s.start < ?"; args.append(.double(e.timeIntervalSince1970)) }
        if let b = filter.start { sql += " AND \(SeriesTotalsSQL.end("s")) >= ?"; args.append(.double(b.timeIntervalSince1970)) }
        if !typeIDs.isEmpty {
            sql += " AND s.type_id IN (\(Array(repeating: "?", count: typeIDs.count).joined(separator: ",")))"
            args += typeIDs.map { .int($0) }
        }
        if let seriesID { sql += " AND s.id = ?"; args.append(.int(seriesID)) }
        if let after {
            // A closed series by its row's position (the index `series_change`); an open one
            // (few: the partial index `series_open`) by its pending chunks' too. Column 17 is
            // the position.
            sql = "\(sql) AND s.open = 0 AND s.change_seq > ? UNION ALL \(sql) AND s.open = 1 AND \(SeriesTotalsSQL.changeSeq("s")) > ? ORDER BY 17"
            args = args + [.int(after)] + args + [.int(after)]
        } else {
            sql += " ORDER BY s.id"
        }
        if let limit { sql += " LIMIT \(limit)" }
        let st = try db.prepare(sql, cached: false)
        st.bind(all: args)
        var rows: [(id: Int64, info: SeriesRowInfo)] = []
        while try st.step() { rows.append((st.int64(0), try seriesRowInfo(st))) }
        return rows
    }
}
