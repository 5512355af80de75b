import Foundation
import HealthModel

// The change feed (issue 7, docs/change-feed.md): HealthKit's anchored object query over the
// store's two monotonic sequences — `samples.id` (AUTOINCREMENT, never reused) for additions
// and `deleted_samples.seq` (AUTOINCREMENT, written by a trigger on every delete) for
// deletions. SQLite commits one writer at a time and both sequences are assigned inside the
// writing transaction, so their order is commit order, whichever process writes.

/// A position in the store's change history: everything up to it has been delivered.
///
/// Anchors are opaque strings to callers (``description`` / ``init(string:)``): keep the one a
/// ``ChangeSet`` returns and pass it back next time. They are monotonic (a later change set's
/// anchor covers everything an earlier one covered), survive restarts of both sides, and carry
/// the store's random id so an anchor from another store file is refused rather than
/// misapplied. Format (version 1): `v1:<store id>:<last sample id>:<last tombstone seq>`, and
/// when a page ended inside a quantity series a fifth part,
/// `<series id>.<chunk change seq>.<chunk seq>.<quantities of that chunk sent>`.
public struct ChangeAnchor: Sendable, Hashable, CustomStringConvertible {
    /// The store the anchor belongs to (16 hex digits, random per store file).
    package let storeID: String
    /// The largest position delivered: every sample row id and series position up to it.
    package let sampleID: Int64
    /// The largest tombstone sequence number delivered.
    package let tombstone: Int64
    /// Set when a limit cut a series short: how far into it the pages went. That series sits
    /// past ``sampleID`` and the next page continues it first.
    package let cursor: SeriesCursor?

    /// How far into one series' changed chunks the pages went. Chunks go in
    /// (`change_seq`, `seq`) order; all before (`changeSeq`, `chunkSeq`) were sent, and of that
    /// chunk its first `sent` quantities (if it was rewritten since, it is sent again whole).
    package struct SeriesCursor: Sendable, Hashable {
        package var seriesID: Int64
        package var changeSeq: Int64
        package var chunkSeq: Int64
        package var sent: Int
    }

    package init(storeID: String, sampleID: Int64, tombstone: Int64, cursor: SeriesCursor? = nil) {
        self.storeID = storeID
        self.sampleID = sampleID
        self.tombstone = tombstone
        self.cursor = cursor
    }

    /// Parses an anchor a previous ``ChangeSet`` returned.
    /// - Throws: ``ChangeFeedError/invalidAnchor(_:)`` when `string` is not an anchor.
    public init(string: String) throws {
        let parts = string.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4 || parts.count == 5, parts[0] == "v1", !parts[1].isEmpty,
              parts[1].allSatisfy({ $0.isASCII && $0.isHexDigit }),
              let a = Int64(parts[2]), let t = Int64(parts[3]), a >= 0, t >= 0 else {
            throw ChangeFeedError.invalidAnchor(string)
        }
        var cursor: SeriesCursor?
        if parts.count == 5 {
            let n = parts[4].split(separator: ".", omittingEmptySubsequences: false).map { Int64($0) }
            guard n.count == 4, let s = n[0], let c = n[1], let k = n[2], let q = n[3],
                  s > 0, c >= 0, k >= 0, q >= 0, q <= Int64(Int32.max) else {
                throw ChangeFeedError.invalidAnchor(string)
            }
            cursor = SeriesCursor(seriesID: s, changeSeq: c, chunkSeq: k, sent: Int(q))
        }
        self.init(storeID: String(parts[1]), sampleID: a, tombstone: t, cursor: cursor)
    }

    /// The anchor as an opaque string, to store and pass back.
    public var description: String {
        let base = "v1:\(storeID):\(sampleID):\(tombstone)"
        guard let c = cursor else { return base }
        return base + ":\(c.seriesID).\(c.changeSeq).\(c.chunkSeq).\(c.sent)"
    }

