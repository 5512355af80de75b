import Foundation
import HealthModel

/// What to compute: a type, options, an optional half-open range `[start, end)` and filters.
///
/// Samples are selected by overlap with the range (as in ``SampleQuery``), and every number
/// counts only the part of a sample inside the range — see docs/queries.md for the exact rules.
public struct StatisticsQuery: Sendable, Hashable {
    /// The quantity type.
    public var type: QuantityType
    /// What to compute; checked against the type's aggregation style.
    public var options: StatisticsOptions
    /// Range start (nil: open).
    public var start: Date?
    /// Range end, exclusive (nil: open).
    public var end: Date?
    /// Only samples from this device (name, local identifier or alias).
    public var device: String?
    /// Only samples from this source (name or identifier).
    public var source: String?
    /// Only samples with this sensor location.
    public var sensorLocation: HeartRateSensorLocation?

    /// Creates a query over all time unless `start`/`end` are given.
    public init(type: QuantityType, options: StatisticsOptions, start: Date? = nil, end: Date? = nil,
                device: String? = nil, source: String? = nil, sensorLocation: HeartRateSensorLocation? = nil) {
        self.type = type; self.options = options; self.start = start; self.end = end
        self.device = device; self.source = source; self.sensorLocation = sensorLocation
    }

    var sampleQuery: SampleQuery {
        SampleQuery(type: type, start: start, end: end, device: device, source: source, sensorLocation: sensorLocation)
    }
}

/// The numbers one statistics result holds. Only the fields the options asked for are set;
/// a field is also nil when no sample contributed.
public struct StatisticValues: Sendable, Hashable {
    /// cumulativeSum.
    public var sum: Double?
    /// discreteAverage (time-weighted for temporally weighted types).
    public var average: Double?
    /// discreteMin.
    public var minimum: Double?
    /// discreteMax.
    public var maximum: Double?
    /// mostRecent: the value of the contributing sample with the latest end date.
    public var mostRecent: Double?
    /// The span of the most recent sample.
    public var mostRecentStart: Date?
    /// The span of the most recent sample.
    public var mostRecentEnd: Date?
    /// How many samples contributed (after merging).
    public var sampleCount = 0
    /// The total weight behind ``average`` (seconds for temporally weighted types, samples
    /// for arithmetic ones): what combines the averages of disjoint ranges into one (a
    /// workout's running intervals between pauses). Bookkeeping, not a result: equality and
    /// hashing leave it out, so two paths that sum the same weights in another order agree.
    package var averageWeight = 0.0

    public init() {}

    public static func == (a: StatisticValues, b: StatisticValues) -> Bool {
        (a.sum, a.average, a.minimum, a.maximum, a.mostRecent) == (b.sum, b.average, b.minimum, b.maximum, b.mostRecent)
            && (a.mostRecentStart, a.mostRecentEnd, a.sampleCount) == (b.mostRecentStart, b.mostRecentEnd, b.sampleCount)
    }

    public func hash(into h: inout Hasher) {
        h.combine(sum); h.combine(average); h.combine(minimum); h.combine(maximum); h.combine(mostRecent)
        h.combine(mostRecentStart); h.combine(mostRecentEnd); h.combine(sampleCount)
    }

    func converted(from a: HealthUnit, to b: HealthUnit) throws -> StatisticValues {
        var v = self
        func c(_ x: Double?) throws -> Double? { try x.map { try a.convert($0, to: b) } }
        v.sum = sum.map { $0 * a.factor / b.factor }   // a sum converts without offsets
        v.average = try c(average); v.minimum = try c(minimum); v.maximum = try c(maximum)
        v.mostRecent = try c(mostRecent)
        return v
    }

    /// Throws when a number is not finite: a sum or weighted average that overflowed `Double`
    /// (only possible with implausible stored values) is refused, never printed as inf or null.
    func checkFinite(type: QuantityType, start: Date?, end: Date?, unit: HealthUnit) throws {
        let fields: [(String, Double?)] = [("sum", sum), ("average", average), ("minimum", minimum),
                                           ("maximum", maximum), ("most recent value", mostRecent)]
        for case let (name, x?) in fields where !x.isFinite {
            let span = start.map { " over \(ISO8601.string($0))…\(end.map(ISO8601.string) ?? "")" } ?? ""
            throw StoreError.notFinite(
                "the \(name) of \(type.identifier)\(span) in \(unit) overflows a 64-bit number: stored values are implausibly large; find them with 'healthgate samples --type \(type.identifier) --sort end --desc' and delete them")
        }
    }
}

