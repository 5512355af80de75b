import CSQLite
import Foundation

/// The store's schema as an ordered list of migrations. `PRAGMA user_version` holds how many
/// have run; opening a store runs the rest, each in its own transaction. Append, never edit:
/// a shipped migration is history (docs/store.md).
enum Schema {
    static let migrations: [String] = [
        // 1: the initial schema.
        """
        CREATE TABLE types(
            id INTEGER PRIMARY KEY,
            identifier TEXT NOT NULL UNIQUE,
            unit TEXT NOT NULL,
            aggregation TEXT NOT NULL
        );
        CREATE TABLE sources(
            id INTEGER PRIMARY KEY,
            identifier TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            version TEXT,
            tier INTEGER NOT NULL,          -- 0 manual entry, 1 HealthGate's own, 2 other
            rank INTEGER NOT NULL,          -- 1 = highest priority; ranks are 1…n without gaps
            first_seen REAL NOT NULL
        );
        CREATE TABLE devices(
            id INTEGER PRIMARY KEY,
            name TEXT, manufacturer TEXT, model TEXT,
            hardware_version TEXT, firmware_version TEXT, software_version TEXT,
            local_identifier TEXT UNIQUE,
            udi_device_identifier TEXT,
            kind TEXT NOT NULL DEFAULT 'other' CHECK (kind IN ('ble', 'serial', 'other')),
            address TEXT,
            address_type TEXT,
            alias TEXT,
            last_seen REAL,
            battery INTEGER,
            sensor_location INTEGER,
            extra TEXT
        );
        CREATE INDEX devices_alias ON devices(alias) WHERE alias IS NOT NULL;
        CREATE INDEX devices_address ON devices(address) WHERE address IS NOT NULL;
        CREATE TABLE samples(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            uuid BLOB NOT NULL UNIQUE,
            type_id INTEGER NOT NULL REFERENCES types(id),
            value REAL NOT NULL,
            start REAL NOT NULL,
            "end" REAL NOT NULL,
            source_id INTEGER NOT NULL REFERENCES sources(id),
            device_id INTEGER REFERENCES devices(id),
            sensor_location INTEGER,
            sensor_contact INTEGER,
            motion_context INTEGER,
            sync_identifier TEXT,
            sync_version INTEGER,
            metadata TEXT,
            rr BLOB,
            rr_gap INTEGER
        );
        CREATE INDEX samples_type_start ON samples(type_id, start);
        CREATE INDEX samples_type_end ON samples(type_id, "end");
        CREATE INDEX samples_source ON samples(source_id);
        CREATE UNIQUE INDEX samples_sync ON samples(sync_identifier) WHERE sync_identifier IS NOT NULL;
        CREATE TABLE deleted_samples(
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            uuid BLOB NOT NULL,
            type_id INTEGER NOT NULL,
            deleted_at REAL NOT NULL
        );
        -- Every delete leaves a tombstone, whoever deletes (store API, sync replacement, Ingest).
        CREATE TRIGGER samples_tombstone AFTER DELETE ON samples BEGIN
            INSERT INTO deleted_samples(uuid, type_id, deleted_at)
            VALUES (old.uuid, old.type_id, (julianday('now') - 2440587.5) * 86400.0);
        END;
        CREATE TABLE state(
            key TEXT PRIMARY KEY,
            value BLOB,
            updated_at REAL NOT NULL
        );
        """,
        // 2: the change feed (helper changefeed, docs/change-feed.md): a random store id that
        // anchors carry (an anchor from another store file is refused), how far tombstones have
        // been pruned (an older anchor must resynchronise), and the tombstone retention.
        """
        CREATE TABLE change_feed(
            key TEXT PRIMARY KEY,
            value NOT NULL
        );
        INSERT INTO change_feed(key, value) VALUES
            ('store_id', lower(hex(randomblob(8)))),
            ('pruned_through', 0),
            ('tombstone_retention', 2592000);
        CREATE INDEX deleted_samples_type ON deleted_samples(type_id, seq);
        """,
        // 3: per-source 15-minute rollups of individually stored samples, kept by triggers, for
        // statistics (helper stats, docs/queries.md "How statistics are computed"); backfills
        // every stored sample.
        Rollups.migration,
        // 4: the bulk writer sums a call's rows per slot and upserts each slot once
        // (Statistics/RollupBatch.swift); the insert trigger steps aside while it does.
        RollupBatch.migration,
        // 5: quantity series (issue #12, docs/store.md "Quantity series"): a series sample and
        // its chunks of encoded quantities with per-chunk aggregates. Adds, moves nothing: every
        // existing sample stays in `samples` with its id (the change feed's anchor) and every
        // tombstone stays. A series' `change_seq` is drawn from the samples' AUTOINCREMENT
        // sequence, so one anchor number orders both; deleting a series leaves one tombstone.
        """
        CREATE TABLE series(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            uuid BLOB NOT NULL UNIQUE,
            type_id INTEGER NOT NULL REFERENCES types(id),
            source_id INTEGER NOT NULL REFERENCES sources(id),
            device_id INTEGER REFERENCES devices(id),
            sensor_location INTEGER,
            start REAL NOT NULL,            -- the earliest start of its quantities
            "end" REAL NOT NULL,            -- the latest end
            count INTEGER NOT NULL,         -- quantities stored
            first_index INTEGER NOT NULL DEFAULT 0,   -- index of its first quantity (an imported part)
            open INTEGER NOT NULL,          -- 1 while a writer may still append
            change_seq INTEGER NOT NULL     -- the change feed's position of its last growth
        );
        CREATE INDEX series_type_start ON series(type_id, start);
        CREATE INDEX series_change ON series(change_seq);
        CREATE TABLE series_chunks(
            series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,           -- 0, 1, … in append order
            first_index INTEGER NOT NULL,   -- the series index of its first quantity
            start REAL NOT NULL,            -- the earliest start in the chunk
            "end" REAL NOT NULL,            -- the latest end
            count INTEGER NOT NULL,
            sum REAL, min REAL, max REAL,   -- of the values
            weighted REAL, weight REAL,     -- Σ value × weight and Σ weight (as statistics weigh)
            first REAL, last REAL,          -- the values of the first and last quantity appended
            recent REAL, recent_start REAL, recent_end REAL,   -- the latest-ending quantity
            data BLOB NOT NULL,             -- SeriesCodec
            change_seq INTEGER NOT NULL,    -- the change feed's position of its last write
            PRIMARY KEY(series_id, seq)
        ) WITHOUT ROWID;
        CREATE TRIGGER series_tombstone AFTER DELETE ON series BEGIN
            INSERT INTO deleted_samples(uuid, type_id, deleted_at)
            VALUES (old.uuid, old.type_id, (julianday('now') - 2440587.5) * 86400.0);
        END;
        """,
        // 6: series_chunks becomes a rowid table (docs/store.md "Writes"). Keyed by
        // (series_id, seq), each series' open chunk sat in its own leaf page, so a commit
        // that grew ten series rewrote ten leaves; in append order, the open chunks are the
        // newest rows, together at the table's right edge, and a chunk of several minutes
        // fits in its leaf (a WITHOUT ROWID row over ~1,000 bytes spills to an overflow page).
        // The data blob comes last, so reading the aggregates never reads past them. Same
        // columns, same rows; the (series_id, seq) key becomes a unique index.
        """
        CREATE TABLE series_chunks_v6(
            id INTEGER PRIMARY KEY,         -- append order
            series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            first_index INTEGER NOT NULL,
            start REAL NOT NULL,
            "end" REAL NOT NULL,
            count INTEGER NOT NULL,
            sum REAL, min REAL, max REAL,
            weighted REAL, weight REAL,
            first REAL, last REAL,
            recent REAL, recent_start REAL, recent_end REAL,
            change_seq INTEGER NOT NULL,
            data BLOB NOT NULL
        );
        INSERT INTO series_chunks_v6(series_id, seq, first_index, start, "end", count, sum, min, max, weighted, weight,
                                     first, last, recent, recent_start, recent_end, change_seq, data)
            SELECT series_id, seq, first_index, start, "end", count, sum, min, max, weighted, weight,
                   first, last, recent, recent_start, recent_end, change_seq, data
            FROM series_chunks ORDER BY change_seq, series_id, seq;
        DROP TABLE series_chunks;
        ALTER TABLE series_chunks_v6 RENAME TO series_chunks;
        CREATE UNIQUE INDEX series_chunks_key ON series_chunks(series_id, seq);
        """,
        // 7: the HTTP API's bearer tokens (issue 13, docs/http-api.md): names, scopes and the
        // SHA-256 of each secret, never the secret. Adds a table, moves nothing.
        AccessTokenTable.migration,
        // 8: statistics decode rows from the type's start index alone (helper queries,
        // docs/queries.md "How statistics are computed"): `samples_type_start` becomes covering,
        // with each row's end, value and source, so a decoded row is no longer a seek into the
        // table. Same name, same order: the row id follows the start (named, or SQLite would
        // sort every `ORDER BY start, id`), then the covered columns. Moves no row.
        """
        DROP INDEX samples_type_start;
        CREATE INDEX samples_type_start ON samples(type_id, start, id, "end", value, source_id);
        """,
        // 9: each rollup row says whether its samples' spans make one interval (`contiguous`,
        // helper queries, docs/queries.md "How statistics are computed"), so a slot of a
        // lower-priority source that a higher one covers whole is known to count nothing
        // without reading its rows. Rollups rebuilt from the rows; moves no sample.
        Rollups.contiguityMigration,
        // 10: workouts (issue 15, docs/workouts.md): what the user marked, never totals. Adds a
        // table, moves nothing.
        WorkoutTable.migration,
        // 11: a series quantity's attributes may hold an HRV window's counts (bits above 16:
        // docs/store.md, "The writer"), which builds before it refuse as damaged chunks. Moves
        // nothing: the version alone makes those builds refuse the store as a newer one.
        "-- series quantity attributes wider than 16 bits",
        // 12: an open series' row is rewritten when a chunk fills, not at every commit
        // (docs/store.md, "Writes"): it holds the totals (`end`, `count`, `change_seq`) of its
        // chunks before `pending_seq`, and readers add the chunks from there on
        // (``SeriesTotalsSQL``); NULL once the series is closed, or when the row is exact. The
        // change feed finds open series through `series_open` (written when a series opens
        // and closes), closed ones through `series_change`. A series' growth takes the next
        // change position without writing `sqlite_sequence` (``ChangePositions``): deleting a
        // series raises it past the series' positions, so none is handed out again. Builds before it would read the
        // rows' partial totals as the series', so the version makes them refuse the store.
        // Moves nothing: every existing row is exact.
        """
        ALTER TABLE series ADD COLUMN pending_seq INTEGER;
        CREATE INDEX series_open ON series(open) WHERE open = 1;
        CREATE TRIGGER series_positions BEFORE DELETE ON series BEGIN
            INSERT INTO sqlite_sequence(name, seq) SELECT 'samples', 0
                WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'samples');
            UPDATE sqlite_sequence SET seq = max(seq, old.change_seq,
                coalesce((SELECT max(change_seq) FROM series_chunks WHERE series_id = old.id), 0))
                WHERE name = 'samples';
        END;
        """,
    ]

