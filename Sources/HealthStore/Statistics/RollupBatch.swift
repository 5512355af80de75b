/// The bulk writer's share of rollup maintenance (``StoreWriter/insertNew(count:_:)``): instead of
/// the insert trigger's one upsert per row, the rows of a call are summed per slot in memory and
/// written with one upsert per slot at the end of the call — for 1 Hz heart rate, one upsert per
/// 900 rows. While it runs, `rollup_control.deferred` is 1 (inside the caller's write
/// transaction, so no other connection ever sees it set), which the insert trigger's `WHEN` reads.
///
/// The rollup's most recent sample needs row ids. New v7 UUIDs never conflict, so a statement of
/// k rows inserts k consecutive ids ending at `last_insert_rowid`; the batch checks that each
/// statement did and that the ids run on from the previous statement's. If not (a conflict
/// skipped a row), its slots are written marked stale and recomputed from their rows before the
/// transaction commits (``Rollups/refreshStale(_:)``), so the rollups are never wrong.
struct RollupBatch {
    struct Key: Hashable {
        var type: Int64
        var source: Int64
        var slot: Int64
    }

    struct Aggregate {
        var count = 0
        var sum = 0.0
        var weighted = 0.0
        var weight = 0.0
        var minimum = Double.infinity
        var maximum = -Double.infinity
        var minStart = Double.infinity
        var maxEnd = -Double.infinity
        var maxInstant: Double?
        var recentValue = 0.0
        var recentStart = -Double.infinity
        var recentEnd = -Double.infinity
        /// The batch index of the most recent row (its id once the ids are known).
        var recentIndex = -1
        /// Whether the rows' closed spans make one interval, their hull (as the trigger finds
        /// it: each row must meet the hull of the rows before it).
        var contiguous = true

        /// As the trigger adds a row (same expressions, same order).
        mutating func add(_ r: SampleRow, index: Int) {
            if count > 0, !(r.start <= maxEnd && r.end >= minStart) { contiguous = false }
            let w = r.end == r.start ? 1.0 : r.end - r.start
            count += 1
            sum += r.value
            weighted += r.value * w
            weight += w
            minimum = min(minimum, r.value)
            maximum = max(maximum, r.value)
            minStart = min(minStart, r.start)
            maxEnd = max(maxEnd, r.end)
            if r.start == r.end { maxInstant = max(maxInstant ?? r.start, r.start) }
            // Later rows have larger ids, so an equal (end, start) goes to the later row.
            if (r.end, r.start) >= (recentEnd, recentStart) {
                recentValue = r.value; recentStart = r.start; recentEnd = r.end; recentIndex = index
            }
        }
    }

    private var slots: [Key: Aggregate] = [:]
    private var lastKey: Key?
    private var last = Aggregate()
    private var rows = 0
    /// The id of batch row 0, once the first statement ran; nil until then.
    private var firstID: Int64?
    private var idsKnown = true

    /// Starts a batch: defers the insert trigger for this transaction.
    static func begin(_ db: Connection) throws -> RollupBatch {
        try db.prepare("UPDATE rollup_control SET deferred = 1 WHERE id = 1").run()
        return RollupBatch()
    }

    /// Adds the next row bound (rows in bind order).
    mutating func add(_ r: SampleRow) {
        let key = Key(type: r.typeID, source: r.sourceID, slot: Rollups.slot(r.start))
        if key != lastKey {
            if let k = lastKey { slots[k] = last }
            last = slots[key] ?? Aggregate()
            lastKey = key
        }
        last.add(r, index: rows)
        rows += 1
    }

    /// Records what one statement of `k` rows (the last `k` added) did.
    mutating func statementRan(rows k: Int, db: Connection) {
        let lastID = db.lastInsertRowID
        guard idsKnown, db.changes == k else { idsKnown = false; return }
        let first = lastID - Int64(k) + 1
        if let f = firstID {
            if first != f + Int64(rows - k) { idsKnown = false }
        } else {
            firstID = first - Int64(rows - k)
        }
    }

    /// After a failure half way: rows were added that were never inserted, so every slot is
    /// written stale and recomputed from the rows that are there (or dropped with the rollback).
    mutating func markStale() { idsKnown = false }

    /// Writes the batch's slots and re-enables the insert trigger. Call once, also when the
    /// batch failed half way (the rows inserted so far stay in the caller's transaction).
    mutating func end(_ db: Connection) throws {
        if let k = lastKey { slots[k] = last }
        if !slots.isEmpty {
            let st = try db.prepare("""
                INSERT INTO sample_rollups(\(Rollups.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                \(Rollups.upsertV3(count: "count + excluded.count")),
                    stale = max(stale, excluded.stale),
                    contiguous = contiguous AND excluded.contiguous AND excluded.min_start <= max_end AND excluded.max_end >= min_start
                """)
            let known = idsKnown && firstID != nil
            for (key, a) in slots where a.count > 0 {
                st.bind(1, key.type); st.bind(2, key.slot); st.bind(3, key.source)
                st.bind(4, a.count); st.bind(5, a.sum); st.bind(6, a.weighted); st.bind(7, a.weight)
                st.bind(8, a.minimum); st.bind(9, a.maximum); st.bind(10, a.minStart); st.bind(11, a.maxEnd)
                st.bind(12, a.maxInstant)
                st.bind(13, a.recentValue); st.bind(14, a.recentStart); st.bind(15, a.recentEnd)
                st.bind(16, known ? firstID! + Int64(a.recentIndex) : 0)
                st.bind(17, known ? 0 : 1)
                st.bind(18, a.contiguous ? 1 : 0)
                try st.run()
            }
        }
        slots.removeAll()
        lastKey = nil
        try db.prepare("UPDATE rollup_control SET deferred = 0 WHERE id = 1").run()
    }

    /// Migration 4: the control row and the insert trigger that honours it (the trigger of
    /// migration 3 with a `WHEN`; a missing control row counts as "not deferred", so no write
    /// path can lose its rollups by it).
    static let migration = """
        CREATE TABLE rollup_control(id INTEGER PRIMARY KEY CHECK (id = 1), deferred INTEGER NOT NULL);
        INSERT INTO rollup_control(id, deferred) VALUES (1, 0);
        DROP TRIGGER samples_rollup_insert;
        CREATE TRIGGER samples_rollup_insert AFTER INSERT ON samples
        WHEN NOT coalesce((SELECT deferred FROM rollup_control WHERE id = 1), 0) BEGIN
            INSERT INTO sample_rollups(\(Rollups.columnsV3)) VALUES (\(Rollups.valuesV3("new.")))
            \(Rollups.upsertV3);
        END;
        """
}