/// One source's share of a statistics result (with `separateBySource`).
public struct SourceStatistics: Sendable, Hashable {
    /// The source.
    public var source: Source
    /// Its priority rank (1 wins).
    public var rank: Int
    /// Its numbers, computed from its samples alone.
    public var values: StatisticValues
}

/// One statistics result (HKStatistics): over a query range or over one collection bucket.
public struct Statistics: Sendable, Hashable {
    /// The type.
    public var type: QuantityType
    /// Bucket (or range) start; nil for an open range.
    public var start: Date?
    /// Bucket (or range) end, exclusive; nil for an open range.
    public var end: Date?
    /// The unit every value is in.
    public var unit: HealthUnit
    /// Merged across sources (the default HealthKit result).
    public var values: StatisticValues
    /// Per source, highest priority first; nil unless `separateBySource` was asked for.
    public var sources: [SourceStatistics]?

    /// The same result with every value in `unit`.
    /// - Throws: ``HealthModelError/incompatibleUnits(_:_:)`` naming both units.
    public func converted(to unit: HealthUnit) throws -> Statistics {
        guard unit.isCompatible(with: self.unit) else { throw HealthModelError.incompatibleUnits(self.unit, unit) }
        var s = self
        s.values = try values.converted(from: self.unit, to: unit)
        s.sources = try sources?.map { var x = $0; x.values = try $0.values.converted(from: self.unit, to: unit); return x }
        s.unit = unit
        try s.checkFinite()
        return s
    }

    /// Throws ``StoreError/notFinite(_:)`` when any number (merged or per source) overflowed.
    func checkFinite() throws {
        try values.checkFinite(type: type, start: start, end: end, unit: unit)
        for x in sources ?? [] { try x.values.checkFinite(type: type, start: start, end: end, unit: unit) }
    }
}

/// A statistics-collection interval: fixed minutes or hours, or calendar days, weeks or months.
public enum StatisticsInterval: Sendable, Hashable, CustomStringConvertible {
    case minutes(Int), hours(Int), days(Int), weeks(Int), months(Int)

    /// The longest interval accepted: 100 years' worth of any unit (a longer bucket is never
    /// what was meant, and bounding it keeps calendar arithmetic far from overflow).
    public static let maximumCounts: [(unit: String, max: Int)] = [
        ("min", 100 * 366 * 1440), ("h", 100 * 366 * 24), ("d", 100 * 366), ("w", 100 * 53), ("mo", 100 * 12),
    ]

    static let usage = "use a positive count and min, h, d, w or mo (30min, 1h, 1d, 1w, 1mo)"

