import HealthModel

/// Per-source rollups of individually stored samples (docs/queries.md, "How statistics are
/// computed"): one row per type, source and 15-minute UTC slot of the samples' start, holding
/// what statistics need of the slot's samples taken whole — count, sum of values, the
/// time-weighted sum and its weight, minimum, maximum, the hull of their spans
/// (`min_start`…`max_end`), the latest instant, and the most recent sample.
///
/// Kept by triggers, so every writer keeps them right whatever path it takes (``HealthStore``'s
/// `save`, the bulk writer, imports, a sync-identifier replacement): an insert adds the row's
/// sample to its slot; an update (never done by HealthGate itself) moves it; a delete decrements the slot's count and marks it `stale` (a minimum
/// or a most recent sample cannot be subtracted), and ``Rollups/refreshStale(_:)`` recomputes
/// stale slots from their rows before the deleting transaction commits. A stale slot that is
/// somehow read (a writer outside `HealthStore.write`) is decoded from its rows, never trusted.
///
/// Why 15 minutes: every time zone offset in use today is a multiple of 15 minutes (the
/// extremes are +05:45, +08:45, +12:45 and -09:30), so a local day, hour or DST change always
/// starts on a slot edge and a daily or hourly bucket is made of whole slots. Correctness does
/// not depend on it: a slot is only answered from its rollup when its samples' hull lies inside
/// one bucket, so a bucket edge elsewhere (an old local mean time offset, a `--anchor` at 10:07)
/// only means that slot is decoded from its rows.
enum Rollups {
    /// The slot length in seconds.
    static let slotSeconds = 900.0

    /// The slot of a start time as SQL: `floor(x / 900)` with SQLite's integer cast (which
    /// truncates toward zero), written so it needs no math functions. ``slot(_:)`` is the same
    /// arithmetic in Swift.
    static func slotSQL(_ x: String) -> String {
        "(CAST(\(x) / 900.0 AS INTEGER) - (\(x) < 0 AND \(x) / 900.0 <> CAST(\(x) / 900.0 AS INTEGER)))"
    }

    /// The slot of `t`, exactly as ``slotSQL(_:)`` computes it (same IEEE division; SQLite
    /// saturates an out-of-range cast, as this does).
    static func slot(_ t: Double) -> Int64 {
        let q = t / slotSeconds
        let truncated: Int64
        if q >= 9.2e18 { truncated = .max } else if q <= -9.2e18 { truncated = .min } else if q.isNaN { truncated = 0 } else { truncated = Int64(q) }
        return truncated - (t < 0 && q != Double(truncated) ? 1 : 0)
    }

    /// The columns as migrations 3 and 4 wrote them (history: their text must not change).
    static let columnsV3 = """
        type_id, slot, source_id, count, sum, tw_sum, tw_weight, vmin, vmax, min_start, max_end, max_instant,
        recent_value, recent_start, recent_end, recent_id, stale
        """

    /// The columns since migration 9: ``columnsV3`` and `contiguous`.
    static let columns = columnsV3 + ", contiguous"

    /// One sample's contribution, its columns prefixed by `p` (`new.` in a trigger): the
    /// ``columns`` (one sample is contiguous).
    static func values(_ p: String) -> String { valuesV3(p) + ", 1" }

    /// One sample's contribution in the ``columnsV3`` (migrations 3 and 4).
    static func valuesV3(_ p: String) -> String {
        let weight = "(CASE WHEN \(p)\"end\" = \(p)start THEN 1.0 ELSE \(p)\"end\" - \(p)start END)"
        return """
            \(p)type_id, \(slotSQL(p + "start")), \(p)source_id, 1, \(p)value, \(p)value * \(weight), \(weight),
            \(p)value, \(p)value, \(p)start, \(p)"end", CASE WHEN \(p)"end" = \(p)start THEN \(p)start END,
            \(p)value, \(p)start, \(p)"end", \(p)id, 0
            """
    }

    /// Folds a sample (or, from the bulk writer, a slot's worth) into an existing slot row,
    /// with `contiguous` (migration 9): still one interval only if both were and their hulls
    /// meet (the right-hand sides read the row as it was before this update).
    static let upsert = upsertV3 + """
        ,
            contiguous = contiguous AND excluded.contiguous AND excluded.min_start <= max_end AND excluded.max_end >= min_start
        """

