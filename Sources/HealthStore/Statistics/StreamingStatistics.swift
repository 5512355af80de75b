import Foundation
import HealthModel

extension HealthStore {
    /// The range a collection without bounds covers: the query's bounds, else the earliest
    /// matching start and the latest matching end; `instantAtEnd` when an instantaneous sample
    /// lies exactly at that end (it needs the bucket starting there). Nil without samples.
    func sampleSpan(_ query: StatisticsQuery) throws -> (from: Double, to: Double, instantAtEnd: Bool)? {
        try read { db in
            let (whereSQL, args) = try whereClause(query.sampleQuery)
            func one(_ sql: String, _ bind: [SQLValue]) throws -> Double? {
                let st = try db.prepare(sql, cached: false)
                st.bind(all: bind)
                defer { st.reset() }
                return try st.step() ? st.optionalDouble(0) : nil
            }
            // Quantity series: their rows hold the earliest start and latest end of their
            // quantities. The series' own filters, and the range's bounds as they decide for the
            // quantity that holds that start or end (docs/queries.md).
            var seriesFilter = query.sampleQuery
            seriesFilter.start = nil; seriesFilter.end = nil
            let (seriesSQL, seriesArgs) = try whereClause(seriesFilter)
            let e = query.end?.timeIntervalSince1970, b = query.start?.timeIntervalSince1970
            // Separate statements, so SQLite answers each min/max from the type's index.
            func earliest() throws -> Double? {
                let rows = try one("SELECT min(s.start) FROM samples s WHERE \(whereSQL)", args)
                // With an end, the quantity holding a series' start matches (it starts before it).
                let series = try one("SELECT min(s.start) FROM series s WHERE \(seriesSQL)" + (e == nil ? "" : " AND s.start < ?")
                                     + (b == nil ? "" : " AND \(SeriesTotalsSQL.end("s")) >= ?"), seriesArgs + (e.map { [.double($0)] } ?? []) + (b.map { [.double($0)] } ?? []))
                return [rows, series].compactMap { $0 }.min()
            }
            func latest() throws -> Double? {
                let rows = try one("SELECT max(s.\"end\") FROM samples s WHERE \(whereSQL)", args)
                // Past the start, the quantity holding a series' end matches; at it, only an
                // instant exactly there does (found by decoding the chunks there).
                let end = SeriesTotalsSQL.end("s")
                var series = try one("SELECT max(\(end)) FROM series s WHERE \(seriesSQL)" + (b == nil ? "" : " AND \(end) > ?"),
                                     seriesArgs + (b.map { [.double($0)] } ?? []))
                if series == nil, let b, try seriesInstant(db, query, at: b) { series = b }
                return [rows, series].compactMap { $0 }.max()
            }
            guard let from = try query.start.map(\.timeIntervalSince1970) ?? earliest(),
                  let to = try query.end.map(\.timeIntervalSince1970) ?? latest()
            else { return nil }
            var instantAtEnd = false
            if query.end == nil {
                instantAtEnd = try one("SELECT 1 FROM samples s WHERE \(whereSQL) AND s.start = s.\"end\" AND s.\"end\" = ? LIMIT 1",
                                       args + [.double(to)]) != nil
                if !instantAtEnd { instantAtEnd = try seriesInstant(db, query, at: to) }
            }
            return (from, to, instantAtEnd)
        }
    }

    /// Whether a series quantity matching the query's filters is an instant at exactly `t`
    /// (decodes the few chunks whose hull holds `t`).
    private func seriesInstant(_ db: Connection, _ query: StatisticsQuery, at t: Double) throws -> Bool {
        var q = query.sampleQuery
        q.start = Date(timeIntervalSince1970: t)
        q.end = Date(timeIntervalSince1970: t.nextUp)
        return try seriesHits(db, q).contains {
            $0.sample.startDate.timeIntervalSince1970 == t && $0.sample.endDate.timeIntervalSince1970 == t
        }
    }