    /// Parses `30min`, `1h`, `1d`, `2w`, `1mo` (also `m` for minutes, and `hour(s)`,
    /// `day(s)`, `week(s)`, `month(s)`; case does not matter except in `M`, which is refused
    /// as ambiguous between minutes and months). The count is at most 100 years' worth; left out
    /// (`d`, `hour`), it is 1.
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { ("0"..."9").contains($0) }
        let rawUnit = String(trimmed.dropFirst(digits.count))
        if rawUnit == "M" {
            throw StoreError.invalidQuery(
                "'\(text)' is ambiguous (minutes or months?): write \(digits.isEmpty ? "1" : String(digits))min for minutes or \(digits.isEmpty ? "1" : String(digits))mo for months")
        }
        guard let n = Int(digits.isEmpty ? "1" : digits), n > 0 else {
            throw StoreError.invalidQuery("'\(text)' is not an interval: \(Self.usage)")
        }
        let parsed: StatisticsInterval
        switch rawUnit.lowercased() {
        case "m", "min", "mins", "minute", "minutes": parsed = .minutes(n)
        case "h", "hour", "hours": parsed = .hours(n)
        case "d", "day", "days": parsed = .days(n)
        case "w", "week", "weeks": parsed = .weeks(n)
        case "mo", "month", "months": parsed = .months(n)
        default: throw StoreError.invalidQuery("'\(text)' is not an interval: \(Self.usage)")
        }
        let (unit, limit) = Self.maximumCounts[parsed.unitIndex]
        guard n <= limit else {
            throw StoreError.invalidQuery("'\(text)' is longer than 100 years: use at most \(limit)\(unit)")
        }
        self = parsed
    }

    private var unitIndex: Int {
        switch self {
        case .minutes: 0
        case .hours: 1
        case .days: 2
        case .weeks: 3
        case .months: 4
        }
    }

    public var description: String {
        switch self {
        case .minutes(let n): "\(n)min"
        case .hours(let n): "\(n)h"
        case .days(let n): "\(n)d"
        case .weeks(let n): "\(n)w"
        case .months(let n): "\(n)mo"
        }
    }

    /// The nominal length, for estimating bucket indexes.
    var nominalSeconds: Double {
        switch self {
        case .minutes(let n): Double(n) * 60
        case .hours(let n): Double(n) * 3600
        case .days(let n): Double(n) * 86400
        case .weeks(let n): Double(n) * 604_800
        case .months(let n): Double(n) * 2_629_746   // a Gregorian month on average
        }
    }

    /// The start of bucket `k` counted from `anchor`: fixed seconds for minutes and hours,
    /// calendar days or months in `calendar`'s time zone for days, weeks and months (so a DST
    /// day is 23 or 25 h, and a month 28 to 31 days). `shift` calendar days (months for a month
    /// interval) are added first: a default anchor on a day whose midnight the clocks skip is
    /// the midnight before it, shifted (``HealthStore`` `defaultAnchor`).
    func bucketStart(_ k: Int, anchor: Date, shift: Int = 0, calendar: Calendar) -> Date {
        let fallback = anchor.addingTimeInterval(Double(k) * nominalSeconds)
        switch self {
        case .minutes, .hours:
            return fallback
        case .days(let n):
            return calendarStep(.day, k, n, shift, anchor: anchor, calendar: calendar) ?? fallback
        case .weeks(let n):
            let (days, overflow) = n.multipliedReportingOverflow(by: 7)
            return overflow ? fallback : calendarStep(.day, k, days, shift, anchor: anchor, calendar: calendar) ?? fallback
        case .months(let n):
            return calendarStep(.month, k, n, shift, anchor: anchor, calendar: calendar) ?? fallback
        }
    }

    /// `k` × `n` + `shift` calendar days or months from `anchor`; nil when the count is too large
    /// for `Int` (a huge `--interval`), so the caller falls back to nominal seconds instead of trapping.
    private func calendarStep(_ unit: Calendar.Component, _ k: Int, _ n: Int, _ shift: Int, anchor: Date, calendar: Calendar) -> Date? {
        let (product, overflow) = k.multipliedReportingOverflow(by: n)
        let (count, overflow2) = product.addingReportingOverflow(shift)
        return overflow || overflow2 ? nil : calendar.date(byAdding: unit, value: count, to: anchor)
    }
}

/// Which implementation computes statistics. Package-visible for the benchmark and the tests,
/// which compare the streaming engine against the engine it replaced (docs/queries.md,
/// "How statistics are computed").
package enum StatisticsPath: Sendable, Hashable {
    /// The default: one pass over the rows and series chunks in start order with a sweep over
    /// higher-priority coverage (memory bounded by the buckets), answering isolated 15-minute
    /// slots and isolated series chunks that lie inside one bucket from the per-source rollups
    /// and the chunks' aggregates.
    case streaming
    /// The same sweep, decoding every row and every chunk (no rollups, no chunk aggregates).
    case streamingRowsOnly
    /// The engine before issue 12: every matching sample loaded into memory, then merged by
    /// source priority and bucketed. Kept as the oracle for tests and the benchmark baseline.
    case loadAll
}

extension HealthStore {
    /// The most buckets one collection may have.
    public static let maximumBuckets = 200_000

    /// Statistics over the query's range (all time when it has none), merged across sources,
    /// plus per-source results with `separateBySource`.
    /// - Throws: ``HealthModelError/optionNotAllowed(option:type:style:)`` for options that do
    ///   not fit the type; ``StoreError`` on database errors.
    public func statistics(_ query: StatisticsQuery) throws -> Statistics {
        try statistics(query, path: .streaming)
    }