    /// True when this anchor covers at least everything `other` covers (same store). An
    /// anchor inside a series covers only itself and anchors not inside one at or before it
    /// (how far a series was sent says nothing about the positions past it).
    public func covers(_ other: ChangeAnchor) -> Bool {
        guard storeID == other.storeID, tombstone >= other.tombstone else { return false }
        guard let theirs = other.cursor else { return sampleID >= other.sampleID }
        return sampleID == other.sampleID && cursor == theirs
    }
}

/// A sample that was deleted (HKDeletedObject): what is left of it is its UUID and its type.
public struct DeletedSample: Sendable, Hashable {
    /// The deleted sample's UUID.
    public var uuid: UUID
    /// The deleted sample's type identifier (`heartRate`).
    public var typeIdentifier: String
    /// When it was deleted (the deleting process's clock).
    public var deletedAt: Date
}

/// What changed since an anchor: the samples added and the samples deleted, plus the anchor
/// that covers exactly these.
///
/// **Order.** Apply ``deleted`` first, then ``samples``. A page never returns an addition
/// before every deletion up to the anchor's snapshot has been returned, so applying pages in
/// order reproduces the store (see docs/change-feed.md, "Pagination").
public struct ChangeSet: Sendable {
    /// Samples added since the anchor that still exist and match the query, in save order.
    /// A sync-identifier replacement appears here as the new sample (and the old one in
    /// ``deleted``).
    public var samples: [QuantitySample]
    /// Samples deleted since the anchor (of the queried types), in deletion order. May name
    /// samples the caller never received (added and deleted between two calls, or outside
    /// the predicate): ignore unknown UUIDs.
    public var deleted: [DeletedSample]
    /// Pass this back to continue after exactly what this change set holds.
    public var anchor: ChangeAnchor
    /// True when a limit cut the answer short: call again with ``anchor`` for the rest.
    public var hasMore: Bool

    /// True when nothing was added or deleted.
    public var isEmpty: Bool { samples.isEmpty && deleted.isEmpty }
}

/// Tombstone bookkeeping: how many are kept, since when, and how far they have been pruned.
public struct ChangeFeedStatus: Sendable, Hashable {
    /// The anchor that covers everything committed now.
    public var currentAnchor: ChangeAnchor
    /// Tombstones currently retained.
    public var tombstoneCount: Int
    /// When the oldest retained tombstone was written, if any.
    public var oldestTombstone: Date?
    /// How long tombstones are kept before ``HealthStore/pruneExpiredTombstones(now:)`` removes them.
    public var retention: TimeInterval
    /// Tombstones with a sequence number up to this were pruned; anchors before it are expired.
    public var prunedThrough: Int64
}

/// Why an anchored query failed.
public enum ChangeFeedError: Error, Sendable, CustomStringConvertible {
    /// The text is not an anchor HealthGate wrote.
    case invalidAnchor(String)
    /// Tombstones newer than the anchor have been pruned: deletions since it are unknown.
    case anchorExpired(anchor: String, prunedThrough: Int64)
    /// The anchor belongs to another store file, or is ahead of this one (a store restored
    /// from an older copy).
    case anchorNotFromThisStore(anchor: String, reason: String)
    /// A limit below 1.
    case invalidLimit(Int)

    /// True when the caller must drop its copy and start again without an anchor.
    public var requiresResync: Bool {
        switch self {
        case .anchorExpired, .anchorNotFromThisStore: return true
        case .invalidAnchor, .invalidLimit: return false
        }
    }

    /// The sentence that tells a caller how to recover from an unusable anchor.
    public static let resyncAdvice = "resynchronise from scratch: ask again without an anchor, replace your copy with what it returns, and keep the new anchor"

