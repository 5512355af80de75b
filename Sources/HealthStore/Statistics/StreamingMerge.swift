import HealthModel

/// The merge across sources of docs/queries.md computed in one pass over samples in start
/// order, with memory bounded by the buckets plus the samples that are "open" at the sweep
/// position — never by the number of samples.
///
/// The rule it reproduces (``StatisticsEngine/merge(_:rank:)``): a sample keeps the parts of its
/// span not covered by the closed spans of any sample of a higher-priority source; an instant
/// survives only if no such span contains it. Whether a sample survives therefore depends on
/// higher-priority samples that start before its end. Reading in start order, a sample of any
/// source but the top-ranked one waits ("pending", first in, first out) until a sample starting
/// after its end has been read — then every sample that can cover it has been seen. Each
/// source's spans are kept as a coalesced list of closed intervals, and intervals ending
/// before the oldest pending sample are dropped, since nothing still to be decided can meet
/// them. Samples of the top-ranked source are never covered and count at once.
///
/// Numbers: a single source's samples are counted in start order, as the old engine counts
/// them, so its results are bit for bit the same; with several sources the additions happen in
/// another order, so a sum may differ in its last bits (the tests allow 1e-9 relative).
struct StreamingMerge {
    /// The buckets clipped to the query range.
    let ranges: [Bucket]
    let style: AggregationStyle
    /// Per-bucket accumulators (the merged result).
    private(set) var acc: [StatisticsEngine.Accumulator]

    /// Priority position of each source id (0 = highest), in the order the old engine visits
    /// them: (rank, id) ascending, an unranked source last.
    private var position: [Int64: Int]
    /// Coverage per priority position: coalesced closed spans, sorted; `coverHead[i]` is the
    /// first still needed.
    private var cover: [[Bucket]]
    private var coverHead: [Int]
    /// Samples waiting for every sample that can cover them (first in, first out).
    private var pending: [StatPoint] = []
    private var pendingHead = 0
    private var scratch: [Int: Double] = [:]
    private var gathered: [Bucket] = []
    /// The position of the top-ranked source: its samples are never covered (-1: none, once a
    /// source nobody foresaw outranked it).
    private var top: Int

    /// - Parameter ranks: every source's priority rank (1 wins); a source missing here (one
    ///   saved after the ranks were read) ranks last.
    init(buckets: [Bucket], clip: Bucket, style: AggregationStyle, ranks: [Int64: Int]) {
        ranges = StatisticsEngine.clipped(buckets, to: clip)
        self.style = style
        acc = [StatisticsEngine.Accumulator](repeating: StatisticsEngine.Accumulator(), count: buckets.count)
        let ids = Array(ranks.keys)
        let order = ids.sorted { (ranks[$0] ?? .max, $0) < (ranks[$1] ?? .max, $1) }
        position = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
        cover = Array(repeating: [], count: order.count)
        coverHead = Array(repeating: 0, count: order.count)
        top = 0
        self.ranks = ranks
    }

    private let ranks: [Int64: Int]
    /// The last two sources looked up and their positions (rows of one or two overlapping
    /// sources are the common case; a dictionary lookup per row was a tenth of the work).
    private var cachedSource: Int64?
    private var cachedPosition = 0
    private var otherSource: Int64?
    private var otherPosition = 0

    /// The priority position of `source`, adding an unforeseen source (one saved between the
    /// rank lookup and the read) in its place.
    private mutating func positionOf(_ source: Int64) -> Int {
        if source == cachedSource { return cachedPosition }
        if source == otherSource {
            swap(&cachedSource, &otherSource)
            swap(&cachedPosition, &otherPosition)
            return cachedPosition
        }
        if let p = position[source] {
            otherSource = cachedSource; otherPosition = cachedPosition
            cachedSource = source; cachedPosition = p
            return p
        }
        cachedSource = nil; otherSource = nil
        // Insert keeping (rank, id) order: shift the positions after it.
        let key = (ranks[source] ?? .max, source)
        let newPos = position.filter { (ranks[$0.key] ?? .max, $0.key) < key }.count
        for (id, p) in position where p >= newPos { position[id] = p + 1 }
        position[source] = newPos
        if newPos <= top { top = -1 }
        cover.insert([], at: newPos)
        coverHead.insert(0, at: newPos)
        return newPos
    }

    /// Adds the next sample; samples must come in (start, id) order.
    mutating func add(_ p: StatPoint) {
        finalizeReady(before: p.start)
        let pos = positionOf(p.source)
        recordCoverage(p, pos)
        if pos == top {
            StatisticsEngine.accumulate(p, piece: Bucket(lo: p.start, hi: p.end), ranges: ranges, style: style,
                                        into: &acc, scratch: &scratch)
        } else {
            pending.append(p)
        }
        prune(watermark: pendingHead < pending.count ? pending[pendingHead].start : p.start)
    }