    /// ``statistics(_:)`` computed by the chosen implementation (tests and benchmark).
    package func statistics(_ query: StatisticsQuery, path: StatisticsPath, work: StatisticsWork? = nil) throws -> Statistics {
        try validate(query.options, query.type)
        try checkRange(query)
        let range = Bucket(lo: query.start?.timeIntervalSince1970 ?? -.infinity,
                           hi: query.end?.timeIntervalSince1970 ?? .infinity)
        switch path {
        case .loadAll:
            let (points, ranks) = try loadPoints(query)
            return try results(points: points, ranks: ranks, buckets: [range], clip: range, query: query)[0]
        case .streaming, .streamingRowsOnly:
            return try streamingResults(query, buckets: [range], clip: range, rollups: path == .streaming, work: work)[0]
        }
    }

    /// Statistics per bucket (HKStatisticsCollectionQuery). Buckets start at `anchor` (default:
    /// midnight in `timeZone` of the range start; for month intervals the first of its month) and repeat every `interval` in both
    /// directions without gaps; every bucket that overlaps the range is returned, in order,
    /// empty ones included. Without a range, the range is the span of the matching samples.
    public func statisticsCollection(_ query: StatisticsQuery, interval: StatisticsInterval,
                                     anchor: Date? = nil, timeZone: TimeZone = .current) throws -> [Statistics] {
        try statisticsCollection(query, interval: interval, anchor: anchor, timeZone: timeZone, path: .streaming)
    }

    /// ``statisticsCollection(_:interval:anchor:timeZone:)`` computed by the chosen
    /// implementation (tests and benchmark).
    package func statisticsCollection(_ query: StatisticsQuery, interval: StatisticsInterval, anchor: Date? = nil,
                                      timeZone: TimeZone = .current, path: StatisticsPath,
                                      work: StatisticsWork? = nil) throws -> [Statistics] {
        try validate(query.options, query.type)
        try checkRange(query)
        if let s = query.start, let e = query.end, s == e { return [] }   // an empty range overlaps no bucket
        let clip = Bucket(lo: query.start?.timeIntervalSince1970 ?? -.infinity,
                          hi: query.end?.timeIntervalSince1970 ?? .infinity)
        switch path {
        case .loadAll:
            let (points, ranks) = try loadPoints(query)
            // The range to cover: the query's bounds, else the span of the matching samples. With
            // an open end, an instantaneous sample at the latest time needs the bucket that holds
            // it (`lo ≤ t`), not only buckets starting before it.
            guard let from = query.start?.timeIntervalSince1970 ?? points.map(\.start).min(),
                  let to = query.end?.timeIntervalSince1970 ?? points.map(\.end).max() else { return [] }
            let lastInstant = query.end == nil ? points.lazy.filter(\.isInstant).map(\.start).max() : nil
            let buckets = try makeBuckets(from: from, to: to, lastInstant: lastInstant,
                                          interval: interval, anchor: anchor, timeZone: timeZone)
            return try results(points: points, ranks: ranks, buckets: buckets, clip: clip, query: query)
        case .streaming, .streamingRowsOnly:
            guard let span = try sampleSpan(query) else { return [] }
            let buckets = try makeBuckets(from: span.from, to: span.to, lastInstant: span.instantAtEnd ? span.to : nil,
                                          interval: interval, anchor: anchor, timeZone: timeZone)
            return try streamingResults(query, buckets: buckets, clip: clip, rollups: path == .streaming, work: work)
        }
    }

