import Foundation
import HealthModel

/// What one statistics computation read from quantity series (tests count it to prove that
/// chunk aggregates are used and that only the chunks that need it are decoded).
package final class StatisticsWork {
    /// Chunks answered from their stored aggregates, without decoding their data.
    package var chunksFromAggregates = 0
    /// Chunks whose data was decoded.
    package var chunksDecoded = 0
    /// Individually stored rows read by the streaming merge (counted or as coverage).
    package var rowsDecoded = 0
    /// Rollup rows (one source's samples of a 15-minute slot) counted from their aggregates.
    package var rollupRowsAnswered = 0
    /// Rollup rows found covered whole by a higher-priority source's contiguous slots: their
    /// samples count nothing and are not read.
    package var rollupRowsCovered = 0
    package init() {}
}

/// One chunk of a quantity series as statistics see it before deciding whether to decode it:
/// where it lies and its stored aggregates (the `series_chunks` columns beside its data).
struct ChunkBlock {
    var seriesID: Int64
    var seq: Int
    var source: Int64
    var firstIndex: Int
    /// The earliest start and the latest end of its quantities (its hull).
    var start: Double
    var end: Double
    var count: Int
    var sum: Double
    var minimum: Double
    var maximum: Double
    var weighted: Double
    var weight: Double
    var recent: Double
    var recentStart: Double
    var recentEnd: Double

    /// Reads the columns of ``SeriesStatistics/chunkColumns`` (from column 0).
    init(_ st: Statement, seriesID: Int64, source: Int64) {
        self.seriesID = seriesID; self.source = source
        seq = st.int(0); firstIndex = st.int(1); start = st.double(2); end = st.double(3); count = st.int(4)
        sum = st.double(5); minimum = st.double(6); maximum = st.double(7); weighted = st.double(8); weight = st.double(9)
        recent = st.double(10); recentStart = st.double(11); recentEnd = st.double(12)
    }

    /// The statistics id of quantity `k` of this chunk: after every individually stored
    /// sample's, ordered by series, then index (as ``HealthStore/seriesStatPoints(_:_:)``).
    func pointID(_ k: Int) -> Int64 {
        SeriesStatistics.idBase + seriesID &* 16_777_216 + Int64(firstIndex + k)
    }

    /// The aggregates as a rollup row: every quantity counted whole. The most recent
    /// quantity's id is the chunk's last one: within one chunk the stored `recent` is already
    /// the latest appended among ties, and against another chunk or sample only the order of
    /// ids matters, which any id in this chunk's index range gives.
    var aggregate: RollupRow {
        RollupRow(slot: 0, source: source, count: count, sum: sum, weightedSum: weighted, weightTotal: weight,
                  minimum: minimum, maximum: maximum, minStart: start, maxEnd: end, maxInstant: nil,
                  recent: StatPoint(value: recent, start: recentStart, end: recentEnd, source: source, id: pointID(count - 1)),
                  stale: false, contiguous: false)
    }
}

/// Statistics over quantity series, streamed chunk by chunk (docs/queries.md, "Quantity
/// series"). A chunk whose quantities all lie inside one bucket (and the query range) and
/// that no other source's sample or chunk meets is added from its stored aggregates; any
/// other chunk is decoded, and only its quantities that match the query are counted.
enum SeriesStatistics {
    /// Statistics ids from 2^52 on are series quantities.
    static let idBase: Int64 = 1 << 52

    static let chunkColumns = """
        seq, first_index, start, "end", count, sum, min, max, weighted, weight, recent, recent_start, recent_end
        """

    /// The series of the query (its filters, loosely in its range), ordered by start: columns
    /// id, source_id, start.
    static func seriesStatement(_ store: HealthStore, _ db: Connection, _ query: StatisticsQuery, clip: Bucket,
                                sources: Set<Int64>?) throws -> Statement {
        var filter = query.sampleQuery
        filter.start = nil; filter.end = nil
        let (whereSQL, args) = try store.whereClause(filter)
        var sql = "SELECT s.id, s.source_id, s.start FROM series s WHERE \(whereSQL) AND s.start < ? AND \(SeriesTotalsSQL.end("s")) >= ?"
        var all: [SQLValue] = args + [.double(clip.hi.isFinite ? clip.hi : .greatestFiniteMagnitude),
                          .double(clip.lo.isFinite ? clip.lo : -.greatestFiniteMagnitude)]
        if let sources {
            sql += " AND s.source_id IN (\(Array(repeating: "?", count: sources.count).joined(separator: ",")))"
            all += sources.sorted().map { .int($0) }
        }
        let st = try db.prepare(sql + " ORDER BY s.start, s.id", cached: false)
        st.bind(all: all)
        return st
    }

