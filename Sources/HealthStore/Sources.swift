import Foundation
import HealthModel

/// Source priority: which source wins when several measured the same span of time.
///
/// Sources are ranked 1…n (1 wins). Each source also has a *tier*, fixed by its identifier:
/// 0 for manual entry (`org.healthgate.manual`), 1 for HealthGate's own capture sources
/// (identifiers starting `org.healthgate.`), 2 for everything else. A source seen for the
/// first time is ranked **above every existing source of its own tier or a lower one** — so
/// manual entry goes to the top, HealthGate's sources above third-party ones, and a new
/// third-party source above older third-party sources (the Health app's rule). Ranks can be
/// changed at any time with ``HealthStore/setPriority(source:rank:)``.
public enum SourcePriority {
    /// The tier a source starts in (see the type's discussion).
    public static func tier(of source: Source) -> Int {
        if source.identifier == Source.manual.identifier { return 0 }
        if source.identifier.hasPrefix("org.healthgate.") { return 1 }
        return 2
    }
}

/// A stored source with its priority and how many samples it wrote.
public struct SourceInfo: Sendable, Hashable {
    /// The source as samples carry it.
    public var source: Source
    /// Priority rank: 1 wins over 2, and so on.
    public var rank: Int
    /// 0 manual entry, 1 HealthGate's own, 2 other (see ``SourcePriority``).
    public var tier: Int
    /// Samples from this source (of the requested type, if one was given).
    public var sampleCount: Int
    /// The earliest sample start, if any.
    public var firstSample: Date?
    /// The latest sample end, if any.
    public var lastSample: Date?
}

extension HealthStore {
    /// Whether any individually stored sample comes from a source whose identifier starts with
    /// `prefix` (an index lookup per such source, whatever the store's size).
    public func hasSamples(fromSourcesPrefixed prefix: String) throws -> Bool {
        try read { db in
            let st = try db.prepare("""
                SELECT EXISTS (SELECT 1 FROM sources src JOIN samples s ON s.source_id = src.id
                               WHERE substr(src.identifier, 1, length(?1)) = ?1)
                """, cached: false)
            st.bind(1, prefix)
            return try st.step() && st.int64(0) == 1
        }
    }

    /// Every source, highest priority first, with sample counts. With `type`, only sources
    /// that have samples of that type (HKSourceQuery), counting only those samples.
    public func sources(type: QuantityType? = nil) throws -> [SourceInfo] {
        try read { db in
            // Individually stored samples and series (a series counts its quantities; its start
            // and end are its quantities' earliest start and latest end).
            let (typeFilter, args) = try samplesAndSeriesTypeFilter(type)
            var sql = """
                SELECT src.name, src.identifier, src.version, src.rank, src.tier,
                       coalesce(sum(s.n), 0), min(s.first), max(s.last)
                FROM sources src LEFT JOIN (
                    SELECT source_id, count(*) AS n, min(start) AS first, max("end") AS last FROM samples\(typeFilter) GROUP BY source_id
                    UNION ALL
                    SELECT source_id, sum(\(SeriesTotalsSQL.count("sr"))) AS n, min(start) AS first, max(\(SeriesTotalsSQL.end("sr"))) AS last
                    FROM series sr\(typeFilter) GROUP BY source_id
                ) s ON s.source_id = src.id
                GROUP BY src.id
                """
            if type != nil { sql += " HAVING coalesce(sum(s.n), 0) > 0" }
            sql += " ORDER BY src.rank"
            let st = try db.prepare(sql, cached: false)
            st.bind(all: args)
            var out: [SourceInfo] = []
            while try st.step() {
                out.append(SourceInfo(
                    source: Source(name: st.string(0) ?? "?", identifier: st.string(1), version: st.string(2)),
                    rank: st.int(3), tier: st.int(4), sampleCount: st.int(5),
                    firstSample: st.optionalDouble(6).map(Date.init(timeIntervalSince1970:)),
                    lastSample: st.optionalDouble(7).map(Date.init(timeIntervalSince1970:))))
            }
            return out
        }
    }

    /// The `WHERE` of a count over `samples` and one over `series` for `type` (empty for
    /// every type), with its arguments for both.
    func samplesAndSeriesTypeFilter(_ type: QuantityType?) throws -> (String, [SQLValue]) {
        guard let type else { return ("", []) }
        let id = SQLValue.int(try typeID(type))
        return (" WHERE type_id = ?", [id, id])
    }

    /// Moves a source (by name or identifier) to `rank` (1 = highest priority), shifting the
    /// others; a rank beyond the end moves it to the bottom.
    /// - Throws: ``StoreError/notFound(_:)`` when no source has that name or identifier;
    ///   ``StoreError/invalidQuery(_:)`` for a rank below 1.
    public func setPriority(source nameOrIdentifier: String, rank: Int) throws {
        guard rank >= 1 else {
            throw StoreError.invalidQuery("rank \(rank) is not a rank: ranks start at 1 (the highest priority)")
        }
        try write { w in
            let db = w.connection
            let find = try db.prepare("SELECT id, rank FROM sources WHERE identifier = ? OR name = ? ORDER BY identifier = ? DESC LIMIT 1")
            find.bind(1, nameOrIdentifier); find.bind(2, nameOrIdentifier); find.bind(3, nameOrIdentifier)
            guard try find.step() else {
                find.reset()
                throw StoreError.notFound("no source is named '\(nameOrIdentifier)' (run 'healthgate sources' for the list)")
            }
            let id = find.int64(0), old = find.int(1)
            find.reset()
            let countSt = try db.prepare("SELECT count(*) FROM sources")
            _ = try countSt.step()
            let n = countSt.int(0)
            countSt.reset()
            let new = min(max(1, rank), n)
            if new == old { return }
            let shift = new < old
                ? try db.prepare("UPDATE sources SET rank = rank + 1 WHERE rank >= ? AND rank < ?")
                : try db.prepare("UPDATE sources SET rank = rank - 1 WHERE rank <= ? AND rank > ?")
            shift.bind(1, new); shift.bind(2, old)
            try shift.run()
            let set = try db.prepare("UPDATE sources SET rank = ? WHERE id = ?")
            set.bind(1, new); set.bind(2, id)
            try set.run()
        }
    }

    /// Source ranks by row id (for statistics).
    func sourceRanks(_ db: Connection) throws -> [Int64: (rank: Int, source: Source)] {
        let st = try db.prepare("SELECT id, rank, name, identifier, version FROM sources")
        var out: [Int64: (rank: Int, source: Source)] = [:]
        while try st.step() {
            out[st.int64(0)] = (st.int(1), Source(name: st.string(2) ?? "?", identifier: st.string(3), version: st.string(4)))
        }
        return out
    }
}
