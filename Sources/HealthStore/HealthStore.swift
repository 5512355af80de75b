import Foundation
import HealthModel
import Synchronization

/// A HealthKit-style store of quantity samples in one SQLite file.
///
/// ```swift
/// let store = try HealthStore(path: "/var/lib/healthgate/health.sqlite")
/// let summary = try store.save(samples)                      // one transaction
/// let hr = try store.samples(SampleQuery(type: .heartRate, limit: 10))
/// let avg = try store.statistics(StatisticsQuery(type: .heartRate, options: .discreteAverage))
/// ```
///
/// **Thread rules.** A `HealthStore` owns one SQLite connection and guards it with a lock, so
/// one instance may be shared by many threads and tasks; calls are serialised. For parallel
/// reads or a dedicated writer, open another `HealthStore` on the same path: SQLite's WAL mode
/// lets readers proceed while one writer commits, and a second writer waits up to the busy
/// timeout (5 s) for the lock.
///
/// Values are stored in their type's canonical unit; samples come back in it.
public final class HealthStore: @unchecked Sendable {
    /// The database file.
    public let path: String
    /// The types this store understands; samples of other types are refused.
    public let registry: QuantityTypeRegistry
    /// How the file was opened.
    public let mode: StoreOpenMode

    /// Write transactions committed so far by every store (every connection) of this process,
    /// explicit or single-statement: what the SD-card write profile divides bytes written by
    /// (docs/store.md, "Writes"; `healthgate run` logs it in its status line).
    package static var processCommits: UInt64 { committedTransactions.load(ordering: .relaxed) }

    // Everything below is guarded by `lock`.
    private let lock = NSLock()
    private var db: Connection
    private var typeIDs: [String: Int64] = [:]
    private var typesByID: [Int64: QuantityType] = [:]
    private var sourceIDs: [String: (Int64, Source)] = [:]
    private var deviceIDs: [Device: Int64] = [:]
    private var uuids = UUIDv7Generator()
    /// Whether a series may have taken change positions the samples' AUTOINCREMENT counter is
    /// not past yet (``StoreWriter/raiseSamplePositions()``): true at each write transaction's
    /// start (another process may have), and after this one reserved some. Lock held.
    var samplePositionsMayLag = true
    /// Bumped each time an immutable read-only connection is reopened (``dataVersion()``).
    private var generation: Int64 = 0
    /// The main file as an immutable connection saw it at open: (size, mtime), to notice a writer.
    private var immutableStamp: FileStamp?

    /// Opens the store at `path`.
    ///
    /// ``StoreOpenMode/readWrite`` (the default) creates the file (mode 0600) and its
    /// directories if needed and migrates the schema to the current version;
    /// ``StoreOpenMode/readOnly`` never creates, migrates or writes anything (docs/store.md,
    /// "Open modes"). Both refuse another application's SQLite file.
    /// - Throws: ``StoreError``: `storeMissing` (read-only, no store there), `notHealthGateStore`,
    ///   `schemaVersionLost`, `schemaTooNew`, `needsMigration` (read-only, older schema), or
    ///   an open failure.
    public init(path: String, registry: QuantityTypeRegistry = .standard, mode: StoreOpenMode = .readWrite) throws {
        self.path = path
        self.registry = registry
        self.mode = mode
        switch mode {
        case .readWrite:
            db = try Connection(path: path)
            _ = try Schema.identify(db, path: path)
            try db.enableWAL()
            try Schema.migrate(db)
            try registerTypes()
        case .readOnly:
            db = try Self.openReadOnly(path)
            immutableStamp = db.isImmutable ? FileStamp(path) : nil
            try loadTypes()
        }
    }

    /// A writing store checkpoints when it goes away (docs/store.md, "Checkpoint on shutdown"):
    /// SQLite copies the log into the main file at close only when its close is the last
    /// connection to the file, and a reader (`watch`, a dashboard) is often still connected.
    deinit {
        if mode == .readWrite { db.checkpointBeforeClose() }
    }