    /// Statistics per bucket computed by the streaming engine (``StreamingMerge``), with the
    /// rollups when `rollups` is set and the query's filters allow them.
    func streamingResults(_ query: StatisticsQuery, buckets: [Bucket], clip: Bucket, rollups: Bool,
                          work: StatisticsWork? = nil) throws -> [Statistics] {
        try read { db in
            // One read transaction: every statement below sees the same snapshot.
            try db.execute("BEGIN")
            defer { try? db.execute("COMMIT") }
            let ranks = try sourceRanks(db)
            let rankOf = ranks.mapValues(\.rank)
            let useRollups = rollups && query.device == nil && query.sensorLocation == nil
            var allowed: Set<Int64>?
            if let name = query.source {
                let st = try db.prepare("SELECT id FROM sources WHERE name = ? OR identifier = ?", cached: false)
                st.bind(1, name); st.bind(2, name)
                var ids: Set<Int64> = []
                while try st.step() { ids.insert(st.int64(0)) }
                allowed = ids
            }
            let pass = StreamingPass(store: self, db: db, query: query, buckets: buckets, clip: clip,
                                     ranks: rankOf, useRollups: useRollups, chunkAggregates: rollups, work: work)
            let merged = try pass.run(sources: allowed)
            var perSource: [(Int64, [StatisticValues])] = []
            if query.options.contains(.separateBySource) {
                // A source is listed when it has matching samples. Over a non-empty range such a
                // sample contributes somewhere (the buckets cover the range); over an empty one
                // (`statistics` from t to t) a span across t matches yet counts nowhere, so
                // the sources are read from the rows (few: only spans across one instant match).
                var matching: Set<Int64>?
                if !(clip.lo < clip.hi) {
                    let (whereSQL, args) = try whereClause(query.sampleQuery)
                    let st = try db.prepare("SELECT DISTINCT s.source_id FROM samples s WHERE \(whereSQL)", cached: false)
                    st.bind(all: args)
                    var ids: Set<Int64> = []
                    while try st.step() { ids.insert(st.int64(0)) }
                    // Series quantities across the instant (a few chunks decoded).
                    for hit in try seriesHits(db, query.sampleQuery) { ids.insert(hit.sourceID) }
                    matching = ids
                }
                for id in merged.sources.union(matching ?? []).sorted(by: { (rankOf[$0] ?? .max, $0) < (rankOf[$1] ?? .max, $1) }) {
                    let own = try pass.run(sources: [id])
                    if matching?.contains(id) == true || own.values.contains(where: { $0.sampleCount > 0 }) {
                        perSource.append((id, own.values))
                    }
                }
            }
            return try assemble(query: query, buckets: buckets, merged: merged.values, perSource: perSource, ranks: ranks)
        }
    }
}

/// One streaming computation over a set of sources: plan the rollup slots, then decode the
/// rows of the slots the rollups cannot answer, feeding them in start order to a
/// ``StreamingMerge``.
struct StreamingPass {
    let store: HealthStore
    let db: Connection
    let query: StatisticsQuery
    let buckets: [Bucket]
    let clip: Bucket
    let ranks: [Int64: Int]
    let useRollups: Bool
    /// Whether chunks of quantity series may be answered from their aggregates.
    let chunkAggregates: Bool
    /// Counts what was read from series (tests), when given.
    let work: StatisticsWork?

    struct Result {
        var values: [StatisticValues]
        /// The sources seen (a superset of those with matching samples).
        var sources: Set<Int64>
    }

