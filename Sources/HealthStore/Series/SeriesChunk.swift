import HealthModel

/// What a quantity's ``SeriesQuantity/attributes`` bits mean in the store (docs/store.md,
/// "Quantity series"): the per-quantity metadata a strap reading carries.
///
/// ```
/// bits 0–1  sensor contact: 0 none, 1 notSupported, 2 notDetected, 3 detected
/// bit  2    RR preceded by a gap (meaningful with RR intervals)
/// bit  3    HGPayloadTruncated = 1
/// bit  4    HGEnergySaturated = 1
/// ```
enum SeriesAttributes {
    static let gap: UInt64 = 1 << 2
    static let truncated: UInt64 = 1 << 3
    static let saturated: UInt64 = 1 << 4
    /// The quantity carries HRV window counts: RR intervals in bits 8..<32, beats corrected in
    /// bits 32..<56 (``HRVCounts``).
    static let hrv: UInt64 = 1 << 5

    /// The bits of a row's per-quantity metadata, and an HRV value's window counts.
    static func encode(contact: SensorContact?, flags: SampleRow.Flags, hrv counts: HRVCounts? = nil) -> UInt64 {
        var a: UInt64
        switch contact {
        case nil: a = 0
        case .notSupported?: a = 1
        case .notDetected?: a = 2
        case .detected?: a = 3
        }
        if flags.contains(.rrPrecededByGap) { a |= gap }
        if flags.contains(.payloadTruncated) { a |= truncated }
        if flags.contains(.energySaturated) { a |= saturated }
        if let counts { a |= hrv | UInt64(counts.intervals) << 8 | UInt64(counts.corrected) << 32 }
        return a
    }

    /// The HRV window counts `a` carries, if any.
    static func hrvCounts(_ a: UInt64) -> HRVCounts? {
        guard a & hrv != 0 else { return nil }
        return HRVCounts(intervals: Int(a >> 8 & 0xFF_FFFF), corrected: Int(a >> 32 & 0xFF_FFFF))
    }

    /// The user metadata a series quantity holds: the flags' keys (``Metadata/payloadTruncatedKey``,
    /// ``Metadata/energySaturatedKey``) and an HRV value's counts.
    static func userMetadata(_ a: UInt64) -> [String: MetadataValue] {
        var user: [String: MetadataValue] = [:]
        if a & truncated != 0 { user[Metadata.payloadTruncatedKey] = .number(1) }
        if a & saturated != 0 { user[Metadata.energySaturatedKey] = .number(1) }
        if let c = hrvCounts(a) {
            user[Metadata.hrvIntervalsKey] = .number(Double(c.intervals))
            user[Metadata.hrvCorrectedKey] = .number(Double(c.corrected))
        }
        return user
    }

    static func contact(_ a: UInt64) -> SensorContact? {
        switch a & 3 {
        case 1: return .notSupported
        case 2: return .notDetected
        case 3: return .detected
        default: return nil
        }
    }
}

/// A chunk's aggregates (the `series_chunks` columns beside its data), computed as statistics
/// weigh a quantity that lies wholly inside one bucket (docs/queries.md): the sum adds each
/// value whole; `weighted`/`weight` are Σ value × w and Σ w with w = the span in seconds for a
/// temporally weighted type (an instant weighs 1 s) and w = 1 for every other type; `recent`
/// is the quantity with the latest end (ties: the latest start, then the later one appended).
struct SeriesAggregates: Equatable {
    var count = 0
    var sum = 0.0
    var minimum = Double.infinity
    var maximum = -Double.infinity
    var weighted = 0.0
    var weight = 0.0
    var first = 0.0
    var last = 0.0
    var recent = 0.0
    var recentStart = -Double.infinity
    var recentEnd = -Double.infinity
    /// Earliest start and latest end.
    var start = Double.infinity
    var end = -Double.infinity

    init() {}

    init(_ q: some Collection<SeriesQuantity>, style: AggregationStyle) {
        for x in q { add(x, style: style) }
    }