    public var description: String {
        switch self {
        case .invalidAnchor(let s):
            return "'\(s.prefix(80))' is not a change-feed anchor (anchors look like v1:<store>:<n>:<n> and come from a previous 'healthgate changes' answer); pass one unchanged or leave it out to start from the beginning."
        case .anchorExpired(let a, let p):
            return "the anchor \(a) is older than the oldest retained deletion record (tombstones up to #\(p) were pruned), so changes since it can no longer be listed without a gap; \(Self.resyncAdvice)."
        case .anchorNotFromThisStore(let a, let reason):
            return "the anchor \(a) does not belong to this store (\(reason)); \(Self.resyncAdvice)."
        case .invalidLimit(let n):
            return "a change-feed limit must be at least 1 (got \(n)); leave it out for no limit."
        }
    }
}

extension HealthStore {
    /// Default tombstone retention: 30 days.
    public static let defaultTombstoneRetention: TimeInterval = 30 * 86_400

    /// HealthKit's anchored object query: the samples added and deleted since `anchor`, and
    /// the anchor that covers exactly what is returned.
    ///
    /// - Parameters:
    ///   - types: only these types (empty: every type). `predicate.type`, if set, is added.
    ///   - predicate: filters **additions** (time range, device, source, sensor location,
    ///     UUIDs); its sort and limit are ignored. Deletions are filtered by type only — a
    ///     tombstone keeps nothing else.
    ///   - anchor: where the caller left off; nil means "from the beginning": every matching
    ///     sample plus every retained tombstone.
    ///   - limit: at most this many items (deletions + additions) in this answer; when it cuts
    ///     the answer short, ``ChangeSet/hasMore`` is true and the anchor points just after the
    ///     last item returned.
    /// - Throws: ``ChangeFeedError`` for an unusable anchor (``ChangeFeedError/requiresResync``
    ///   tells whether the caller must start over), ``StoreError`` for SQLite failures.
    public func changes(types: [QuantityType] = [], matching predicate: SampleQuery? = nil,
                        since anchor: ChangeAnchor?, limit: Int? = nil) throws -> ChangeSet {
        if let limit, limit < 1 { throw ChangeFeedError.invalidLimit(limit) }
        // One more row than the limit is read to tell whether more follow: keep room for it.
        let limit = limit.map { min($0, Int.max - 1) }
        // One read transaction, so both sequences and both result sets come from one snapshot.
        return try inSnapshot { db, meta, head in
            let from = anchor ?? ChangeAnchor(storeID: meta.storeID, sampleID: 0, tombstone: 0)
            if let anchor { try validate(anchor, meta: meta, head: head) }

            var allTypes = types
            if let t = predicate?.type, !allTypes.contains(t) { allTypes.append(t) }
            let typeIDs = try allTypes.map { try typeID($0) }
            let typeList = Array(repeating: "?", count: typeIDs.count).joined(separator: ",")

            // Deletions first (see ChangeSet's "Order").
            var delSQL = """
                SELECT d.seq, d.uuid, t.identifier, d.deleted_at FROM deleted_samples d
                JOIN types t ON t.id = d.type_id WHERE d.seq > ?
                """
            if !typeIDs.isEmpty { delSQL += " AND d.type_id IN (\(typeList))" }
            delSQL += " ORDER BY d.seq"
            if let limit { delSQL += " LIMIT \(limit + 1)" }
            let del = try db.prepare(delSQL)
            del.bind(all: [.int(from.tombstone)] + typeIDs.map { .int($0) })
            var deleted: [DeletedSample] = []
            var lastSeq = from.tombstone
            while try del.step() {
                if let limit, deleted.count == limit {
                    // One more than fits: stop here, before any addition.
                    del.reset()
                    return ChangeSet(samples: [], deleted: deleted,
                                     anchor: ChangeAnchor(storeID: meta.storeID, sampleID: from.sampleID, tombstone: lastSeq),
                                     hasMore: true)
                }
                lastSeq = del.int64(0)
                guard let uuid = del.uuid(1) else { throw StoreError.corruptRow("a tombstone's uuid is not 16 bytes") }
                deleted.append(DeletedSample(uuid: uuid, typeIdentifier: del.string(2) ?? "?",
                                             deletedAt: Date(timeIntervalSince1970: del.double(3))))
            }

            // Then additions, in position (= commit) order: sample rows by id, series by the
            // position of their last growth (drawn from the same sequence), each with the
            // quantities of its chunks written since the anchor. Every sample and every series
            // quantity counts toward the limit, so a page's memory is bounded by it.
            var filter = predicate ?? SampleQuery()
            filter.type = nil
            var page = AdditionsPage(room: limit.map { $0 - deleted.count }, from: from)
            // A series a previous page cut short is continued first. Until the pages pass its
            // position, the anchor keeps saying how far it went (else it would be sent again).
            var held: ChangeAnchor.SeriesCursor?
            if let c = from.cursor, let row = try seriesRows(db, filter, typeIDs: typeIDs, seriesID: c.seriesID).first {
                let reached = try page.add(row, chunksFrom: c, range: QuantityRange(filter), self, db)
                if reached.cut {
                    return ChangeSet(samples: page.samples, deleted: deleted,
                                     anchor: ChangeAnchor(storeID: meta.storeID, sampleID: from.sampleID, tombstone: head.tombstone,
                                                          cursor: reached.cursor),
                                     hasMore: true)
                }
                held = reached.cursor
            }
            let (whereSQL, whereArgs) = try whereClause(filter)
            var addSQL = "\(Self.sampleSelectSQL) WHERE s.id > ? AND \(whereSQL)"
            if !typeIDs.isEmpty { addSQL += " AND s.type_id IN (\(typeList))" }
            addSQL += " ORDER BY s.id"
            // One more row than fits tells whether the list goes on past what was read.
            let window = page.room.map { $0 + 1 }
            if let window { addSQL += " LIMIT \(window)" }
            let add = try db.prepare(addSQL, cached: predicate == nil)
            add.bind(all: [.int(from.sampleID)] + whereArgs + typeIDs.map { .int($0) })
            var rows: [(position: Int64, sample: QuantitySample)] = []
            while try add.step() { rows.append((add.int64(25), try decodeSample(add))) }
            let series = try seriesRows(db, filter, typeIDs: typeIDs, after: from.sampleID, limit: window)
            // Positions up to the horizon are known from both lists; a cut list stops there.
            var horizon = Int64.max
            if let window, rows.count == window { horizon = rows[rows.count - 1].position }
            if let window, series.count == window { horizon = min(horizon, series[series.count - 1].info.changeSeq) }
            var (i, j) = (0, 0)
            var last = from.sampleID
            func cutBefore() -> ChangeSet {
                ChangeSet(samples: page.samples, deleted: deleted,
                          anchor: ChangeAnchor(storeID: meta.storeID, sampleID: last, tombstone: head.tombstone, cursor: held),
                          hasMore: true)
            }
            while i < rows.count || j < series.count {
                let rowNext = j == series.count || (i < rows.count && rows[i].position < series[j].info.changeSeq)
                let position = rowNext ? rows[i].position : series[j].info.changeSeq
                if position > horizon { break }
                if !rowNext, series[j].id == held?.seriesID {
                    // The series continued above, at its position now: passed.
                    held = nil
                } else if page.isFull {
                    return cutBefore()
                } else if rowNext {
                    page.samples.append(rows[i].sample)
                } else {
                    let reached = try page.add(series[j], chunksFrom: nil, range: QuantityRange(filter), self, db)
                    if reached.cut {
                        return ChangeSet(samples: page.samples, deleted: deleted,
                                         anchor: ChangeAnchor(storeID: meta.storeID, sampleID: position - 1, tombstone: head.tombstone,
                                                              cursor: reached.cursor),
                                         hasMore: true)
                    }
                }
                if rowNext { i += 1 } else { j += 1 }
                last = position
            }
            if horizon != Int64.max { return cutBefore() }
            return ChangeSet(samples: page.samples, deleted: deleted,
                             anchor: ChangeAnchor(storeID: meta.storeID, sampleID: head.sample, tombstone: head.tombstone),
                             hasMore: false)
        }
    }