    /// Computes the merged values over the samples and series quantities of `sources` (nil:
    /// every source).
    func run(sources: Set<Int64>?) throws -> Result {
        let style = query.type.aggregationStyle
        let typeID = try store.typeID(query.type)
        var merge = StreamingMerge(buckets: buckets, clip: clip, style: style, ranks: ranks)
        // Quantity series: when another source's rows or series are in play too, every row and
        // chunk goes through one sweep in start order (the priority merge needs it); alone, a
        // series is read chunk by chunk in storage order beside the rows' usual path.
        let withSeries = try seriesSources(sources: sources)
        if !withSeries.isEmpty {
            var rows = try rowSources(typeID: typeID)
            if let sources { rows.formIntersection(sources) }
            if rows.union(withSeries).count > 1 {
                let seen = try sweepOrdered(into: &merge, sources: sources, rowSources: rows, aggregates: chunkAggregates)
                merge.finish()
                return Result(values: merge.acc.map { $0.values(query.options) }, sources: seen)
            }
        }
        func addSeries() throws -> Set<Int64> {
            withSeries.isEmpty ? [] : try addSeriesIndependently(into: &merge, sources: sources, aggregates: chunkAggregates)
        }
        if useRollups {
            var plan = RollupPlan(ranges: merge.ranges, clip: clip, ranks: ranks)
            // Only the columns the options use; `stale` only when a row of the type is stale
            // (never, unless a writer outside HealthStore left one: the write transaction
            // recomputes them before it commits).
            let anyStale = try db.prepare("SELECT 1 FROM sample_rollups WHERE type_id = ? AND stale <> 0 LIMIT 1")
            anyStale.bind(1, typeID)
            let stale = try anyStale.step()
            anyStale.reset()
            let only = sources.flatMap { $0.count == 1 ? $0.first : nil }
            let columns = RollupColumns(options: query.options, style: style, stale: stale, oneSource: only != nil)
            let st = try db.prepare(columns.sql)
            st.bind(1, typeID)
            st.bind(2, clip.hi.isFinite ? Rollups.slot(clip.hi) : Int64.max)
            st.bind(3, clip.lo.isFinite ? clip.lo : -Double.greatestFiniteMagnitude)
            if let only { st.bind(4, only) }
            var present: Set<Int64> = []
            var last: Int64?
            while try st.step() {
                let row = columns.row(st)
                if row.source != last {
                    if let sources, !sources.contains(row.source) { continue }
                    present.insert(row.source)
                    last = row.source
                }
                plan.add(row, into: &merge)
            }
            plan.finish(into: &merge)
            // Runs of consecutive slots, each read with one statement.
            let entries = plan.decode
            var a = 0
            while a < entries.count {
                var b = a + 1
                while b < entries.count, entries[b].slot <= entries[b - 1].slot + 1 { b += 1 }
                try decode(into: &merge, sources: sources, slots: entries[a].slot..<(entries[b - 1].slot + 1), entries: entries[a..<b])
                a = b
            }
            work?.rollupRowsAnswered += plan.answeredRows
            work?.rollupRowsCovered += plan.coveredRows
            present.formUnion(try addSeries())
            merge.finish()
            return Result(values: merge.acc.map { $0.values(query.options) }, sources: present)
        }
        var seen = try decode(into: &merge, sources: sources, slots: nil)
        seen.formUnion(try addSeries())
        merge.finish()
        return Result(values: merge.acc.map { $0.values(query.options) }, sources: seen)
    }

    /// Feeds the matching rows (of `slots`, a half-open range of slot numbers, when given) in
    /// (start, id) order to `merge`; returns the sources seen. With `entries` (the rollup plan's,
    /// sorted by slot and source), only the rows of a slot and source listed there are read,
    /// counted or as coverage only, as the entry says.
    @discardableResult
    func decode(into merge: inout StreamingMerge, sources: Set<Int64>?, slots: Range<Int64>?,
                entries: ArraySlice<RollupPlan.DecodeEntry>? = nil) throws -> Set<Int64> {
        var rowQuery = query.sampleQuery
        var extra: [SQLValue] = []
        var bounds = ""
        if let slots {
            // A superset by a second each side (the division rounds); the slot decides below.
            // The query's own end (`start < end`) is folded into the one upper bound: given two,
            // SQLite bounds its index search by either, and the range's end scanned to the end
            // of the year for every run.
            let upper = min(Double(slots.upperBound) * Rollups.slotSeconds + 1, query.end?.timeIntervalSince1970 ?? .infinity)
            let lower = Double(slots.lowerBound) * Rollups.slotSeconds - 1
            rowQuery.end = nil
            if let from = rowQuery.start?.timeIntervalSince1970, lower >= from {
                // Every row starting at or after the range's start matches it (a span ends
                // after its start, an instant is at it): the overlap test is left out, a
                // tenth of each row's work.
                rowQuery.start = nil
                rowQuery.strictStartDate = false
            }
            bounds = " AND s.start >= ? AND s.start < ?"
            extra += [.double(lower), .double(upper)]
        }
        let (whereSQL, args) = try store.whereClause(rowQuery)
        var sql = "SELECT s.value, s.start, s.\"end\", s.source_id, s.id FROM samples s WHERE \(whereSQL)"
        if let sources, sources.count == 1, let only = sources.first {
            sql += " AND s.source_id = ?"
            extra.insert(.int(only), at: 0)
        }
        sql += bounds
        sql += " ORDER BY s.start, s.id"
        let st = try db.prepare(sql)
        st.bind(all: args + extra)
        // Sources already met and whether they count: a short list, not a set (rows of two
        // overlapping sources alternate, and hashing each row's source was a tenth of the work).
        var met: [(source: Int64, counts: Bool)] = []
        var entry = entries?.startIndex ?? 0
        while try st.step() {
            let source = st.int64(3)
            var counts = true
            if let k = met.firstIndex(where: { $0.source == source }) {
                counts = met[k].counts
            } else {
                counts = sources?.contains(source) ?? true
                met.append((source, counts))
            }
            if !counts { continue }
            let start = st.double(1)
            let slot = Rollups.slot(start)
            if let slots, !slots.contains(slot) { continue }
            let p = StatPoint(value: st.double(0), start: start, end: st.double(2), source: source, id: st.int64(4))
            if let entries {
                // Rows come in start order, so slots never go back.
                while entry < entries.endIndex, entries[entry].slot < slot { entry += 1 }
                var e = entry
                while e < entries.endIndex, entries[e].slot == slot, entries[e].source != source { e += 1 }
                guard e < entries.endIndex, entries[e].slot == slot else { continue }
                work?.rowsDecoded += 1
                if entries[e].counts { merge.add(p) } else { merge.addCoverage(p) }
            } else {
                work?.rowsDecoded += 1
                merge.add(p)
            }
        }
        return Set(met.filter(\.counts).map(\.source))
    }
}