    /// ``upsert`` as migrations 3 and 4 wrote it (history: its text must not change).
    static let upsertV3 = upsertV3(count: "count + 1")

    /// ``upsertV3``'s text with the slot's new count given as `count` (the bulk writer's
    /// ``RollupBatch`` adds a slot's worth: `count + excluded.count`).
    static func upsertV3(count: String) -> String {
        """
        ON CONFLICT(type_id, slot, source_id) DO UPDATE SET
            count = \(count), sum = sum + excluded.sum, tw_sum = tw_sum + excluded.tw_sum,
            tw_weight = tw_weight + excluded.tw_weight,
            vmin = min(vmin, excluded.vmin), vmax = max(vmax, excluded.vmax),
            min_start = min(min_start, excluded.min_start), max_end = max(max_end, excluded.max_end),
            max_instant = coalesce(max(max_instant, excluded.max_instant), max_instant, excluded.max_instant),
            recent_value = CASE WHEN (excluded.recent_end, excluded.recent_start, excluded.recent_id) > (recent_end, recent_start, recent_id) THEN excluded.recent_value ELSE recent_value END,
            recent_start = CASE WHEN (excluded.recent_end, excluded.recent_start, excluded.recent_id) > (recent_end, recent_start, recent_id) THEN excluded.recent_start ELSE recent_start END,
            recent_id = CASE WHEN (excluded.recent_end, excluded.recent_start, excluded.recent_id) > (recent_end, recent_start, recent_id) THEN excluded.recent_id ELSE recent_id END,
            recent_end = CASE WHEN (excluded.recent_end, excluded.recent_start, excluded.recent_id) > (recent_end, recent_start, recent_id) THEN excluded.recent_end ELSE recent_end END
        """
    }

    /// Rolls up the rows `filter` selects from `samples` (in id order: the order the trigger
    /// would have seen them).
    static func rebuildSQL(where filter: String) -> String {
        "INSERT INTO sample_rollups(\(columns)) SELECT \(values("")) FROM samples WHERE \(filter) ORDER BY id \(upsert)"
    }

    /// ``rebuildSQL(where:)`` as migration 3 wrote it (history).
    static func rebuildSQLV3(where filter: String) -> String {
        "INSERT INTO sample_rollups(\(columnsV3)) SELECT \(valuesV3("")) FROM samples WHERE \(filter) ORDER BY id \(upsertV3)"
    }

    /// The trigger that keeps rollups right when a sample is updated in place: HealthGate never
    /// does, but a repair by hand (or an old tool) that does moves the sample out of its old slot
    /// and into its new one, both then recomputed. Migrations 3 and 9 create it with their columns.
    static func updateTrigger(columns: String, values: String, upsert: String) -> String {
        """
        CREATE TRIGGER samples_rollup_update AFTER UPDATE OF type_id, source_id, value, start, "end" ON samples BEGIN
            UPDATE sample_rollups SET count = count - 1, stale = 1
            WHERE type_id = old.type_id AND slot = \(slotSQL("old.start")) AND source_id = old.source_id;
            INSERT INTO sample_rollups(\(columns)) VALUES (\(values))
            \(upsert);
            UPDATE sample_rollups SET stale = 1
            WHERE type_id = new.type_id AND slot = \(slotSQL("new.start")) AND source_id = new.source_id;
        END;
        """
    }