    /// The anchor that covers everything committed now: changes from it on are "new".
    public func currentAnchor() throws -> ChangeAnchor {
        try inSnapshot { _, meta, head in
            ChangeAnchor(storeID: meta.storeID, sampleID: head.sample, tombstone: head.tombstone)
        }
    }

    /// Checks that `anchor` can be answered without a gap (does not throw for a usable one).
    /// - Throws: ``ChangeFeedError`` as ``changes(types:matching:since:limit:)`` would.
    public func validate(_ anchor: ChangeAnchor) throws {
        try inSnapshot { _, meta, head in try validate(anchor, meta: meta, head: head) }
    }

    // MARK: Tombstone retention

    /// The tombstone bookkeeping (counts, oldest, retention, how far pruned) and the current anchor.
    public func changeFeedStatus() throws -> ChangeFeedStatus {
        try inSnapshot { db, meta, head in
            let st = try db.prepare("SELECT count(*), min(deleted_at) FROM deleted_samples")
            _ = try st.step()
            let count = st.int(0)
            let oldest = st.optionalDouble(1).map(Date.init(timeIntervalSince1970:))
            st.reset()
            return ChangeFeedStatus(
                currentAnchor: ChangeAnchor(storeID: meta.storeID, sampleID: head.sample, tombstone: head.tombstone),
                tombstoneCount: count, oldestTombstone: oldest, retention: meta.retention,
                prunedThrough: meta.prunedThrough)
        }
    }

