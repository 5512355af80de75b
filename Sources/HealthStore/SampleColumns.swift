import CSQLite
import Foundation
import HealthModel

/// One new sample for the store's bulk writer (``StoreWriter/insertNew(count:_:)``): plain values
/// with its type, source and device already resolved to row ids, so filling one is a few stores
/// and costs no heap. RR intervals are passed beside it (``SampleRowBinder/bind(_:rrTicks:)``).
///
/// What the row cannot say (sync identifiers, free-form metadata) goes through
/// ``StoreWriter/insert(_:)`` with a whole ``QuantitySample``; both end in the same binding code
/// (``SampleColumns``).
package struct SampleRow: Sendable, Equatable {
    /// The type's row id (``StoreWriter/typeID(_:)``).
    package var typeID: Int64
    /// The source's row id (``StoreWriter/sourceID(_:)``).
    package var sourceID: Int64
    /// The device's row id (``StoreWriter/deviceID(_:)``), or nil for none.
    package var deviceID: Int64?
    /// The value in the type's canonical unit.
    package var value: Double
    /// Start and end, Unix seconds.
    package var start: Double
    package var end: Double
    /// Heart-rate metadata with columns of their own.
    package var sensorLocation: HeartRateSensorLocation?
    package var sensorContact: SensorContact?
    package var motionContext: HeartRateMotionContext?
    /// ``Flags`` bits.
    package var flags: Flags

    /// Bits with a fixed meaning in the store.
    package struct Flags: OptionSet, BitwiseCopyable, Sendable, Hashable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Beats may be missing before the first RR interval (the `rr_gap` column).
        package static let rrPrecededByGap = Flags(rawValue: 1 << 0)
        /// Stored as the user metadata key ``HealthModel/Metadata/payloadTruncatedKey`` = 1.
        package static let payloadTruncated = Flags(rawValue: 1 << 1)
        /// Stored as the user metadata key ``HealthModel/Metadata/energySaturatedKey`` = 1.
        package static let energySaturated = Flags(rawValue: 1 << 2)
    }

    /// A row; everything optional defaults to none.
    package init(typeID: Int64, sourceID: Int64, deviceID: Int64? = nil, value: Double, start: Double, end: Double,
                 sensorLocation: HeartRateSensorLocation? = nil, sensorContact: SensorContact? = nil,
                 motionContext: HeartRateMotionContext? = nil, flags: Flags = []) {
        self.typeID = typeID; self.sourceID = sourceID; self.deviceID = deviceID
        self.value = value; self.start = start; self.end = end
        self.sensorLocation = sensorLocation; self.sensorContact = sensorContact
        self.motionContext = motionContext; self.flags = flags
    }
}

/// Binds one ``SampleRow`` into its place in the bulk writer's current statement. Handed to the
/// row closure of ``StoreWriter/insertNew(count:_:)``; valid only during that call.
package struct SampleRowBinder {
    fileprivate let statement: OpaquePointer
    fileprivate let offset: Int32
    fileprivate let uuid: (UInt64, UInt64)
    /// Whether the writer made `uuid` (else the row brings its own).
    fileprivate let hasID: Bool
    fileprivate var bound = false
    /// The row bound, for the batch's rollups (``RollupBatch``).
    fileprivate var row: SampleRow?

    /// Binds every column of the row: `row`, its RR intervals (1/1024 s ticks, oldest first;
    /// empty for none) and the id the writer made. Call it exactly once per row.
    package mutating func bind(_ row: SampleRow, rrTicks: UnsafeBufferPointer<UInt16> = UnsafeBufferPointer(start: nil, count: 0)) {
        precondition(hasID, "rows that bring their own UUIDs are bound with bind(_:uuid:rrTicks:metadata:)")
        var id = uuid
        withUnsafeBytes(of: &id) { u in
            SampleColumns.bind(statement, offset: offset, uuid: u, row, rrTicks: rrTicks, metadata: nil, sync: nil)
        }
        bound = true
        self.row = row
    }

    /// Binds a row under its own `uuid` (an imported sample's) rather than a fresh one, with
    /// `metadata` the metadata column's text (``MetadataColumn``; nil: the flags' preset). Only
    /// for ``StoreWriter/insertNew(count:makingIDs:_:)`` with `makingIDs: false`.
    mutating func bind(_ row: SampleRow, uuid: UUID, rrTicks: UnsafeBufferPointer<UInt16>, metadata: String?) {
        precondition(!hasID, "insertNew(count:) makes the ids: bind its rows with bind(_:rrTicks:)")
        withUnsafeBytes(of: uuid.uuid) { u in
            SampleColumns.bind(statement, offset: offset, uuid: u, row, rrTicks: rrTicks, metadata: metadata, sync: nil)
        }
        bound = true
        self.row = row
    }
}

