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
                                     + (b == nil ? "" : " AND s.\"end\" >= ?"), seriesArgs + (e.map { [.double($0)] } ?? []) + (b.map { [.double($0)] } ?? []))
                return [rows, series].compactMap { $0 }.min()
            }
            func latest() throws -> Double? {
                let rows = try one("SELECT max(s.\"end\") FROM samples s WHERE \(whereSQL)", args)
                // Past the start, the quantity holding a series' end matches; at it, only an
                // instant exactly there does (found by decoding the chunks there).
                var series = try one("SELECT max(s.\"end\") FROM series s WHERE \(seriesSQL)" + (b == nil ? "" : " AND s.\"end\" > ?"),
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
            var plan = RollupPlan(ranges: merge.ranges, clip: clip)
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
            for run in plan.decode {
                try decode(into: &merge, sources: sources, slots: run)
            }
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
    /// (start, id) order to `merge`; returns the sources seen.
    @discardableResult
    func decode(into merge: inout StreamingMerge, sources: Set<Int64>?, slots: Range<Int64>?) throws -> Set<Int64> {
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
            if let slots, !slots.contains(Rollups.slot(start)) { continue }
            merge.add(StatPoint(value: st.double(0), start: start, end: st.double(2), source: source, id: st.int64(4)))
        }
        return Set(met.filter(\.counts).map(\.source))
    }
}

/// Decides, slot by slot in time order, which rollup slots answer for their samples and which
/// must be decoded. A slot is answered from its rollups when, for every source's row in it:
/// it is not stale, its samples' hull lies inside one bucket (clipped to the range: starts at or
/// after the bucket's start, spans end at or before its end, instants before it), and no row
/// of another source has a hull meeting it (closed intervals, as the merge's coverage). Then
/// none of its samples covers or is covered by another source's, so they count whole, exactly
/// as the merge would count them. A row's neighbours can only be in slots whose rows are still
/// pending here: a slot is decided once the rows read start after its latest end.
///
/// The pending slots are kept flat (their rows in one array, each slot a range of it), so a
/// year of rows allocates nothing per slot.
struct RollupPlan {
    let ranges: [Bucket]
    let clip: Bucket

    /// Slot ranges to decode, ascending and coalesced.
    private(set) var decode: [Range<Int64>] = []
    /// How many rollup rows answered for their samples.
    private(set) var answeredRows = 0

    /// The pending rows, in arrival order; `rowHead` is the first not yet decided.
    private var rows: [RollupRow] = []
    private var rowHead = 0
    /// The pending slots: each its slot number, the index of its first row in `rows`, whether
    /// a row of it meets a row of another source, and the latest slot its rows reach.
    private struct Group {
        var slot: Int64
        var first: Int
        var conflicted = false
        var lastSlotReached: Int64
    }
    private var groups: [Group] = []
    private var groupHead = 0

    init(ranges: [Bucket], clip: Bucket) {
        self.ranges = ranges
        self.clip = clip
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
                groupHead = 0
                rowHead = 0
            } else if groupHead > 1024 {
                let shift = groups[groupHead].first
                groups.removeFirst(groupHead)
                for g in groups.indices { groups[g].first -= shift }
                rows.removeFirst(shift)
                groupHead = 0
                rowHead = 0
            }
            groups.append(Group(slot: row.slot, first: rows.count, lastSlotReached: .min))
        }
        let current = groups.count - 1
        // Another source's pending row whose hull meets this one: both slots are decoded.
        var g = groupHead
        var i = rowHead
        while i < rows.count {
            while g + 1 < groups.count, groups[g + 1].first <= i { g += 1 }
            let other = rows[i]
            if other.source != row.source, other.maxEnd >= row.minStart, row.maxEnd >= other.minStart {
                groups[g].conflicted = true
                groups[current].conflicted = true
            }
            i += 1
        }
        rows.append(row)
        groups[current].lastSlotReached = max(groups[current].lastSlotReached, Rollups.slot(row.maxEnd))
    }

    /// Decides every slot still pending; call once after the last row.
    mutating func finish(into merge: inout StreamingMerge) {
        while groupHead < groups.count {
            decide(groupHead, into: &merge)
            groupHead += 1
        }
        groups.removeAll()
        rows.removeAll()
        groupHead = 0
        rowHead = 0
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

    private mutating func decide(_ k: Int, into merge: inout StreamingMerge) {
        let g = groups[k]
        let end = k + 1 < groups.count ? groups[k + 1].first : rows.count
        rowHead = end
        if !g.conflicted {
            // Answerable when every row is: checked first, then added (all or none).
            var answerable = true
            for i in g.first..<end where rows[i].stale || bucket(holding: rows[i]) == nil {
                answerable = false
                break
            }
            if answerable {
                for i in g.first..<end { merge.add(aggregate: rows[i], bucket: bucket(holding: rows[i])!) }
                answeredRows += end - g.first
                return
            }
        }
        if let last = decode.last, last.upperBound == g.slot {
            decode[decode.count - 1] = last.lowerBound..<(g.slot + 1)
        } else {
            decode.append(g.slot..<(g.slot + 1))
        }
    }
}

/// The `sample_rollups` columns a query reads: only what its options use (a year of rows is
/// tens of thousands; each column read costs as much as stepping the row). The columns a
/// query's options leave out are read as neutral values (no weight, min +∞, max −∞, no most
/// recent), which add nothing to the results asked for.
struct RollupColumns {
    let sql: String
    private let weighted: Int32?, minimum: Int32?, maximum: Int32?, recent: Int32?, stale: Int32?

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
                         stale: stale.map { st.int($0) != 0 } ?? false)
    }
}