    /// The buckets from the one holding `from` to the one holding `to` (and, when
    /// `lastInstant` is given, the one holding that instant).
    private func makeBuckets(from: Double, to: Double, lastInstant: Double?, interval: StatisticsInterval,
                             anchor: Date?, timeZone: TimeZone) throws -> [Bucket] {
        guard from.isFinite, to.isFinite else {
            throw StoreError.invalidQuery("the samples' times are not finite numbers; check the stored data")
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let fromDate = Date(timeIntervalSince1970: from)
        // Default anchor: local midnight of the range start; for months, the first of its month.
        let (anchorDate, shift) = anchor.map { ($0, 0) } ?? Self.defaultAnchor(for: fromDate, interval: interval, calendar: calendar)
        // Find the bucket holding `from`, then walk forward until `to`.
        let estimate = ((from - anchorDate.timeIntervalSince1970) / interval.nominalSeconds).rounded(.down)
        guard abs(estimate) < Double(Self.maximumBucketIndex) else {
            throw StoreError.invalidQuery(
                "the anchor \(ISO8601.string(anchorDate)) is too far from the range start \(ISO8601.string(fromDate)) for an interval of \(interval); choose an anchor nearer the range")
        }
        var k = Int(estimate)
        func start(_ k: Int) -> Double { interval.bucketStart(k, anchor: anchorDate, shift: shift, calendar: calendar).timeIntervalSince1970 }
        while start(k) > from { k -= 1 }
        while start(k + 1) <= from { k += 1 }
        var buckets: [Bucket] = []
        var lo = start(k)
        repeat {
            let hi = start(k + 1)
            buckets.append(Bucket(lo: lo, hi: hi))
            lo = hi
            k += 1
            if buckets.count > Self.maximumBuckets {
                throw StoreError.invalidQuery(
                    "an interval of \(interval) over this range makes more than \(Self.maximumBuckets) buckets; use a longer interval or a shorter range")
            }
        } while lo < to || lastInstant.map { lo <= $0 } == true
        return buckets
    }

    /// The default anchor of a collection starting at `from`: local midnight of its day (for
    /// months, the first of its month), as a midnight that exists and a shift in days (months)
    /// from it. On a day whose midnight the clocks skip (Santiago, Cairo, Havana, Beirut, the
    /// Azores: 00:00 becomes 01:00) the day starts at 01:00, and stepping calendar days from
    /// 01:00 kept 01:00 for every later bucket, counting each day's first hour on the day
    /// before. Anchored at the midnight before and shifted, that day's bucket starts at its
    /// first instant and every other day's at 00:00.
    static func defaultAnchor(for from: Date, interval: StatisticsInterval, calendar: Calendar) -> (Date, Int) {
        let months: Bool
        if case .months = interval { months = true } else { months = false }
        let unit: Calendar.Component = months ? .month : .day
        var start = months ? calendar.dateInterval(of: .month, for: from)?.start ?? calendar.startOfDay(for: from) : calendar.startOfDay(for: from)
        func isMidnight(_ d: Date) -> Bool {
            let c = calendar.dateComponents([.hour, .minute, .second], from: d)
            return c.hour == 0 && c.minute == 0 && c.second == 0
        }
        guard !isMidnight(start) else { return (start, 0) }
        for shift in 1...3 {
            guard let earlier = calendar.date(byAdding: unit, value: -shift, to: start) else { break }
            let candidate = months ? calendar.dateInterval(of: .month, for: earlier)?.start : calendar.startOfDay(for: earlier)
            if let candidate, isMidnight(candidate) {
                start = candidate
                return (start, shift)
            }
        }
        return (start, 0)
    }

    /// The largest bucket index from the anchor a collection may start at (far beyond any
    /// real range; keeps the index arithmetic in `Int`).
    static let maximumBucketIndex = 1 << 40

    /// A range that ends before it starts is a mistake, not an empty answer.
    private func checkRange(_ query: StatisticsQuery) throws {
        if let s = query.start, let e = query.end, e < s {
            throw StoreError.invalidQuery("the range ends (\(ISO8601.string(e))) before it starts (\(ISO8601.string(s)))")
        }
    }

    private func validate(_ options: StatisticsOptions, _ type: QuantityType) throws {
        try options.validate(for: type)
        let values: StatisticsOptions = [.discreteAverage, .discreteMin, .discreteMax, .cumulativeSum, .mostRecent]
        if options.intersection(values).isEmpty {
            throw StoreError.invalidQuery(type.aggregationStyle == .cumulative
                ? "choose what to compute: cumulativeSum and/or mostRecent"
                : "choose what to compute: discreteAverage, discreteMin, discreteMax and/or mostRecent")
        }
    }

    /// The old engine's input: every matching sample in memory (``StatisticsPath/loadAll``).
    private func loadPoints(_ query: StatisticsQuery) throws -> ([StatPoint], [Int64: (rank: Int, source: Source)]) {
        try read { db in
            let (whereSQL, args) = try whereClause(query.sampleQuery)
            let st = try db.prepare(
                "SELECT s.value, s.start, s.\"end\", s.source_id, s.id FROM samples s WHERE \(whereSQL) ORDER BY s.start, s.id",
                cached: false)
            st.bind(all: args)
            var points: [StatPoint] = []
            while try st.step() {
                points.append(StatPoint(value: st.double(0), start: st.double(1), end: st.double(2),
                                        source: st.int64(3), id: st.int64(4)))
            }
            // Quantity series (docs/store.md): every quantity as a point, decoded (the bridge
            // until statistics read the chunk aggregates).
            let series = try seriesStatPoints(db, query.sampleQuery)
            if !series.isEmpty {
                points += series
                points.sort { ($0.start, $0.id) < ($1.start, $1.id) }
            }
            return (points, try sourceRanks(db))
        }
    }

    private func results(points: [StatPoint], ranks: [Int64: (rank: Int, source: Source)], buckets: [Bucket],
                         clip: Bucket, query: StatisticsQuery) throws -> [Statistics] {
        let style = query.type.aggregationStyle
        let merged = StatisticsEngine.compute(
            StatisticsEngine.merge(points, rank: { ranks[$0]?.rank ?? Int.max }),
            buckets: buckets, clip: clip, style: style, options: query.options)
        var perSource: [(Int64, [StatisticValues])] = []
        if query.options.contains(.separateBySource) {
            let bySource = Dictionary(grouping: points, by: \.source)
            for id in bySource.keys.sorted(by: { (ranks[$0]?.rank ?? .max, $0) < (ranks[$1]?.rank ?? .max, $1) }) {
                let survivors = bySource[id]!.map { StatSurvivor(point: $0, pieces: [Bucket(lo: $0.start, hi: $0.end)]) }
                perSource.append((id, StatisticsEngine.compute(survivors, buckets: buckets, clip: clip,
                                                               style: style, options: query.options)))
            }
        }
        return try assemble(query: query, buckets: buckets, merged: merged, perSource: perSource, ranks: ranks)
    }

    /// The results in bucket order, per-source numbers attached, every number checked finite.
    func assemble(query: StatisticsQuery, buckets: [Bucket], merged: [StatisticValues],
                  perSource: [(Int64, [StatisticValues])], ranks: [Int64: (rank: Int, source: Source)]) throws -> [Statistics] {
        try buckets.indices.map { i in
            let b = buckets[i]
            var sources: [SourceStatistics]?
            if query.options.contains(.separateBySource) {
                sources = perSource.map { id, values in
                    SourceStatistics(source: ranks[id]?.source ?? Source(name: "?"), rank: ranks[id]?.rank ?? 0,
                                     values: values[i])
                }
            }
            let st = Statistics(type: query.type,
                                start: b.lo.isFinite ? Date(timeIntervalSince1970: b.lo) : nil,
                                end: b.hi.isFinite ? Date(timeIntervalSince1970: b.hi) : nil,
                                unit: query.type.canonicalUnit, values: merged[i], sources: sources)
            try st.checkFinite()
            return st
        }
    }
}

/// A half-open interval `[lo, hi)` in Unix seconds.
struct Bucket: Sendable, Hashable {
    var lo: Double
    var hi: Double
}

/// One sample as statistics see it.
struct StatPoint: Sendable, Hashable {
    var value: Double
    var start: Double
    var end: Double
    var source: Int64
    var id: Int64
    var isInstant: Bool { start == end }
}

/// A sample after merging: the parts of its span no higher-priority source covers. An
/// instantaneous survivor has no pieces (it either survives whole or not at all).
struct StatSurvivor: Sendable {
    var point: StatPoint
    var pieces: [Bucket]
}

/// The statistics arithmetic, kept free of SQL so the rules read in one place
/// (docs/queries.md states them in prose).
enum StatisticsEngine {
    /// Merges sources by priority: sources are visited highest priority first; a sample keeps
    /// only the parts of its span not covered by any sample of a higher-priority source (as
    /// closed intervals), and an instantaneous sample survives only if no higher-priority
    /// sample's span contains its instant. Samples of one source never cover each other.
    static func merge(_ points: [StatPoint], rank: (Int64) -> Int) -> [StatSurvivor] {
        let bySource = Dictionary(grouping: points, by: \.source)
        if bySource.count <= 1 {
            return points.map { StatSurvivor(point: $0, pieces: $0.isInstant ? [] : [Bucket(lo: $0.start, hi: $0.end)]) }
        }
        let order = bySource.keys.sorted { (rank($0), $0) < (rank($1), $1) }
        var covered: [Bucket] = []   // sorted, disjoint, closed
        var out: [StatSurvivor] = []
        for src in order {
            let group = bySource[src]!
            for p in group {
                if p.isInstant {
                    if !isCovered(p.start, covered) { out.append(StatSurvivor(point: p, pieces: [])) }
                } else {
                    let pieces = subtract(covered, from: Bucket(lo: p.start, hi: p.end))
                    if !pieces.isEmpty { out.append(StatSurvivor(point: p, pieces: pieces)) }
                }
            }
            covered = union(covered + group.map { Bucket(lo: $0.start, hi: $0.end) })
        }
        return out
    }