/// The `samples` table's insert columns, and the one place that binds them. Package-private:
/// other modules write through ``StoreWriter/insertNew(count:_:)`` and
/// ``StoreWriter/insert(_:)``, never SQL of their own.
enum SampleColumns {
    /// The column list, in parameter order.
    static let names = """
        uuid, type_id, value, start, "end", source_id, device_id, sensor_location,
        sensor_contact, motion_context, sync_identifier, sync_version, metadata, rr, rr_gap
        """
    /// Parameters per row.
    static let count: Int32 = 15

    /// The insert of `rows` rows in one statement (`VALUES (…), (…), …`): parameter
    /// `r * count + c` is column `c` of row `r`. `ON CONFLICT(uuid) DO NOTHING` makes re-saves
    /// harmless.
    static func insertSQL(rows: Int) -> String {
        let row = "(" + Array(repeating: "?", count: Int(count)).joined(separator: ", ") + ")"
        return "INSERT INTO samples(\(names)) VALUES \(Array(repeating: row, count: rows).joined(separator: ", ")) ON CONFLICT(uuid) DO NOTHING"
    }

    /// The metadata column of the flag presets (in the store's own encoding, made once).
    private static let truncated = MetadataColumn.encode(Metadata(user: [Metadata.payloadTruncatedKey: .number(1)]))!
    private static let saturated = MetadataColumn.encode(Metadata(user: [Metadata.energySaturatedKey: .number(1)]))!
    private static let both = MetadataColumn.encode(Metadata(user: [Metadata.payloadTruncatedKey: .number(1),
                                                                     Metadata.energySaturatedKey: .number(1)]))!

    /// Binds all ``count`` columns of row `offset / count`. Every column is bound (a value or
    /// NULL): a multi-row statement keeps the previous rows' bindings otherwise. `metadata`,
    /// when given, is the metadata column's text; else the row's flags choose it.
    @inline(__always)
    static func bind(_ h: OpaquePointer, offset o: Int32, uuid: UnsafeRawBufferPointer, _ r: SampleRow,
                     rrTicks: UnsafeBufferPointer<UInt16>, metadata: String?, sync: (identifier: String, version: Int?)?) {
        sqlite3_bind_blob(h, o + 1, uuid.baseAddress, 16, sqliteTransient)
        sqlite3_bind_int64(h, o + 2, r.typeID)
        sqlite3_bind_double(h, o + 3, r.value)
        sqlite3_bind_double(h, o + 4, r.start)
        sqlite3_bind_double(h, o + 5, r.end)
        sqlite3_bind_int64(h, o + 6, r.sourceID)
        if let d = r.deviceID { sqlite3_bind_int64(h, o + 7, d) } else { sqlite3_bind_null(h, o + 7) }
        if let v = r.sensorLocation { sqlite3_bind_int64(h, o + 8, Int64(v.rawValue)) } else { sqlite3_bind_null(h, o + 8) }
        if let v = r.sensorContact { sqlite3_bind_int64(h, o + 9, Int64(v.rawValue)) } else { sqlite3_bind_null(h, o + 9) }
        if let v = r.motionContext { sqlite3_bind_int64(h, o + 10, Int64(v.rawValue)) } else { sqlite3_bind_null(h, o + 10) }
        if let sync {
            sqlite3_bind_text(h, o + 11, sync.identifier, -1, sqliteTransient)
            if let v = sync.version { sqlite3_bind_int64(h, o + 12, Int64(v)) } else { sqlite3_bind_null(h, o + 12) }
        } else {
            sqlite3_bind_null(h, o + 11); sqlite3_bind_null(h, o + 12)
        }
        let text: String? = metadata ?? (r.flags.contains(.payloadTruncated)
            ? (r.flags.contains(.energySaturated) ? both : truncated)
            : r.flags.contains(.energySaturated) ? saturated : nil)
        if let text { sqlite3_bind_text(h, o + 13, text, -1, sqliteTransient) } else { sqlite3_bind_null(h, o + 13) }
        if rrTicks.count > 0 {
            // RR column: little-endian UInt16 ticks, oldest first.
            #if _endian(little)
            sqlite3_bind_blob(h, o + 14, rrTicks.baseAddress, Int32(rrTicks.count * 2), sqliteTransient)
            #else
            let le = rrTicks.map { $0.littleEndian }
            le.withUnsafeBytes { _ = sqlite3_bind_blob(h, o + 14, $0.baseAddress, Int32($0.count), sqliteTransient) }
            #endif
            sqlite3_bind_int64(h, o + 15, r.flags.contains(.rrPrecededByGap) ? 1 : 0)
        } else {
            sqlite3_bind_null(h, o + 14); sqlite3_bind_null(h, o + 15)
        }
    }
}