    /// Adds the next sample as coverage only (it is not counted): a higher-priority sample that
    /// a decoded lower-priority one needs, whose own count comes from elsewhere (its rollup) or
    /// is nothing (covered whole). Same order as ``add(_:)``.
    mutating func addCoverage(_ p: StatPoint) {
        finalizeReady(before: p.start)
        recordCoverage(p, positionOf(p.source))
        prune(watermark: pendingHead < pending.count ? pending[pendingHead].start : p.start)
    }

    /// Records `p`'s span as coverage for the sources below position `pos`.
    private mutating func recordCoverage(_ p: StatPoint, _ pos: Int) {
        if let last = cover[pos].last, cover[pos].count > coverHead[pos], p.start <= last.hi {
            cover[pos][cover[pos].count - 1].hi = max(last.hi, p.end)
        } else {
            cover[pos].append(Bucket(lo: p.start, hi: p.end))
        }
    }

    /// Counts every sample still waiting; call once after the last ``add(_:)``.
    mutating func finish() {
        while pendingHead < pending.count {
            finalize(pending[pendingHead])
            pendingHead += 1
        }
        pending.removeAll()
        pendingHead = 0
    }

    /// Counts the pending samples, oldest first, that end before `t` (every sample that can
    /// cover them has been read), stopping at the first that cannot be decided yet.
    private mutating func finalizeReady(before t: Double) {
        while pendingHead < pending.count, pending[pendingHead].end < t {
            finalize(pending[pendingHead])
            pendingHead += 1
        }
        if pendingHead == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingHead = 0
        } else if pendingHead > 4096, pendingHead * 2 > pending.count {
            pending.removeFirst(pendingHead)
            pendingHead = 0
        }
    }

    /// Drops coverage that ends before `watermark`: nothing still to be decided starts earlier.
    private mutating func prune(watermark: Double) {
        for i in cover.indices {
            var h = coverHead[i]
            let list = cover[i]
            while h < list.count, list[h].hi < watermark { h += 1 }
            if h == list.count, h > 0 {
                cover[i].removeAll(keepingCapacity: true)
                h = 0
            } else if h > 4096, h * 2 > list.count {
                cover[i].removeFirst(h)
                h = 0
            }
            coverHead[i] = h
        }
    }

    /// Counts `p` minus the coverage of every higher-priority source.
    private mutating func finalize(_ p: StatPoint) {
        let pos = p.source == cachedSource ? cachedPosition : p.source == otherSource ? otherPosition : position[p.source] ?? 0
        gathered.removeAll(keepingCapacity: true)
        var lists = 0
        for i in 0..<pos {
            let list = cover[i]
            var j = max(coverHead[i], StatisticsEngine.firstEnding(atOrAfter: p.start, list))
            var any = false
            while j < list.count, list[j].lo <= p.end {
                gathered.append(list[j])
                any = true
                j += 1
            }
            if any { lists += 1 }
        }
        if lists > 1 { gathered = StatisticsEngine.union(gathered) }
        if p.isInstant {
            if !StatisticsEngine.isCovered(p.start, gathered) {
                StatisticsEngine.accumulate(p, pieces: [], ranges: ranges, style: style, into: &acc, scratch: &scratch)
            }
        } else {
            if gathered.isEmpty {
                StatisticsEngine.accumulate(p, piece: Bucket(lo: p.start, hi: p.end), ranges: ranges, style: style,
                                            into: &acc, scratch: &scratch)
            } else {
                let pieces = StatisticsEngine.subtract(gathered, from: Bucket(lo: p.start, hi: p.end))
                if !pieces.isEmpty {
                    StatisticsEngine.accumulate(p, pieces: pieces, ranges: ranges, style: style, into: &acc, scratch: &scratch)
                }
            }
        }
    }

    /// Counts `p` whole at once, outside the merge: only when no sample of another source is in
    /// play (then nothing covers it and it covers nothing), so its order does not matter.
    mutating func addUnmerged(_ p: StatPoint) {
        StatisticsEngine.accumulate(p, piece: Bucket(lo: p.start, hi: p.end), ranges: ranges, style: style,
                                    into: &acc, scratch: &scratch)
    }

    /// Adds a rollup slot's aggregate to bucket `i` (the caller has checked that every sample
    /// it sums lies inside that bucket and meets no sample of another source).
    mutating func add(aggregate r: RollupRow, bucket i: Int) {
        acc[i].add(aggregate: r, style: style)
    }
}

extension StatisticsEngine.Accumulator {
    /// Adds a rollup's samples as if each had been added whole: a sum of values, weights of
    /// the span's length (temporally weighted; an instant 1 s) or 1 each.
    mutating func add(aggregate r: RollupRow, style: AggregationStyle) {
        sum += r.sum
        if style == .discreteTemporallyWeighted {
            weighted += r.weightedSum
            weight += r.weightTotal
        } else {
            weighted += r.sum
            weight += Double(r.count)
        }
        minimum = min(minimum, r.minimum)
        maximum = max(maximum, r.maximum)
        if let old = recent {
            if (r.recent.end, r.recent.start, r.recent.id) > (old.end, old.start, old.id) { recent = r.recent }
        } else {
            recent = r.recent
        }
        count += r.count
    }
}