/// Decides, slot row by slot row in time order, how each rollup row (one source's samples of
/// one slot) counts. Priority decides: a row **meets** another source's row when their hulls
/// meet (closed intervals, as the merge's coverage); only a *higher*-priority row can cover it.
///
/// - **Answered** from its rollup: it is not stale, no higher-priority row meets it, and its
///   samples' hull lies inside one bucket (clipped to the range: starts at or after the bucket's
///   start, spans end at or before its end, instants before it). Nothing covers its samples, so
///   they count whole, as the merge would count them.
/// - **Covered**: its hull lies inside the union of the hulls of the *contiguous* higher-priority
///   rows meeting it (a contiguous row's samples' spans are exactly its hull, migration 9; only
///   rows whose samples all match the range count). Every sample of it is covered whole, so it
///   counts nothing, as in the merge; its rows are not read.
/// - **Decoded** otherwise: its rows go through the merge, and with them, as coverage only, the
///   rows of every higher-priority row meeting it (answered, covered or decoded: the merge needs
///   their spans, and nothing else can cover it).
///
/// A row's neighbours are all read once the rows read start after its latest end, so a slot is
/// decided then. The pending rows are kept flat (one array, each slot a range of it; each
/// row's higher-priority neighbours in one chained list), so a year of rows allocates nothing
/// per slot.
struct RollupPlan {
    let ranges: [Bucket]
    let clip: Bucket
    /// Each source's priority key, smaller wins: (rank, id), a source without a rank last (the
    /// merge's order).
    private let ranks: [Int64: Int]

    /// One source's rows of one slot to read: counted, or only as coverage for another's.
    struct DecodeEntry: Comparable {
        var slot: Int64
        var source: Int64
        var counts: Bool
        static func < (a: Self, b: Self) -> Bool {
            (a.slot, a.source, a.counts ? 0 : 1) < (b.slot, b.source, b.counts ? 0 : 1)
        }
    }
    /// The rows to decode (complete once ``finish(into:)`` ran: sorted by slot and source, one
    /// entry per pair, counted when any decision asked for it counted).
    private(set) var decode: [DecodeEntry] = []
    /// How many rollup rows answered for their samples.
    private(set) var answeredRows = 0
    /// How many rollup rows were found covered whole (their samples count nothing, unread).
    private(set) var coveredRows = 0

    /// The pending rows, in arrival order; `rowHead` is the first not yet decided.
    private var rows: [Pending] = []
    private var rowHead = 0
    private struct Pending {
        var row: RollupRow
        /// The first of its higher-priority neighbours in `links` (-1: none).
        var firstLink = -1
    }
    /// A higher-priority row meeting a pending row: where it is, its hull, whether its hull is
    /// exactly its samples' union inside the range (usable as coverage), the next link.
    private struct Link {
        var slot: Int64
        var source: Int64
        var lo: Double
        var hi: Double
        var covers: Bool
        var next: Int
    }
    private var links: [Link] = []
    /// The pending slots: each its slot number, the index of its first row in `rows`, and the
    /// latest slot its rows reach.
    private struct Group {
        var slot: Int64
        var first: Int
        var lastSlotReached: Int64
    }
    private var groups: [Group] = []
    private var groupHead = 0
    private var gathered: [Bucket] = []