    /// Index of the first interval whose end is ≥ x.
    static func firstEnding(atOrAfter x: Double, _ list: [Bucket]) -> Int {
        var lo = 0, hi = list.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if list[mid].hi < x { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    static func isCovered(_ x: Double, _ covered: [Bucket]) -> Bool {
        let i = firstEnding(atOrAfter: x, covered)
        return i < covered.count && covered[i].lo <= x
    }

    /// The positive-length parts of `span` outside every interval of `covered`.
    static func subtract(_ covered: [Bucket], from span: Bucket) -> [Bucket] {
        var out: [Bucket] = []
        var cur = span.lo
        var i = firstEnding(atOrAfter: span.lo, covered)
        while i < covered.count, covered[i].lo < span.hi {
            if covered[i].lo > cur { out.append(Bucket(lo: cur, hi: covered[i].lo)) }
            cur = max(cur, covered[i].hi)
            i += 1
        }
        if cur < span.hi { out.append(Bucket(lo: cur, hi: span.hi)) }
        return out
    }

    /// Sorted, disjoint union of closed intervals (touching intervals join).
    static func union(_ list: [Bucket]) -> [Bucket] {
        let sorted = list.sorted { ($0.lo, $0.hi) < ($1.lo, $1.hi) }
        var out: [Bucket] = []
        for b in sorted {
            if let last = out.last, b.lo <= last.hi {
                out[out.count - 1].hi = max(last.hi, b.hi)
            } else {
                out.append(b)
            }
        }
        return out
    }

    struct Accumulator {
        var sum = 0.0
        var weighted = 0.0
        var weight = 0.0
        var minimum = Double.infinity
        var maximum = -Double.infinity
        var recent: StatPoint?
        var count = 0

        mutating func add(_ p: StatPoint, amount: Double, weight w: Double) {
            sum += amount
            weighted += p.value * w
            weight += w
            minimum = min(minimum, p.value)
            maximum = max(maximum, p.value)
            if let r = recent {
                if (p.end, p.start, p.id) > (r.end, r.start, r.id) { recent = p }
            } else {
                recent = p
            }
            count += 1
        }

        func values(_ options: StatisticsOptions) -> StatisticValues {
            var v = StatisticValues()
            v.sampleCount = count
            guard count > 0 else { return v }
            if options.contains(.cumulativeSum) { v.sum = sum }
            if options.contains(.discreteAverage) { v.average = weight > 0 ? weighted / weight : nil; v.averageWeight = weight }
            if options.contains(.discreteMin) { v.minimum = minimum }
            if options.contains(.discreteMax) { v.maximum = maximum }
            if options.contains(.mostRecent), let r = recent {
                v.mostRecent = r.value
                v.mostRecentStart = Date(timeIntervalSince1970: r.start)
                v.mostRecentEnd = Date(timeIntervalSince1970: r.end)
            }
            return v
        }
    }

    /// Computes each bucket's values. Each bucket is first clipped to `clip` (the query range).
    ///
    /// - A sample with a span contributes to every bucket its surviving pieces overlap by a
    ///   positive length `o`: a cumulative sample adds `value × o / duration` (apportioned by
    ///   time); a discrete sample is counted with weight `o` seconds (temporally weighted
    ///   types) or 1 (arithmetic types).
    /// - An instantaneous sample belongs to the one bucket with `lo ≤ t < hi`; it adds its
    ///   whole value, and weighs 1 second (temporally weighted) or 1 (arithmetic).
    static func compute(_ survivors: [StatSurvivor], buckets: [Bucket], clip: Bucket,
                        style: AggregationStyle, options: StatisticsOptions) -> [StatisticValues] {
        let ranges = clipped(buckets, to: clip)
        var acc = [Accumulator](repeating: Accumulator(), count: buckets.count)
        var overlap: [Int: Double] = [:]
        for s in survivors {
            accumulate(s.point, pieces: s.pieces, ranges: ranges, style: style, into: &acc, scratch: &overlap)
        }
        return acc.map { $0.values(options) }
    }

    /// Each bucket intersected with the query range.
    static func clipped(_ buckets: [Bucket], to clip: Bucket) -> [Bucket] {
        buckets.map { Bucket(lo: max($0.lo, clip.lo), hi: min($0.hi, clip.hi)) }
    }

    /// The first of `ranges` (sorted, contiguous) with `hi > x`, by bisection.
    static func firstBucket(endingAfter x: Double, _ ranges: [Bucket]) -> Int {
        var lo = 0, hi = ranges.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ranges[mid].hi <= x { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Adds one sample's surviving `pieces` (ignored for an instant) to the buckets they
    /// overlap, by the rules of ``compute(_:buckets:clip:style:options:)``. `scratch` is reused
    /// between calls to avoid an allocation per sample.
    static func accumulate(_ p: StatPoint, pieces: [Bucket], ranges: [Bucket], style: AggregationStyle,
                           into acc: inout [Accumulator], scratch overlap: inout [Int: Double]) {
        if p.isInstant {
            let i = firstBucket(endingAfter: p.start, ranges)
            if i < ranges.count, ranges[i].lo <= p.start, p.start < ranges[i].hi {
                acc[i].add(p, amount: p.value, weight: 1)
            }
            return
        }
        if pieces.count == 1 {
            accumulate(p, piece: pieces[0], ranges: ranges, style: style, into: &acc, scratch: &overlap)
            return
        }
        spread(p, pieces: pieces, ranges: ranges, style: style, into: &acc, scratch: &overlap)
    }

    /// ``accumulate(_:pieces:ranges:style:into:scratch:)`` for one piece (most samples), without
    /// building an array. A piece inside one bucket, the common case, is added directly: the same
    /// arithmetic as through `scratch` (there `0 + o` is `o`).
    static func accumulate(_ p: StatPoint, piece: Bucket, ranges: [Bucket], style: AggregationStyle,
                           into acc: inout [Accumulator], scratch overlap: inout [Int: Double]) {
        if p.isInstant {
            accumulate(p, pieces: [], ranges: ranges, style: style, into: &acc, scratch: &overlap)
            return
        }
        let i = firstBucket(endingAfter: piece.lo, ranges)
        guard i < ranges.count, ranges[i].lo < piece.hi else { return }
        guard i + 1 == ranges.count || ranges[i + 1].lo >= piece.hi else {
            spread(p, pieces: [piece], ranges: ranges, style: style, into: &acc, scratch: &overlap)
            return
        }
        let o = min(piece.hi, ranges[i].hi) - max(piece.lo, ranges[i].lo)
        if o > 0 {
            acc[i].add(p, amount: p.value * o / (p.end - p.start), weight: style == .discreteTemporallyWeighted ? o : 1)
        }
    }

    /// Adds a span's pieces to every bucket they overlap, one addition per bucket.
    private static func spread(_ p: StatPoint, pieces: [Bucket], ranges: [Bucket], style: AggregationStyle,
                               into acc: inout [Accumulator], scratch overlap: inout [Int: Double]) {
        overlap.removeAll(keepingCapacity: true)
        for piece in pieces {
            var i = firstBucket(endingAfter: piece.lo, ranges)
            while i < ranges.count, ranges[i].lo < piece.hi {
                let o = min(piece.hi, ranges[i].hi) - max(piece.lo, ranges[i].lo)
                if o > 0 { overlap[i, default: 0] += o }
                i += 1
            }
        }
        let duration = p.end - p.start
        for (i, o) in overlap {
            let amount = p.value * o / duration
            let w = style == .discreteTemporallyWeighted ? o : 1
            acc[i].add(p, amount: amount, weight: w)
        }
    }
}