    /// Migration 3: the table, its triggers, and a backfill of every stored sample (history:
    /// written with the ``columnsV3``).
    static let migration = """
        CREATE TABLE sample_rollups(
            type_id INTEGER NOT NULL,
            slot INTEGER NOT NULL,              -- floor(start / 900): the sample's 15-minute UTC slot
            source_id INTEGER NOT NULL,
            count INTEGER NOT NULL,
            sum REAL NOT NULL,                  -- of values
            tw_sum REAL NOT NULL,               -- of value × (span length, an instant 1 s)
            tw_weight REAL NOT NULL,            -- of span lengths (an instant 1 s)
            vmin REAL NOT NULL,
            vmax REAL NOT NULL,
            min_start REAL NOT NULL,
            max_end REAL NOT NULL,
            max_instant REAL,                   -- the latest instantaneous sample, NULL if none
            recent_value REAL NOT NULL,         -- the sample with the latest (end, start, id)
            recent_start REAL NOT NULL,
            recent_end REAL NOT NULL,
            recent_id INTEGER NOT NULL,
            stale INTEGER NOT NULL DEFAULT 0,   -- 1 after a delete, until recomputed
            PRIMARY KEY(type_id, slot, source_id)
        ) WITHOUT ROWID;
        CREATE INDEX sample_rollups_stale ON sample_rollups(type_id) WHERE stale <> 0;
        CREATE TRIGGER samples_rollup_insert AFTER INSERT ON samples BEGIN
            INSERT INTO sample_rollups(\(columnsV3)) VALUES (\(valuesV3("new.")))
            \(upsertV3);
        END;
        CREATE TRIGGER samples_rollup_delete AFTER DELETE ON samples BEGIN
            UPDATE sample_rollups SET count = count - 1, stale = 1
            WHERE type_id = old.type_id AND slot = \(slotSQL("old.start")) AND source_id = old.source_id;
        END;
        \(updateTrigger(columns: columnsV3, values: valuesV3("new."), upsert: upsertV3))
        \(rebuildSQLV3(where: "1"));
        """

    /// Migration 9: `contiguous`, 1 when the union of a slot row's closed sample spans is exactly
    /// its hull `[min_start, max_end]`, found in insert order (a sample that meets the hull of
    /// those before it keeps it one interval; one that does not clears it until the slot is
    /// recomputed; 0 is always safe: it only means "not known to be one interval"). With it,
    /// statistics know without reading rows that a higher-priority source's slots cover an
    /// interval whole (docs/queries.md, "How statistics are computed"). The triggers write it;
    /// the rollups are rebuilt from the rows, as migration 3 built them.
    static let contiguityMigration = """
        ALTER TABLE sample_rollups ADD COLUMN contiguous INTEGER NOT NULL DEFAULT 0;
        DROP TRIGGER samples_rollup_insert;
        CREATE TRIGGER samples_rollup_insert AFTER INSERT ON samples
        WHEN NOT coalesce((SELECT deferred FROM rollup_control WHERE id = 1), 0) BEGIN
            INSERT INTO sample_rollups(\(columns)) VALUES (\(values("new.")))
            \(upsert);
        END;
        DROP TRIGGER samples_rollup_update;
        \(updateTrigger(columns: columns, values: values("new."), upsert: upsert))
        DELETE FROM sample_rollups;
        \(rebuildSQL(where: "1"));
        """

    /// Recomputes every stale slot from its rows (and drops slots left empty). Runs at the end
    /// of every ``HealthStore/write(_:)`` transaction; with nothing stale it is one lookup in
    /// a partial index.
    static func refreshStale(_ db: Connection) throws {
        let find = try db.prepare("SELECT type_id, slot, source_id FROM sample_rollups WHERE stale <> 0 LIMIT 512")
        while true {
            var batch: [(Int64, Int64, Int64)] = []
            while try find.step() { batch.append((find.int64(0), find.int64(1), find.int64(2))) }
            if batch.isEmpty { return }
            let drop = try db.prepare("DELETE FROM sample_rollups WHERE type_id = ? AND slot = ? AND source_id = ?")
            let rebuild = try db.prepare(rebuildSQL(where: """
                type_id = ?1 AND source_id = ?3 AND start >= ?4 AND start < ?5 AND \(slotSQL("start")) = ?2
                """))
            for (type, slot, source) in batch {
                drop.bind(1, type); drop.bind(2, slot); drop.bind(3, source)
                try drop.run()
                rebuild.bind(1, type); rebuild.bind(2, slot); rebuild.bind(3, source)
                // A superset of the slot's starts by a second each side (the division rounds);
                // the slot expression decides.
                rebuild.bind(4, Double(slot) * slotSeconds - 1)
                rebuild.bind(5, Double(slot) * slotSeconds + slotSeconds + 1)
                try rebuild.run()
            }
        }
    }
}

/// One rollup row as statistics read it.
struct RollupRow {
    var slot: Int64
    var source: Int64
    var count: Int
    var sum: Double
    var weightedSum: Double
    var weightTotal: Double
    var minimum: Double
    var maximum: Double
    var minStart: Double
    var maxEnd: Double
    var maxInstant: Double?
    var recent: StatPoint
    var stale: Bool
    /// The union of its samples' closed spans is exactly `minStart…maxEnd` (false when not known).
    var contiguous: Bool
}