    init(ranges: [Bucket], clip: Bucket, ranks: [Int64: Int]) {
        self.ranges = ranges
        self.clip = clip
        self.ranks = ranks
    }

    private func outranks(_ a: Int64, _ b: Int64) -> Bool {
        (ranks[a] ?? .max, a) < (ranks[b] ?? .max, b)
    }

    /// Whether every sample of `row` matches the range (so its spans are coverage there).
    private func inRange(_ row: RollupRow) -> Bool {
        row.minStart >= clip.lo && row.maxEnd < clip.hi
    }

    /// Adds the next row (rows come in slot order); rows found answerable are added to `merge`.
    mutating func add(_ row: RollupRow, into merge: inout StreamingMerge) {
        // Rows that no matching sample can be in are left out, as the query leaves their samples.
        if row.minStart >= clip.hi { return }
        if groupHead == groups.count || groups[groups.count - 1].slot != row.slot {
            while groupHead < groups.count, groups[groupHead].lastSlotReached < row.slot {
                decide(groupHead, into: &merge)
                groupHead += 1
            }
            if groupHead == groups.count {
                groups.removeAll(keepingCapacity: true)
                rows.removeAll(keepingCapacity: true)
                links.removeAll(keepingCapacity: true)
                groupHead = 0
                rowHead = 0
            } else if groupHead > 1024 {
                compact()
            }
            groups.append(Group(slot: row.slot, first: rows.count, lastSlotReached: .min))
        }
        let current = groups.count - 1
        var added = Pending(row: row)
        // Another source's pending row whose hull meets this one: the lower-priority of the two
        // records the other as a neighbour.
        var i = rowHead
        while i < rows.count {
            let other = rows[i].row
            if other.source != row.source, other.maxEnd >= row.minStart, row.maxEnd >= other.minStart {
                if outranks(other.source, row.source) {
                    links.append(Link(slot: other.slot, source: other.source, lo: other.minStart, hi: other.maxEnd,
                                      covers: other.contiguous && !other.stale && inRange(other), next: added.firstLink))
                    added.firstLink = links.count - 1
                } else {
                    links.append(Link(slot: row.slot, source: row.source, lo: row.minStart, hi: row.maxEnd,
                                      covers: row.contiguous && !row.stale && inRange(row), next: rows[i].firstLink))
                    rows[i].firstLink = links.count - 1
                }
            }
            i += 1
        }
        rows.append(added)
        groups[current].lastSlotReached = max(groups[current].lastSlotReached, Rollups.slot(row.maxEnd))
    }

    /// Drops the decided rows and their links (the pending ones' links are copied over).
    private mutating func compact() {
        let shift = groups[groupHead].first
        groups.removeFirst(groupHead)
        for g in groups.indices { groups[g].first -= shift }
        rows.removeFirst(shift)
        var kept: [Link] = []
        for r in rows.indices {
            var chain: [Link] = []
            var l = rows[r].firstLink
            while l >= 0 { chain.append(links[l]); l = links[l].next }
            var first = -1
            for var link in chain.reversed() {
                link.next = first
                kept.append(link)
                first = kept.count - 1
            }
            rows[r].firstLink = first
        }
        links = kept
        groupHead = 0
        rowHead = 0
    }

    /// Decides every slot still pending, and sorts the rows to decode; call once after the last
    /// row.
    mutating func finish(into merge: inout StreamingMerge) {
        while groupHead < groups.count {
            decide(groupHead, into: &merge)
            groupHead += 1
        }
        groups.removeAll()
        rows.removeAll()
        links.removeAll()
        groupHead = 0
        rowHead = 0
        decode.sort()
        var out: [DecodeEntry] = []
        out.reserveCapacity(decode.count)
        for e in decode where out.last.map({ $0.slot != e.slot || $0.source != e.source }) ?? true {
            out.append(e)   // the counted entry sorts first
        }
        decode = out
    }

    /// The bucket that holds every sample of `row` whole, if one does.
    private func bucket(holding row: RollupRow) -> Int? {
        let i = StatisticsEngine.firstBucket(endingAfter: row.minStart, ranges)
        guard i < ranges.count else { return nil }
        let b = ranges[i]
        guard b.lo <= row.minStart, row.maxEnd <= b.hi else { return nil }
        if let instant = row.maxInstant, instant >= b.hi { return nil }
        return i
    }