    /// Sets how long tombstones are kept (persisted in the store; at least one second).
    public func setTombstoneRetention(_ seconds: TimeInterval) throws {
        guard seconds.isFinite, seconds >= 1 else {
            throw StoreError.invalidQuery("a tombstone retention must be a positive duration (got \(seconds) s)")
        }
        try write { w in
            let st = try w.connection.prepare("UPDATE change_feed SET value = ? WHERE key = 'tombstone_retention'")
            st.bind(1, seconds)
            try st.run()
        }
    }

    /// Removes the tombstones older than the store's retention (default 30 days). The daemon
    /// calls this periodically; `healthgate tombstones --prune` calls it on demand.
    /// Returns how many were removed.
    @discardableResult
    public func pruneExpiredTombstones(now: Date = Date()) throws -> Int {
        let retention = try read { db in try changeFeedMeta(db).retention }
        return try pruneTombstones(olderThan: now.addingTimeInterval(-retention))
    }

    /// Removes every tombstone up to the newest one written before `cutoff` (a prefix of the
    /// sequence, so "pruned through #n" stays exact even if the clock jumped). Anchors from
    /// before the removed tombstones become expired. Returns how many were removed.
    @discardableResult
    public func pruneTombstones(olderThan cutoff: Date) throws -> Int {
        try write { w in
            let db = w.connection
            let find = try db.prepare("SELECT max(seq) FROM deleted_samples WHERE deleted_at < ?")
            find.bind(1, cutoff.timeIntervalSince1970)
            _ = try find.step()
            var through = find.isNull(0) ? nil : find.int64(0)
            find.reset()
            // Consumers that must see every deletion (the uplink) hold tombstones back: nothing
            // past the oldest such anchor is pruned, whatever its age.
            if let t = through, let hold = try Self.oldestTombstoneHold(db, storeID: try changeFeedMeta(db).storeID) {
                through = min(t, hold)
            }
            guard let through, through > 0 else { return 0 }
            let del = try db.prepare("DELETE FROM deleted_samples WHERE seq <= ?")
            del.bind(1, through)
            try del.run()
            let n = db.changes
            let mark = try db.prepare(
                "UPDATE change_feed SET value = max(value, ?) WHERE key = 'pruned_through'")
            mark.bind(1, through)
            try mark.run()
            return n
        }
    }