    /// The chunks of one series loosely in the range (hull meets it), with their data as the
    /// last column, in append order.
    static func chunkStatement(_ db: Connection, orderedByStart: Bool, cached: Bool = true) throws -> Statement {
        try db.prepare("""
            SELECT \(chunkColumns)\(orderedByStart ? "" : ", data") FROM series_chunks
            WHERE series_id = ? AND start < ? AND "end" >= ? ORDER BY \(orderedByStart ? "start, seq" : "seq")
            """, cached: cached)
    }

    static func bindChunks(_ st: Statement, seriesID: Int64, clip: Bucket) {
        st.reset()
        st.bind(1, seriesID)
        st.bind(2, clip.hi.isFinite ? clip.hi : .greatestFiniteMagnitude)
        st.bind(3, clip.lo.isFinite ? clip.lo : -.greatestFiniteMagnitude)
    }

    /// The bucket that holds every quantity of `c` whole (and inside the query range), if one
    /// does. An instant at a bucket's end belongs to the next bucket, and the aggregates do not
    /// say whether the latest end is an instant's: a chunk ending exactly on a bucket edge is
    /// decoded.
    static func bucket(holding c: ChunkBlock, _ ranges: [Bucket]) -> Int? {
        let i = StatisticsEngine.firstBucket(endingAfter: c.start, ranges)
        guard i < ranges.count, c.count > 0 else { return nil }
        let b = ranges[i]
        return b.lo <= c.start && c.end < b.hi ? i : nil
    }

    /// The quantities of `c` that match `range`, as statistics points, in index order.
    static func decode(_ c: ChunkBlock, bytes: [UInt8], range: QuantityRange) throws -> [StatPoint] {
        let quantities = try SeriesCodec.decodeStored(bytes, "a chunk of series row \(c.seriesID) (seq \(c.seq))")
        var out: [StatPoint] = []
        out.reserveCapacity(quantities.count)
        for (k, x) in quantities.enumerated() where range.contains(x) {
            out.append(StatPoint(value: x.value, start: x.start, end: x.end, source: c.source, id: c.pointID(k)))
        }
        return out
    }
}

extension StreamingPass {
    /// Adds every matching series quantity of `sources` when no other source's data is in play
    /// (no priority merge can apply): chunks inside one bucket from their aggregates, the rest
    /// decoded and counted whole. Order does not matter then, so series and chunks are read in
    /// storage order. Returns the sources of the series read.
    func addSeriesIndependently(into merge: inout StreamingMerge, sources: Set<Int64>?, aggregates: Bool) throws -> Set<Int64> {
        let series = try SeriesStatistics.seriesStatement(store, db, query, clip: clip, sources: sources)
        let chunks = try SeriesStatistics.chunkStatement(db, orderedByStart: false)
        let range = QuantityRange(query.sampleQuery)
        var seen: Set<Int64> = []
        while try series.step() {
            let id = series.int64(0), source = series.int64(1)
            seen.insert(source)
            SeriesStatistics.bindChunks(chunks, seriesID: id, clip: clip)
            while try chunks.step() {
                let c = ChunkBlock(chunks, seriesID: id, source: source)
                if aggregates, let i = SeriesStatistics.bucket(holding: c, merge.ranges) {
                    merge.add(aggregate: c.aggregate, bucket: i)
                    work?.chunksFromAggregates += 1
                    continue
                }
                work?.chunksDecoded += 1
                for p in try SeriesStatistics.decode(c, bytes: [UInt8](chunks.data(13) ?? Data()), range: range) {
                    merge.addUnmerged(p)
                }
            }
        }
        chunks.reset()
        return seen
    }

    /// Computes over samples and series of several sources: every row and chunk in start
    /// order through the priority merge (``OrderedSweep``). Returns the sources seen.
    func sweepOrdered(into merge: inout StreamingMerge, sources: Set<Int64>?, rowSources: Set<Int64>,
                      aggregates: Bool) throws -> Set<Int64> {
        var sweep = OrderedSweep(pass: self, aggregates: aggregates)
        try sweep.run(into: &merge, sources: sources, rowSources: rowSources)
        return sweep.seen
    }