    mutating func add(_ q: SeriesQuantity, style: AggregationStyle) {
        if count == 0 { first = q.value }
        last = q.value
        count += 1
        sum += q.value
        minimum = Swift.min(minimum, q.value)
        maximum = Swift.max(maximum, q.value)
        let w = style == .discreteTemporallyWeighted && q.end > q.start ? q.end - q.start : 1
        weighted += q.value * w
        weight += w
        if (q.end, q.start) >= (recentEnd, recentStart) { recent = q.value; recentStart = q.start; recentEnd = q.end }
        start = Swift.min(start, q.start)
        end = Swift.max(end, q.end)
    }
}

/// The `series_chunks` upsert: a chunk row written whole, or rewritten while it is open.
enum SeriesChunkSQL {
    static let upsert = """
        INSERT INTO series_chunks(series_id, seq, start, "end", count, sum, min, max, weighted, weight,
                                  first, last, recent, recent_start, recent_end, data, first_index, change_seq)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(series_id, seq) DO UPDATE SET
            start = excluded.start, "end" = excluded."end", count = excluded.count, sum = excluded.sum,
            min = excluded.min, max = excluded.max, weighted = excluded.weighted, weight = excluded.weight,
            first = excluded.first, last = excluded.last, recent = excluded.recent,
            recent_start = excluded.recent_start, recent_end = excluded.recent_end, data = excluded.data,
            first_index = excluded.first_index, change_seq = excluded.change_seq
        """

    /// Writes chunk `seq` of series row `seriesID` with `quantities` (not empty), the first of
    /// which is quantity `firstIndex` of the series.
    static func write(_ db: Connection, seriesID: Int64, seq: Int, firstIndex: Int, quantities: [SeriesQuantity],
                      style: AggregationStyle, changeSeq: Int64) throws {
        let a = SeriesAggregates(quantities, style: style)
        let st = try db.prepare(upsert)
        st.bind(1, seriesID); st.bind(2, seq); st.bind(3, a.start); st.bind(4, a.end); st.bind(5, a.count)
        st.bind(6, a.sum); st.bind(7, a.minimum); st.bind(8, a.maximum); st.bind(9, a.weighted); st.bind(10, a.weight)
        st.bind(11, a.first); st.bind(12, a.last); st.bind(13, a.recent); st.bind(14, a.recentStart); st.bind(15, a.recentEnd)
        let bytes = SeriesCodec.encode(quantities)
        bytes.withUnsafeBytes { st.bind(16, bytes: $0) }
        st.bind(17, firstIndex)
        st.bind(18, changeSeq)
        try st.run()
    }
}

/// The window counts of an HRV value HealthGate computed (user metadata
/// ``HealthModel/Metadata/hrvIntervalsKey`` and ``HealthModel/Metadata/hrvCorrectedKey``), which a
/// series quantity holds in its attributes: so a live HRV window with corrected beats is stored in
/// its series like one without, instead of as a row of its own (docs/store.md, "The writer").
package struct HRVCounts: Sendable, Hashable {
    /// The window's RR intervals before correction.
    package var intervals: Int
    /// The beats corrected in the window.
    package var corrected: Int

    /// One more than the largest count a series quantity holds (24 bits each).
    package static let limit = 1 << 24

    package init(intervals: Int, corrected: Int) {
        precondition((0..<Self.limit).contains(intervals) && (0..<Self.limit).contains(corrected))
        self.intervals = intervals
        self.corrected = corrected
    }

    /// The counts when `user` holds both keys as whole numbers below ``limit`` (other keys are not
    /// looked at); nil when either is missing or is anything else.
    package init?(user: [String: MetadataValue]) {
        guard case .number(let i)? = user[Metadata.hrvIntervalsKey], case .number(let c)? = user[Metadata.hrvCorrectedKey],
              let intervals = Int(exactly: i), let corrected = Int(exactly: c),
              (0..<Self.limit).contains(intervals), (0..<Self.limit).contains(corrected) else { return nil }
        self.init(intervals: intervals, corrected: corrected)
    }

    /// The counts when `metadata` is nothing but them (a live HRV record's attachment): what the
    /// ingest writer may store in a series quantity.
    package init?(onlyIn metadata: Metadata) {
        guard metadata.user.count == 2, let counts = HRVCounts(user: metadata.user) else { return nil }
        var rest = metadata
        rest.user = [:]
        guard rest == Metadata() else { return nil }
        self = counts
    }
}