    /// The schema version this build writes.
    static var version: Int { migrations.count }

    /// `PRAGMA application_id` of a HealthGate store ("HGDB"): set when the store is created,
    /// and on the first writing open of a store created before it existed. Tells a HealthGate
    /// store from another application's SQLite file without guessing from table names.
    static let applicationID: Int32 = 0x4847_4442

    /// The tables every HealthGate store has had since migration 1: how a store from before
    /// ``applicationID`` is recognised.
    static let coreTables: Set<String> = ["types", "sources", "devices", "samples", "deleted_samples", "state"]

    /// What an opened file is.
    enum Identity: Equatable {
        /// No tables and schema version 0: a new (or empty) file.
        case empty
        /// A HealthGate store at this schema version; `stamped` when it carries ``applicationID``.
        case healthGate(version: Int, stamped: Bool)
    }

    /// Reads what the file at `path` is, without writing anything.
    /// - Throws: ``StoreError/notHealthGateStore(path:reason:)`` for another application's
    ///   database, ``StoreError/schemaVersionLost(path:)`` for HealthGate tables at version 0,
    ///   ``StoreError/schemaTooNew(found:supported:)`` for a newer schema.
    static func identify(_ db: Connection, path: String) throws -> Identity {
        // One read transaction, so the version and the tables come from one snapshot: read
        // apart, another process's first migration could commit in between, and a store being
        // created looked like "tables but schema version 0" (refused as damaged).
        try db.execute("BEGIN")
        defer { try? db.execute("COMMIT") }
        let appID = Int32(truncatingIfNeeded: try db.int64Pragma("application_id"))
        let userVersion = try db.userVersion
        var tables: Set<String> = []
        let st = try db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'", cached: false)
        while try st.step() { if let n = st.string(0) { tables.insert(n) } }
        if appID != applicationID && appID != 0 {
            throw StoreError.notHealthGateStore(
                path: path, reason: "its SQLite application_id is \(String(format: "0x%08X", UInt32(bitPattern: appID))), HealthGate's is \(String(format: "0x%08X", UInt32(bitPattern: applicationID)))")
        }
        if appID == 0 {
            if tables.isEmpty && userVersion == 0 { return .empty }
            guard coreTables.isSubset(of: tables) else {
                let shown = tables.sorted().prefix(5).joined(separator: ", ")
                throw StoreError.notHealthGateStore(
                    path: path, reason: tables.isEmpty ? "it has schema version \(userVersion) but no tables"
                        : "it is another SQLite database, with tables \(shown)\(tables.count > 5 ? ", …" : "")")
            }
        }
        if userVersion == 0 { throw StoreError.schemaVersionLost(path: path) }
        if userVersion > version { throw StoreError.schemaTooNew(found: userVersion, supported: version) }
        return .healthGate(version: userVersion, stamped: appID == applicationID)
    }

    /// Brings the database up to ``version`` and stamps ``applicationID``. Safe when several
    /// processes open a new file at once: each step re-reads `user_version` inside its write
    /// transaction. Call after ``identify(_:path:)`` accepted the file.
    static func migrate(_ db: Connection) throws {
        let current = try db.userVersion
        if current > version { throw StoreError.schemaTooNew(found: current, supported: version) }
        if current < version {
            while true {
                let done = try db.transaction { () throws -> Bool in
                    let v = try db.userVersion
                    if v > version { throw StoreError.schemaTooNew(found: v, supported: version) }
                    if v == version { return true }
                    do {
                        try db.execute(migrations[v])
                    } catch let StoreError.sqlite(code, message, _) where code & 0xFF == SQLITE_ERROR {
                        // The file's tables disagree with its version: say so, not the SQL.
                        throw StoreError.migrationFailed(path: db.path, from: v, message: message)
                    }
                    try db.setUserVersion(v + 1)
                    return false
                }
                if done { break }
            }
        }
        if Int32(truncatingIfNeeded: try db.int64Pragma("application_id")) != applicationID {
            try db.transaction { try db.execute("PRAGMA application_id=\(applicationID)") }
        }
    }
}