    /// A read-only connection to a current HealthGate store.
    private static func openReadOnly(_ path: String) throws -> Connection {
        let db = try Connection(path: path, readOnly: true)
        switch try Schema.identify(db, path: path) {
        case .empty:
            throw StoreError.storeMissing(path: path, reason: "the file has no tables yet")
        case .healthGate(let version, _) where version < Schema.version:
            throw StoreError.needsMigration(path: path, found: version, current: Schema.version)
        case .healthGate:
            return db
        }
    }

    /// Makes sure every registry type has a row, and loads the type ids.
    private func registerTypes() throws {
        try loadTypes()
        let missing = registry.all.filter { typeIDs[$0.identifier] == nil }
        if !missing.isEmpty {
            try db.transaction {
                let ins = try db.prepare(
                    "INSERT INTO types(identifier, unit, aggregation) VALUES (?, ?, ?) ON CONFLICT(identifier) DO NOTHING")
                for t in missing {
                    ins.bind(1, t.identifier); ins.bind(2, t.canonicalUnitString); ins.bind(3, t.aggregationStyle.rawValue)
                    try ins.run()
                }
            }
            try loadTypes()
        }
    }

    /// Loads the type ids. A registry type the file has no row for (a read-only store written by
    /// an older build) gets a negative id no row has, so queries of it match nothing.
    private func loadTypes() throws {
        typeIDs = [:]
        typesByID = [:]
        let rows = try db.prepare("SELECT id, identifier FROM types", cached: false)
        while try rows.step() {
            if let ident = rows.string(1) { typeIDs[ident] = rows.int64(0) }
        }
        for t in registry.all { if let id = typeIDs[t.identifier] { typesByID[id] = t } }
        if mode == .readOnly {
            for (i, t) in registry.all.enumerated() where typeIDs[t.identifier] == nil { typeIDs[t.identifier] = -1 - Int64(i) }
        }
    }

    /// The store's schema version (`PRAGMA user_version`; docs/store.md, "Migrations").
    public var schemaVersion: Int {
        get throws { try read { try $0.userVersion } }
    }

    /// Copies the write-ahead log into the main file and truncates it (TRUNCATE checkpoint),
    /// so the main file alone holds every commit: what every writing process does when it
    /// stops (docs/store.md, "Checkpoint on shutdown"). Waits up to the busy timeout for
    /// readers. Nothing to do in read-only mode.
    /// - Returns: false when a reader kept part of the log from being copied (it is copied at
    ///   the next checkpoint; nothing is lost).
    /// - Throws: ``StoreError`` on an I/O error.
    @discardableResult
    public func checkpoint() throws -> Bool {
        try withConnection { try $0.checkpoint() }
    }

    /// For an immutable read-only connection (docs/store.md, "Open modes"): when a writer has
    /// appeared since (a `-wal` file) or the main file changed, reopens the connection so later
    /// reads see the new commits. Lock held.
    private func refreshImmutable() throws {
        guard db.isImmutable, let stamp = immutableStamp else { return }
        var st = stat()
        let walAppeared = stat(path + "-wal", &st) == 0
        guard walAppeared || FileStamp(path) != stamp else { return }
        db = try Self.openReadOnly(path)
        immutableStamp = db.isImmutable ? FileStamp(path) : nil
        generation += 1
        try loadTypes()
    }

    /// A counter that changes whenever another connection commits: SQLite's `data_version`,
    /// and, for an immutable read-only connection, the number of times it was reopened.
    package func dataVersion() throws -> Int64 {
        try read { db in
            let st = try db.prepare("PRAGMA data_version")
            _ = try st.step()
            let v = st.int64(0)
            st.reset()
            return generation << 40 | v
        }
    }

    // MARK: Low-level access for other HealthGate modules