    /// Keys in `state` that start with this hold tombstones: each value is an anchor, and
    /// ``pruneTombstones(olderThan:)`` keeps every tombstone past the oldest of them (the
    /// uplink keeps the anchor its server committed there; docs/uplink.md). Remove the key to
    /// release the hold.
    public static let tombstoneHoldPrefix = "changefeed.hold."

    /// The smallest tombstone seq the holds in `state` have delivered, nil when none holds.
    /// A hold that is not an anchor of this store holds everything (0): a hold is never
    /// dropped silently.
    private static func oldestTombstoneHold(_ db: Connection, storeID: String) throws -> Int64? {
        let st = try db.prepare("SELECT value FROM state WHERE substr(key, 1, length(?1)) = ?1")
        st.bind(1, tombstoneHoldPrefix)
        var oldest: Int64?
        while try st.step() {
            let text = st.data(0).map { String(decoding: $0, as: UTF8.self) } ?? ""
            let seq: Int64
            if let a = try? ChangeAnchor(string: text), a.storeID == storeID { seq = a.tombstone } else { seq = 0 }
            oldest = min(oldest ?? seq, seq)
        }
        return oldest
    }

    // MARK: Internals (lock held)

    /// Runs `body` in one read transaction, so the feed's bookkeeping, both sequence heads and
    /// whatever `body` reads come from one snapshot. A COMMIT refused at the end (a statement
    /// left mid-step by an error) falls back to ROLLBACK.
    private func inSnapshot<T>(
        _ body: (Connection, ChangeFeedMeta, _ head: (sample: Int64, tombstone: Int64)) throws -> T
    ) throws -> T {
        try readSnapshot { db in try body(db, try changeFeedMeta(db), try sequenceHeads(db)) }
    }

    private struct ChangeFeedMeta {
        var storeID: String
        var prunedThrough: Int64
        var retention: TimeInterval
    }

    private func changeFeedMeta(_ db: Connection) throws -> ChangeFeedMeta {
        let st = try db.prepare("SELECT key, value FROM change_feed")
        var m = ChangeFeedMeta(storeID: "", prunedThrough: 0, retention: Self.defaultTombstoneRetention)
        while try st.step() {
            switch st.string(0) {
            case "store_id": m.storeID = st.string(1) ?? ""
            case "pruned_through": m.prunedThrough = st.int64(1)
            case "tombstone_retention": m.retention = st.double(1)
            default: break
            }
        }
        if m.storeID.isEmpty { throw StoreError.corruptRow("the change_feed table has no store_id") }
        return m
    }

    /// The largest position (``ChangePositions``) and tombstone seq ever assigned.
    private func sequenceHeads(_ db: Connection) throws -> (sample: Int64, tombstone: Int64) {
        let st = try db.prepare("""
            SELECT \(ChangePositions.headSQL),
                   coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'deleted_samples'), 0)
            """)
        _ = try st.step()
        let heads = (st.int64(0), st.int64(1))
        st.reset()
        return heads
    }

    private func validate(_ anchor: ChangeAnchor, meta: ChangeFeedMeta,
                          head: (sample: Int64, tombstone: Int64)) throws {
        guard anchor.storeID == meta.storeID else {
            throw ChangeFeedError.anchorNotFromThisStore(
                anchor: anchor.description, reason: "it was issued by store \(anchor.storeID), this is store \(meta.storeID)")
        }
        guard anchor.sampleID <= head.sample, anchor.tombstone <= head.tombstone else {
            throw ChangeFeedError.anchorNotFromThisStore(
                anchor: anchor.description,
                reason: "it is ahead of this store's history — was the file restored from an older copy?")
        }
        guard anchor.tombstone >= meta.prunedThrough else {
            throw ChangeFeedError.anchorExpired(anchor: anchor.description, prunedThrough: meta.prunedThrough)
        }
    }
}