    /// The sources with individually stored samples of the type loosely in the range (from the
    /// rollups: a superset of those with matching samples).
    func rowSources(typeID: Int64) throws -> Set<Int64> {
        let st = try db.prepare("SELECT DISTINCT source_id FROM sample_rollups WHERE type_id = ? AND slot <= ? AND max_end >= ?")
        st.bind(1, typeID)
        st.bind(2, clip.hi.isFinite ? Rollups.slot(clip.hi) : Int64.max)
        st.bind(3, clip.lo.isFinite ? clip.lo : -Double.greatestFiniteMagnitude)
        var out: Set<Int64> = []
        while try st.step() { out.insert(st.int64(0)) }
        return out
    }

    /// The sources of series of the query loosely in the range.
    func seriesSources(sources: Set<Int64>?) throws -> Set<Int64> {
        let st = try SeriesStatistics.seriesStatement(store, db, query, clip: clip, sources: sources)
        var out: Set<Int64> = []
        while try st.step() { out.insert(st.int64(1)) }
        return out
    }
}

/// The sweep over rows and chunks of several sources in start order, feeding the priority
/// merge with every quantity it must decode in (start, id) order, and adding from aggregates
/// each chunk inside one bucket that no other source's row or chunk meets (closed hulls, as
/// the merge's coverage).
///
/// Cursors, each in nondecreasing start: one per source over its rows (by start, id), one per
/// series over its chunks' aggregates (by start: a clock that stepped back leaves a series'
/// chunks out of start order, so SQLite sorts them, without their data), and the series
/// themselves by start, opened when the sweep reaches them. The next block is the earliest
/// head. A chunk waits (undecided, not decoded) until the sweep passes its end: by then every
/// block that can meet it has been seen. Decoded quantities wait in a heap until no block
/// still to come, and no undecided chunk, can hold an earlier one. Memory: the cursors, the
/// chunks within one chunk's span of the sweep, and their quantities.
struct OrderedSweep {
    let pass: StreamingPass
    let aggregates: Bool
    private(set) var seen: Set<Int64> = []

    private enum Block {
        case row(StatPoint)
        case chunk(ChunkBlock)
        var start: Double {
            switch self {
            case .row(let p): p.start
            case .chunk(let c): c.start
            }
        }
        var end: Double {
            switch self {
            case .row(let p): p.end
            case .chunk(let c): c.end
            }
        }
        var source: Int64 {
            switch self {
            case .row(let p): p.source
            case .chunk(let c): c.source
            }
        }
    }

    private final class Cursor {
        let statement: Statement
        let seriesID: Int64?
        let source: Int64
        var head: Block?
        init(statement: Statement, seriesID: Int64?, source: Int64) {
            self.statement = statement; self.seriesID = seriesID; self.source = source
        }
        func advance() throws {
            guard try statement.step() else { head = nil; statement.reset(); return }
            if let seriesID {
                head = .chunk(ChunkBlock(statement, seriesID: seriesID, source: source))
            } else {
                head = .row(StatPoint(value: statement.double(0), start: statement.double(1), end: statement.double(2),
                                      source: source, id: statement.int64(3)))
            }
        }
    }

    private struct Pending {
        var chunk: ChunkBlock
        var conflicted: Bool
    }

    private var cursors: [Cursor] = []
    private var pending: [Pending] = []
    private var pendingHead = 0
    private var reach: [Int64: Double] = [:]
    private var heap = PointHeap()

    init(pass: StreamingPass, aggregates: Bool) {
        self.pass = pass
        self.aggregates = aggregates
    }