    /// Runs `body` with the connection while holding the store's lock. For package code that
    /// needs SQL the public API does not offer (the Ingest fast path, the change feed).
    package func withConnection<T>(_ body: (Connection) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(db)
    }

    /// Runs `body` inside one write transaction with a ``StoreWriter`` (lock held). A thrown
    /// error rolls everything back, including id caches.
    package func write<T>(_ body: (StoreWriter) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        samplePositionsMayLag = true
        do {
            return try db.transaction {
                let result = try body(StoreWriter(store: self))
                try Rollups.refreshStale(db)   // deletes leave their slots stale (Statistics/Rollups.swift)
                return result
            }
        } catch {
            // Rows created in the rolled-back transaction are gone; forget their ids.
            sourceIDs.removeAll()
            deviceIDs.removeAll()
            throw error
        }
    }

    /// A fresh v7 id for a new row (lock held): the store's one generator, so the ids of every
    /// row this instance inserts ascend.
    func nextUUIDWords() -> (UInt64, UInt64) { uuids.nextWords() }

    /// Drops the device id cache (a device row was deleted). Lock held.
    func forgetCachedDeviceIDs() { deviceIDs.removeAll() }

    /// The connection, for code that already holds the lock.
    var unsafeConnection: Connection { db }

    /// Runs a read under the lock. An immutable read-only connection is first reopened when a
    /// writer has appeared, so reads see its commits.
    func read<T>(_ body: (Connection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if db.isImmutable { try refreshImmutable() }
        return try body(db)
    }

    /// ``read(_:)`` inside one read transaction: every statement of `body` sees the same
    /// snapshot, even while other processes commit.
    func readSnapshot<T>(_ body: (Connection) throws -> T) throws -> T {
        try read { db in
            try db.execute("BEGIN")
            defer { if (try? db.execute("COMMIT")) == nil { try? db.execute("ROLLBACK") } }
            return try body(db)
        }
    }

    // MARK: Saving

    /// Saves `samples` in one transaction, applying sync-identifier rules, and writes `state`
    /// (per-device persisted state such as pedometer counters) in the same transaction.
    ///
    /// - A sample whose UUID is already stored is skipped (counted in ``SaveSummary/duplicates``):
    ///   saving the same batch twice is harmless.
    /// - A sample with a sync identifier replaces a stored sample with the same identifier when
    ///   its sync version is higher (the old one gets a tombstone); with a lower or equal
    ///   version it is ignored.
    /// - Quantities of a quantity series (``HealthModel/QuantitySample/seriesIndex`` set, as
    ///   `samples` reads them and `export` writes them) are stored as that series: indices it
    ///   holds already are duplicates, new ones must continue it (``StoreError/invalidSeries(_:)``).
    /// - Throws: ``StoreError`` (nothing of the batch is kept), or
    ///   ``HealthModelError/unknownType(_:)`` for a type not in ``registry``.
    @discardableResult
    public func save(_ samples: [QuantitySample], state: [String: Data] = [:]) throws -> SaveSummary {
        try write { w in
            var summary = SaveSummary()
            let statements = try w.statements()
            var series: [UUID: [QuantitySample]] = [:]
            var seriesOrder: [UUID] = []
            for s in samples {
                if s.seriesIndex != nil {
                    if series[s.uuid] == nil { seriesOrder.append(s.uuid) }
                    series[s.uuid, default: []].append(s)
                } else {
                    summary.add(try w.insert(s, using: statements))
                }
            }
            for u in seriesOrder { summary.add(try w.insertSeries(series[u]!)) }
            let now = Date()
            for (k, v) in state { try w.setState(k, v, at: now) }
            return summary
        }
    }

    // MARK: Deleting

    /// The quantities of the series with one UUID (no row: none).
    static let seriesCountSQL = "SELECT \(SeriesTotalsSQL.count("s")) FROM series s WHERE s.uuid = ?"

    /// Deletes the samples with these UUIDs (each leaves a tombstone). A quantity series' UUID
    /// deletes the series whole — every quantity — and leaves one tombstone (HealthKit's rule).
    /// Returns how many samples existed (a series counts its quantities).
    @discardableResult
    public func delete(uuids: [UUID]) throws -> Int {
        try write { w in
            let del = try w.connection.prepare("DELETE FROM samples WHERE uuid = ?")
            let count = try w.connection.prepare(Self.seriesCountSQL)
            let delSeries = try w.connection.prepare("DELETE FROM series WHERE uuid = ?")
            var n = 0
            for u in uuids {
                del.reset()
                del.bind(1, u)
                try del.run()
                n += w.connection.changes
                count.bind(1, u)
                if try count.step() {
                    n += count.int(0)
                    count.reset()
                    delSeries.bind(1, u)   // the trigger writes the tombstone; chunks cascade
                    try delSeries.run()
                }
            }
            return n
        }
    }

    /// Deletes every sample `query` selects (its limit and sort apply). A series of which the
    /// query selects any quantity is deleted whole (HealthKit deletes objects, and a series is
    /// one object), leaving one tombstone. Returns how many samples were deleted (a series
    /// counts all its quantities).
    @discardableResult
    public func delete(matching query: SampleQuery) throws -> Int {
        try write { w in
            let db = w.connection
            let (rows, seriesUUIDs) = try deletionPlan(db, query)
            let del = try db.prepare("DELETE FROM samples WHERE id IN (\(rows.sql))", cached: false)
            del.bind(all: rows.args)
            try del.run()
            var n = db.changes
            let count = try db.prepare(Self.seriesCountSQL)
            let delSeries = try db.prepare("DELETE FROM series WHERE uuid = ?")
            for u in seriesUUIDs {
                count.bind(1, u)
                if try count.step() { n += count.int(0); count.reset() }
                delSeries.bind(1, u)
                try delSeries.run()
            }
            return n
        }
    }

    /// How many samples ``delete(matching:)`` would delete now: the individually stored ones it
    /// selects and every quantity of each series it reaches (a series goes whole). What a
    /// confirmation should name; ``count(_:)`` counts only the quantities the query selects.
    public func deletionCount(matching query: SampleQuery) throws -> Int {
        try read { db in
            let (rows, seriesUUIDs) = try deletionPlan(db, query)
            let st = try db.prepare("SELECT count(*) FROM (\(rows.sql))", cached: false)
            st.bind(all: rows.args)
            var n = try st.step() ? st.int(0) : 0
            let count = try db.prepare(Self.seriesCountSQL)
            for u in seriesUUIDs {
                count.bind(1, u)
                if try count.step() { n += count.int(0); count.reset() }
            }
            return n
        }
    }

    /// What `query` deletes: a `SELECT` of the individually stored samples' ids (with its
    /// arguments; the limit counts series quantities too) and the series it reaches, in the
    /// query's order and limit.
    private func deletionPlan(_ db: Connection, _ query: SampleQuery) throws -> (rows: (sql: String, args: [SQLValue]), series: [UUID]) {
        var seriesUUIDs: [UUID] = []
        var limited = query
        // With a limit, only the series quantities that can be among the first `limit`
        // (docs/queries.md: the chunks beyond the limit are not decoded).
        let limitedRows = try query.limit == nil ? nil : sampleRows(db, query)
        let hits = try limitedRows.map { try seriesHits(db, query, limit: query.limit!, rows: $0) } ?? seriesHits(db, query)
        if !hits.isEmpty {
            if let rows = limitedRows {
                // The limit counts quantities among individual samples: find both in order.
                let kept = Self.merge(rows, hits, query: query)
                var seen = Set<UUID>()
                for s in kept where s.seriesIndex != nil && seen.insert(s.uuid).inserted { seriesUUIDs.append(s.uuid) }
                limited.limit = kept.filter { $0.seriesIndex == nil }.count
            } else {
                var seen = Set<UUID>()
                for h in hits where seen.insert(h.sample.uuid).inserted { seriesUUIDs.append(h.sample.uuid) }
            }
        }
        let (whereSQL, args) = try self.whereClause(limited)
        var sql = "SELECT s.id FROM samples s WHERE \(whereSQL) ORDER BY \(limited.orderBy)"
        if let limit = limited.limit { sql += " LIMIT \(max(0, limit))" }
        return ((sql, args), seriesUUIDs)
    }

    // MARK: Ids (lock held)

    func typeID(_ type: QuantityType) throws -> Int64 {
        guard let id = typeIDs[type.identifier], registry.contains(type.identifier) else {
            throw HealthModelError.unknownType(type.identifier)
        }
        // A read-only placeholder: a writer may have registered the type since this store
        // opened (a reader that opened a store while it was being created).
        if id < 0 {
            try loadTypes()
            return typeIDs[type.identifier] ?? id
        }
        return id
    }

    func type(id: Int64) throws -> QuantityType {
        if typesByID[id] == nil, mode == .readOnly { try loadTypes() }   // registered after this store opened
        guard let t = typesByID[id] else { throw StoreError.corruptRow("type id \(id) is not in this HealthGate's type registry") }
        return t
    }

    /// The row id of `source`, creating it (with its default priority) on first sight.
    func sourceID(_ source: Source) throws -> Int64 {
        if let (id, known) = sourceIDs[source.identifier], known.name == source.name,
           source.version == nil || known.version == source.version { return id }
        let find = try db.prepare("SELECT id, name, version FROM sources WHERE identifier = ?")
        find.bind(1, source.identifier)
        if try find.step() {
            let id = find.int64(0)
            let name = find.string(1), version = find.string(2)
            find.reset()
            if name != source.name || (source.version != nil && version != source.version) {
                let upd = try db.prepare("UPDATE sources SET name = ?, version = coalesce(?, version) WHERE id = ?")
                upd.bind(1, source.name); upd.bind(2, source.version); upd.bind(3, id)
                try upd.run()
            }
            sourceIDs[source.identifier] = (id, source)
            return id
        }
        find.reset()
        let tier = SourcePriority.tier(of: source)
        // A new source goes above every existing source of its own tier or a lower one.
        let minRank = try db.prepare("SELECT min(rank) FROM sources WHERE tier >= ?")
        minRank.bind(1, tier)
        _ = try minRank.step()
        var rank = minRank.optionalInt(0)
        minRank.reset()
        if rank == nil {
            let maxRank = try db.prepare("SELECT coalesce(max(rank), 0) + 1 FROM sources")
            _ = try maxRank.step()
            rank = maxRank.int(0)
            maxRank.reset()
        } else {
            let shift = try db.prepare("UPDATE sources SET rank = rank + 1 WHERE rank >= ?")
            shift.bind(1, rank!)
            try shift.run()
        }
        let ins = try db.prepare(
            "INSERT INTO sources(identifier, name, version, tier, rank, first_seen) VALUES (?, ?, ?, ?, ?, ?)")
        ins.bind(1, source.identifier); ins.bind(2, source.name); ins.bind(3, source.version)
        ins.bind(4, tier); ins.bind(5, rank!); ins.bind(6, Date().timeIntervalSince1970)
        try ins.run()
        let id = db.lastInsertRowID
        sourceIDs[source.identifier] = (id, source)
        return id
    }

    /// The row id of `device`: by local identifier when it has one, else by all its fields.
    func deviceID(_ device: Device) throws -> Int64 {
        if let id = deviceIDs[device] { return id }
        let id: Int64
        if let local = device.localIdentifier {
            // Fill in fields the registry row lacks; keep what it has.
            let up = try db.prepare("""
                INSERT INTO devices(name, manufacturer, model, hardware_version, firmware_version, software_version,
                                    local_identifier, udi_device_identifier)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(local_identifier) DO UPDATE SET
                    \(Self.deviceFieldsKeptWhereSet)
                """)
            bindDevice(up, device)
            try up.run()
            let find = try db.prepare("SELECT id FROM devices WHERE local_identifier = ?")
            find.bind(1, local)
            _ = try find.step()
            id = find.int64(0)
            find.reset()
        } else {
            let find = try db.prepare("""
                SELECT id FROM devices WHERE name IS ? AND manufacturer IS ? AND model IS ? AND hardware_version IS ?
                AND firmware_version IS ? AND software_version IS ? AND local_identifier IS ? AND udi_device_identifier IS ?
                """)
            bindDevice(find, device)
            if try find.step() {
                id = find.int64(0)
                find.reset()
            } else {
                find.reset()
                let ins = try db.prepare("""
                    INSERT INTO devices(name, manufacturer, model, hardware_version, firmware_version, software_version,
                                        local_identifier, udi_device_identifier) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                bindDevice(ins, device)
                try ins.run()
                id = db.lastInsertRowID
            }
        }
        deviceIDs[device] = id
        return id
    }

    private func bindDevice(_ s: Statement, _ d: Device) {
        s.bind(1, d.name); s.bind(2, d.manufacturer); s.bind(3, d.model); s.bind(4, d.hardwareVersion)
        s.bind(5, d.firmwareVersion); s.bind(6, d.softwareVersion); s.bind(7, d.localIdentifier)
        s.bind(8, d.udiDeviceIdentifier)
    }
}

/// How a ``HealthStore`` opens its file (docs/store.md, "Open modes").
public enum StoreOpenMode: Sendable, Hashable {
    /// Create the file and its directories when missing, migrate the schema, read and write.
    case readWrite
    /// Read only: nothing is created, migrated or written; a missing store, an older schema or
    /// a file that is not a HealthGate store is an error. Works for a user who may only read
    /// the file.
    case readOnly
}

/// A file's size and modification time, to notice that it changed.
private struct FileStamp: Equatable {
    var size: Int64
    var seconds: Int
    var nanoseconds: Int

    init?(_ path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        size = Int64(st.st_size)
        seconds = st.st_mtim.tv_sec
        nanoseconds = st.st_mtim.tv_nsec
    }
}

extension QuantityTypeRegistry {
    func contains(_ identifier: String) -> Bool {
        do { _ = try self.type(identifier); return true } catch { return false }
    }
}

/// What a ``HealthStore/save(_:state:)`` did with each sample.
public struct SaveSummary: Sendable, Hashable, CustomStringConvertible {
    /// New samples stored.
    public var inserted = 0
    /// Samples that replaced a stored one with the same sync identifier and a lower version.
    public var replaced = 0
    /// Samples not stored because a stored one has the same sync identifier and an equal or
    /// higher version.
    public var ignored = 0
    /// Samples not stored because their UUID is already stored.
    public var duplicates = 0

    public init() {}

    /// Counts one outcome.
    public mutating func add(_ outcome: SaveOutcome) {
        switch outcome {
        case .inserted: inserted += 1
        case .replaced: replaced += 1
        case .ignored: ignored += 1
        case .duplicate: duplicates += 1
        }
    }

    /// Adds another summary's counts.
    public mutating func add(_ other: SaveSummary) {
        inserted += other.inserted; replaced += other.replaced
        ignored += other.ignored; duplicates += other.duplicates
    }

    public var description: String {
        "\(inserted) inserted, \(replaced) replaced, \(ignored) ignored (older sync version), \(duplicates) already stored"
    }
}

/// What happened to one saved sample.
public enum SaveOutcome: Sendable, Hashable {
    /// Stored as new.
    case inserted
    /// Stored, replacing an older sync version (which got a tombstone).
    case replaced
    /// Not stored: a stored sample has the same sync identifier and an equal or higher version.
    case ignored
    /// Not stored: this UUID is already stored.
    case duplicate
}