extension StoreWriter {
    /// Rows per multi-row insert statement of the bulk writer; a batch's remainder goes one row
    /// per statement. With this schema SQLite's per-statement work (AUTOINCREMENT bookkeeping,
    /// constraint checks, statement setup) costs about as much as a row; 50 rows per statement
    /// measured ~4 µs per row against 8–10 µs at one (docs/performance.md), no gain beyond.
    package static let rowsPerStatement = 50
    /// The bulk writer's statements' SQL, built once (the statement cache is keyed by it).
    private static let manyRowsSQL = SampleColumns.insertSQL(rows: rowsPerStatement)
    private static let oneRowSQL = SampleColumns.insertSQL(rows: 1)

    /// The store's bulk writer: inserts `count` new samples in this transaction, each with a
    /// fresh v7 UUID from the store's ``UUIDv7Generator`` (so the UNIQUE uuid index only
    /// appends), through cached statements of ``rowsPerStatement`` rows (the remainder one by
    /// one). `row(i, &binder)` must call ``SampleRowBinder/bind(_:rrTicks:)`` once for row `i`.
    ///
    /// This is the ingest writer's, `import`'s and the benchmark ceiling's path: no
    /// `QuantitySample`, no sync-identifier rules (new ids never conflict), no heap per row. A
    /// failing row fails its statement and the caller's whole transaction. `count` 0 writes
    /// nothing (no page of the store changes).
    /// - Throws: ``StoreError`` from SQLite, or what `row` throws.
    package func insertNew(count: Int, _ row: (Int, inout SampleRowBinder) throws -> Void) throws {
        try insertNew(count: count, makingIDs: true, row)
    }

    /// ``insertNew(count:_:)`` for rows that bring their own UUIDs (`import`,
    /// ``insertImported(_:)``): a UUID already stored is skipped by `ON CONFLICT DO NOTHING`
    /// (and the rollups of its statement's slots recomputed, ``RollupBatch``). Returns the number
    /// of rows inserted; the rest were duplicates.
    @discardableResult
    func insertNew(count: Int, makingIDs: Bool, _ row: (Int, inout SampleRowBinder) throws -> Void) throws -> Int {
        // No rows, no write: the rollup batch below would still mark `rollup_control` (a page of
        // the WAL, and an SD card's wear, per empty call; docs/store.md "Writes").
        guard count > 0 else { return 0 }
        try raiseSamplePositions()
        let db = connection
        var inserted = 0
        let many = try db.prepare(Self.manyRowsSQL).handle
        let one = try db.prepare(Self.oneRowSQL).handle
        // Rollups per slot for the whole call instead of the trigger's upsert per row.
        var rollups = try RollupBatch.begin(db)
        do {
            var i = 0
            while i < count {
                let k = count - i >= Self.rowsPerStatement ? Self.rowsPerStatement : 1
                let h = k == 1 ? one : many
                for j in 0..<k {
                    var binder = SampleRowBinder(statement: h, offset: Int32(j) * SampleColumns.count,
                                                 uuid: makingIDs ? store.nextUUIDWords() : (0, 0), hasID: makingIDs)
                    try row(i + j, &binder)
                    precondition(binder.bound, "the bulk writer's row closure did not bind row \(i + j)")
                    if let r = binder.row { rollups.add(r) }
                }
                let rc = sqlite3_step(h)
                sqlite3_reset(h)
                guard rc == SQLITE_DONE else { throw db.error(rc, "inserting a batch of samples") }
                inserted += db.changes
                rollups.statementRan(rows: k, db: db)
                i += k
            }
        } catch {
            // The rows already inserted stay in the caller's transaction until it rolls back.
            rollups.markStale()
            try rollups.end(db)
            throw error
        }
        try rollups.end(db)
        return inserted
    }
}