    mutating func run(into merge: inout StreamingMerge, sources: Set<Int64>?, rowSources: Set<Int64>) throws {
        let db = pass.db
        let range = QuantityRange(pass.query.sampleQuery)
        // Rows: one cursor per source.
        let (whereSQL, args) = try pass.store.whereClause(pass.query.sampleQuery)
        for source in rowSources.sorted() where sources?.contains(source) ?? true {
            let st = try db.prepare("SELECT s.value, s.start, s.\"end\", s.id FROM samples s WHERE \(whereSQL) AND s.source_id = ? ORDER BY s.start, s.id",
                                    cached: false)
            st.bind(all: args + [.int(source)])
            let c = Cursor(statement: st, seriesID: nil, source: source)
            try c.advance()
            if c.head != nil { cursors.append(c) }
        }
        let series = try SeriesStatistics.seriesStatement(pass.store, db, pass.query, clip: pass.clip, sources: sources)
        var nextSeries: (id: Int64, source: Int64, start: Double)?
        func readSeries() throws {
            nextSeries = try series.step() ? (series.int64(0), series.int64(1), series.double(2)) : nil
        }
        try readSeries()
        let data = try db.prepare("SELECT data FROM series_chunks WHERE series_id = ? AND seq = ?")
        let decode = ChunkDecoder(data: data, range: range, work: pass.work)

        while true {
            // The earliest head, after opening every series that may hold an earlier chunk.
            var best: Int?
            func findBest() {
                best = nil
                for (i, c) in cursors.enumerated() where best == nil || c.head!.start < cursors[best!].head!.start { best = i }
            }
            findBest()
            while let s = nextSeries, best == nil || s.start <= cursors[best!].head!.start {
                // A statement per open series (each is stepped in turn): not the shared cache.
                let own = try SeriesStatistics.chunkStatement(db, orderedByStart: true, cached: false)
                SeriesStatistics.bindChunks(own, seriesID: s.id, clip: pass.clip)
                let c = Cursor(statement: own, seriesID: s.id, source: s.source)
                seen.insert(s.source)
                try c.advance()
                if c.head != nil { cursors.append(c) }
                try readSeries()
                findBest()
            }
            guard let i = best else { break }
            let cursor = cursors[i]
            let block = cursor.head!
            try cursor.advance()
            if cursor.head == nil { cursors.remove(at: i) }

            // Conflicts: an earlier block of another source reaching this one, or an undecided
            // chunk of another source that this one meets.
            var conflicted = false
            for (s, r) in reach where s != block.source && r >= block.start { conflicted = true }
            for k in pendingHead..<pending.count where pending[k].chunk.source != block.source && pending[k].chunk.end >= block.start {
                pending[k].conflicted = true
                conflicted = true
            }
            reach[block.source] = max(reach[block.source] ?? -.infinity, block.end)
            switch block {
            case .row(let p):
                seen.insert(p.source)
                heap.push(p)
            case .chunk(let c):
                if conflicted || !aggregates { try decode.decode(c, into: &heap) } else { pending.append(Pending(chunk: c, conflicted: false)) }
            }

            // Decide the chunks the sweep has passed, then release what nothing can precede.
            var watermark = nextSeries?.start ?? .infinity
            for c in cursors { watermark = min(watermark, c.head!.start) }
            try decideAndRelease(watermark: watermark, into: &merge, decode: decode)
        }
        try decideAndRelease(watermark: .infinity, into: &merge, decode: decode)
    }

    private mutating func decideAndRelease(watermark: Double, into merge: inout StreamingMerge,
                                           decode: ChunkDecoder) throws {
        while pendingHead < pending.count, pending[pendingHead].chunk.end < watermark {
            let p = pending[pendingHead]
            pendingHead += 1
            if !p.conflicted, let i = SeriesStatistics.bucket(holding: p.chunk, merge.ranges) {
                merge.add(aggregate: p.chunk.aggregate, bucket: i)
                pass.work?.chunksFromAggregates += 1
            } else {
                try decode.decode(p.chunk, into: &heap)
            }
        }
        if pendingHead == pending.count { pending.removeAll(keepingCapacity: true); pendingHead = 0 }
        let bound = pendingHead < pending.count ? min(watermark, pending[pendingHead].chunk.start) : watermark
        while let top = heap.top, top.start < bound || bound == .infinity {
            merge.add(heap.pop())
        }
    }
}

/// Reads a chunk's data by its key and decodes it into the sweep's heap.
private struct ChunkDecoder {
    let data: Statement
    let range: QuantityRange
    let work: StatisticsWork?

    func decode(_ c: ChunkBlock, into heap: inout PointHeap) throws {
        work?.chunksDecoded += 1
        data.reset()
        data.bind(1, c.seriesID); data.bind(2, c.seq)
        guard try data.step() else { throw StoreError.corruptRow("chunk \(c.seq) of series row \(c.seriesID) vanished during a read") }
        let bytes = [UInt8](data.data(0) ?? Data())
        data.reset()
        for p in try SeriesStatistics.decode(c, bytes: bytes, range: range) { heap.push(p) }
    }
}

/// A binary min-heap of statistics points by (start, id): the merge's input order.
struct PointHeap {
    private var items: [StatPoint] = []

    var top: StatPoint? { items.first }

    private static func less(_ a: StatPoint, _ b: StatPoint) -> Bool { (a.start, a.id) < (b.start, b.id) }

    mutating func push(_ p: StatPoint) {
        items.append(p)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard Self.less(items[i], items[parent]) else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func pop() -> StatPoint {
        let out = items[0]
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < items.count, Self.less(items[l], items[m]) { m = l }
                if r < items.count, Self.less(items[r], items[m]) { m = r }
                if m == i { break }
                items.swapAt(i, m)
                i = m
            }
        }
        return out
    }
}