    /// Whether the coverage links of row `r` hold its hull whole.
    private mutating func covered(_ r: Int) -> Bool {
        gathered.removeAll(keepingCapacity: true)
        var l = rows[r].firstLink
        while l >= 0 {
            if links[l].covers { gathered.append(Bucket(lo: links[l].lo, hi: links[l].hi)) }
            l = links[l].next
        }
        if gathered.isEmpty { return false }
        gathered.sort { $0.lo < $1.lo }
        let row = rows[r].row
        var reach = row.minStart
        for b in gathered {
            if b.lo > reach { return false }
            reach = max(reach, b.hi)
            if reach >= row.maxEnd { return true }
        }
        return false
    }

    private mutating func decide(_ k: Int, into merge: inout StreamingMerge) {
        let g = groups[k]
        let end = k + 1 < groups.count ? groups[k + 1].first : rows.count
        rowHead = end
        for r in g.first..<end {
            let row = rows[r].row
            if !row.stale {
                if rows[r].firstLink < 0 {
                    if let b = bucket(holding: row) {
                        merge.add(aggregate: row, bucket: b)
                        answeredRows += 1
                        continue
                    }
                } else if covered(r) {
                    coveredRows += 1
                    continue
                }
            }
            decode.append(DecodeEntry(slot: row.slot, source: row.source, counts: true))
            var l = rows[r].firstLink
            while l >= 0 {
                decode.append(DecodeEntry(slot: links[l].slot, source: links[l].source, counts: false))
                l = links[l].next
            }
        }
    }
}

/// The `sample_rollups` columns a query reads: only what its options use (a year of rows is
/// tens of thousands; each column read costs as much as stepping the row). The columns a
/// query's options leave out are read as neutral values (no weight, min +∞, max −∞, no most
/// recent), which add nothing to the results asked for.
struct RollupColumns {
    let sql: String
    private let weighted: Int32?, minimum: Int32?, maximum: Int32?, recent: Int32?, stale: Int32?, contiguous: Int32?

    /// - Parameter stale: whether any rollup row of the type is stale (then `stale` is read).
    init(options: StatisticsOptions, style: AggregationStyle, stale: Bool, oneSource: Bool) {
        var names = ["slot", "source_id", "count", "sum", "min_start", "max_end", "max_instant"]
        func add(_ more: [String]) -> Int32 {
            defer { names += more }
            return Int32(names.count)
        }
        weighted = options.contains(.discreteAverage) && style == .discreteTemporallyWeighted ? add(["tw_sum", "tw_weight"]) : nil
        minimum = options.contains(.discreteMin) ? add(["vmin"]) : nil
        maximum = options.contains(.discreteMax) ? add(["vmax"]) : nil
        recent = options.contains(.mostRecent) ? add(["recent_value", "recent_start", "recent_end", "recent_id"]) : nil
        self.stale = stale ? add(["stale"]) : nil
        // Whether a slot's spans make one interval matters only where another source can be covered.
        contiguous = oneSource ? nil : add(["contiguous"])
        sql = "SELECT \(names.joined(separator: ", ")) FROM sample_rollups WHERE type_id = ? AND slot <= ? AND max_end >= ?"
            + (oneSource ? " AND source_id = ?" : "") + " ORDER BY slot, source_id"
    }

    /// The current row of a statement of ``sql``.
    func row(_ st: Statement) -> RollupRow {
        let source = st.int64(1)
        return RollupRow(slot: st.int64(0), source: source, count: st.int(2), sum: st.double(3),
                         weightedSum: weighted.map { st.double($0) } ?? 0, weightTotal: weighted.map { st.double($0 + 1) } ?? 0,
                         minimum: minimum.map { st.double($0) } ?? .infinity, maximum: maximum.map { st.double($0) } ?? -.infinity,
                         minStart: st.double(4), maxEnd: st.double(5), maxInstant: st.optionalDouble(6),
                         recent: recent.map { StatPoint(value: st.double($0), start: st.double($0 + 1), end: st.double($0 + 2),
                                                        source: source, id: st.int64($0 + 3)) }
                             ?? StatPoint(value: 0, start: -.infinity, end: -.infinity, source: source, id: .min),
                         stale: stale.map { st.int($0) != 0 } ?? false,
                         contiguous: contiguous.map { st.int($0) != 0 } ?? false)
    }
}
