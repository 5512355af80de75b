import CSQLite
import Foundation
import HealthModel
import HealthStore
import Synchronization

/// The production sink: commits each batch into a ``HealthStore`` in one transaction through
/// cached prepared inserts of ``rowsPerStatement`` rows each (the remainder one by one) — the
/// bulk fast path. It writes the same
/// rows, with the same columns and the same `ON CONFLICT(uuid) DO NOTHING` rule, as
/// `HealthStore.save`, without building a `QuantitySample` per record.
///
/// Sample UUIDs are version 7, made here from the commit time (RFC 9562 method 1: a 12-bit
/// counter after the milliseconds, then random bits), so the UNIQUE uuid index appends instead
/// of scattering (docs/performance.md).
///
/// Thread rules: used by the pipeline's writer thread only (the store itself is thread-safe,
/// so readers may share it).
public final class StoreSink: SampleSink, @unchecked Sendable {
    /// The store written to.
    public let store: HealthStore
    private var rng = KernelRandomPool()
    private var lastMillis: UInt64 = 0
    private var counter: UInt16 = 0

    /// When committed batches reach the disk itself (docs/ingestion.md, "Durability").
    public enum Durability: String, Sendable, Equatable, CaseIterable {
        /// Group commit (the default): transactions commit without an fsync
        /// (`synchronous=NORMAL`) and the writer syncs the WAL once it has caught up — so while
        /// the gateway keeps up, every batch is on disk right after its commit, as with
        /// ``everyCommit`` — and at least once per flush interval while it works through a
        /// backlog, so one fsync covers many batches. A process crash loses nothing committed;
        /// a power cut loses at most the batches committed since the last sync, which is at most
        /// one flush interval of them and only while a backlog (held in memory, equally lost)
        /// exists.
        case group
        /// One fsync per committed transaction (`synchronous=FULL`): the classic setting; every
        /// batch is on disk before the next one starts, whatever the load.
        case everyCommit = "every-commit"

        /// The `PRAGMA synchronous` value of this mode.
        public var synchronousPragma: String { self == .group ? "NORMAL" : "FULL" }
    }

    /// The durability mode: the one asked for, until a failed sync switches group commit to
    /// ``Durability/everyCommit`` for good (see ``sync()``).
    public var durability: Durability { mode.withLock { $0 } }
    private let mode: Mutex<Durability>

    /// A sink writing into `store` with `durability` (see ``Durability``; group commit unless
    /// told otherwise). It sets the store connection's `synchronous` pragma to match, and its
    /// checkpoint size (``walAutocheckpointPages``, ``journalSizeLimitBytes``).
    /// - Throws: ``SinkError`` when the pragmas cannot be set.
    public init(store: HealthStore, durability: Durability = .group) throws(SinkError) {
        self.store = store
        self.mode = Mutex(durability)
        do { try store.withConnection { try $0.execute(Self.pragmas(for: durability)) } } catch {
            throw SinkError(.io, "cannot set the writer's connection settings (\(Self.pragmas(for: durability))) on \(store.path): \(error)")
        }
    }

    /// With group commit, fsyncs the WAL (through SQLite's own file handle for it), making every
    /// committed batch durable. Nothing to do with ``Durability/everyCommit``.
    ///
    /// A failed fsync is not retried: Linux may mark the pages it could not write as clean and
    /// report the error only once, so a later fsync can succeed without them. The sink switches
    /// to ``Durability/everyCommit`` (`synchronous=FULL`) for the rest of its life — each commit
    /// then fails itself if the disk does, and the writer stalls and reports as for any failed
    /// commit — and throws, so the failure is reported. Batches committed since the last good
    /// sync may not be on the disk if the power fails.
    public func sync() throws(SinkError) {
        guard durability == .group else { return }
        var failure: SinkError
        do { try store.withConnection { try $0.syncJournal() }; return } catch let e as StoreError {
            failure = SinkError(Self.kind(of: e), "syncing the write-ahead log of \(store.path): \(e)")
        } catch {
            failure = SinkError(.io, "syncing the write-ahead log of \(store.path): \(error)")
        }
        mode.withLock { $0 = .everyCommit }
        do { try store.withConnection { try $0.execute("PRAGMA synchronous=FULL") } } catch {
            failure.message += "; switching to synchronous=FULL failed too: \(error)"
        }
        throw failure
    }

    /// The WAL size, in pages, at which the writer's commit checkpoints it into the database
    /// (`PRAGMA wal_autocheckpoint`; SQLite's default is 1,000, 4 MiB). The ingest writer changes
    /// the same few pages (the right edges of the table and its indexes) in every batch, and a
    /// checkpoint copies only the newest version of each page, so checkpointing a quarter as
    /// often copies far less and fsyncs a quarter as often (measured back to back: 177k → 231k
    /// samples/s in `healthgate-bench`, docs/performance.md). The cost is a WAL of up to 16 MiB, which a
    /// crash recovery replays at the next open, and ``journalSizeLimitBytes`` truncates back.
    public static let walAutocheckpointPages = 4000
    /// After a checkpoint, the WAL file is truncated to at most this (`PRAGMA journal_size_limit`),
    /// so a burst that grew it (a long reader holding off checkpoints) does not keep the space.
    public static let journalSizeLimitBytes = 16 << 20

    /// The connection settings the writer runs with, for a raw connection to match them (the
    /// benchmark's ceiling): `synchronous` for `durability`, the checkpoint size and WAL limit.
    public static func pragmas(for durability: Durability) -> String {
        "PRAGMA synchronous=\(durability.synchronousPragma); PRAGMA wal_autocheckpoint=\(walAutocheckpointPages); "
            + "PRAGMA journal_size_limit=\(journalSizeLimitBytes)"
    }

    /// Rows per multi-row insert statement (``StoreWriter/insertSQL(rows:)``); a batch's
    /// remainder goes through the one-row statement.
    public static let rowsPerStatement = 50
    /// The multi-row insert's SQL, built once (the statement cache is keyed by it).
    private static let manyRowsSQL = StoreWriter.insertSQL(rows: rowsPerStatement)
    /// The `metadata` column of a record flagged ``SampleRecord/Flags/payloadTruncated`` or
    /// ``SampleRecord/Flags/energySaturated``: the user key `live` sets, in the store's encoding.
    private static let truncatedMetadata = Array(StoreWriter.metadataColumn(Metadata(user: [Metadata.payloadTruncatedKey: .number(1)]))!.utf8)
    private static let saturatedMetadata = Array(StoreWriter.metadataColumn(Metadata(user: [Metadata.energySaturatedKey: .number(1)]))!.utf8)

    public func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable) throws(SinkError) {
        try write(records, slots: slots, attachments: .none)
    }

    /// The committed value of `key` in the store's state table.
    public func persistedState(forKey key: String) throws(SinkError) -> Data? {
        do { return try store.state(key) } catch let e as StoreError {
            throw SinkError(Self.kind(of: e), e.description)
        } catch {
            throw SinkError(.other, "\(error)")
        }
    }

    /// Writes the batch as ``write(_:slots:)`` does, and in the same transaction the records
    /// flagged ``SampleRecord/Flags/attached`` with their metadata (through the store's own
    /// sync-identifier upsert) and `attachments.state`.
    public func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable,
                      attachments: BatchAttachments) throws(SinkError) {
        let table = slots.snapshot()
        do {
            try store.write { w in
                // Raw binds on cached statements: this loop is the ingest fast path.
                let many = try w.connection.prepare(Self.manyRowsSQL).handle
                let one = try w.connection.prepare(StoreWriter.insertSQL).handle
                let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
                // Slot -> row id, resolved once per batch (arrays, not dictionaries).
                var typeIDs = [Int64](repeating: -1, count: table.types.count)
                var sourceIDs = [Int64](repeating: -1, count: table.sources.count)
                var deviceIDs = [Int64](repeating: -1, count: table.devices.count)
                let heartRateSlot = table.types.firstIndex(of: .heartRate).map { UInt16($0) }
                var uuid = (UInt64(0), UInt64(0))
                var rr = (UInt64(0), UInt64(0), UInt64(0))
                // Binds record `r` as row `row` of statement `h`. Columns 10–12 stay NULL
                // (prepare() cleared the bindings and nothing here binds them).
                func bind(_ r: SampleRecord, to h: OpaquePointer, row: Int32) throws {
                    let o = row * StoreWriter.insertColumns
                    let ts = Int(r.typeSlot), ss = Int(r.sourceSlot)
                    guard ts < typeIDs.count else { throw SinkError(.rejected, "record names type slot \(r.typeSlot), which was never registered") }
                    guard ss < sourceIDs.count else { throw SinkError(.rejected, "record names source slot \(r.sourceSlot), which was never registered") }
                    if typeIDs[ts] < 0 { typeIDs[ts] = try w.typeID(table.types[ts]) }
                    if sourceIDs[ss] < 0 { sourceIDs[ss] = try w.sourceID(table.sources[ss]) }
                    nextUUID(&uuid)
                    withUnsafeBytes(of: &uuid) { _ = sqlite3_bind_blob(h, o + 1, $0.baseAddress, 16, transient) }
                    sqlite3_bind_int64(h, o + 2, typeIDs[ts])
                    sqlite3_bind_double(h, o + 3, r.value)
                    sqlite3_bind_double(h, o + 4, r.start)
                    sqlite3_bind_double(h, o + 5, r.end)
                    sqlite3_bind_int64(h, o + 6, sourceIDs[ss])
                    let ds = Int(r.deviceSlot)
                    if r.deviceSlot == SlotTable.noDevice || ds >= deviceIDs.count {
                        sqlite3_bind_null(h, o + 7)
                    } else {
                        if deviceIDs[ds] < 0 { deviceIDs[ds] = try w.deviceID(table.devices[ds]) }
                        sqlite3_bind_int64(h, o + 7, deviceIDs[ds])
                    }
                    if r.typeSlot == heartRateSlot {
                        let contact: SensorContact = !r.flags.contains(.contactSupported) ? .notSupported
                            : r.flags.contains(.contactDetected) ? .detected : .notDetected
                        sqlite3_bind_int64(h, o + 9, Int64(contact.rawValue))
                    } else {
                        sqlite3_bind_null(h, o + 9)
                    }
                    // Bound every time (value or NULL): a multi-row statement keeps the previous
                    // chunk's bindings.
                    if r.sensorLocationCode > 0 {
                        sqlite3_bind_int64(h, o + 8, Int64(r.sensorLocationCode) - 1)
                    } else {
                        sqlite3_bind_null(h, o + 8)
                    }
                    let flagged = r.flags.contains(.payloadTruncated) ? Self.truncatedMetadata
                        : r.flags.contains(.energySaturated) ? Self.saturatedMetadata : nil
                    if let flagged {
                        flagged.withUnsafeBufferPointer { t in
                            _ = t.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(h, o + 13, $0.baseAddress, Int32($0.count), transient) }
                        }
                    } else {
                        sqlite3_bind_null(h, o + 13)
                    }
                    if r.rrCount > 0 {
                        // RR column: little-endian UInt16 ticks, oldest first (as the store writes).
                        rr = (0, 0, 0)
                        withUnsafeMutableBytes(of: &rr) { out in
                            withUnsafeBytes(of: r.rr) { src in
                                for i in 0..<Int(r.rrCount) {
                                    let t = src.load(fromByteOffset: i * 2, as: UInt16.self)
                                    out[i * 2] = UInt8(t & 0xFF)
                                    out[i * 2 + 1] = UInt8(t >> 8)
                                }
                            }
                            _ = sqlite3_bind_blob(h, o + 14, out.baseAddress, Int32(r.rrCount) * 2, transient)
                        }
                        sqlite3_bind_int64(h, o + 15, r.flags.contains(.rrPrecededByGap) ? 1 : 0)
                    } else {
                        sqlite3_bind_null(h, o + 14); sqlite3_bind_null(h, o + 15)
                    }
                }
                // Records with extras go through the store's sync rules below (rare: pedometers);
                // the fast path takes the others, compacted only when the batch has such records.
                var fast = records
                var compacted: UnsafeMutableBufferPointer<SampleRecord>?
                defer { compacted?.deallocate() }
                if records.contains(where: { $0.flags.contains(.attached) }) {
                    let c = UnsafeMutableBufferPointer<SampleRecord>.allocate(capacity: records.count)
                    var n = 0
                    for r in records where !r.flags.contains(.attached) { c[n] = r; n += 1 }
                    compacted = c
                    fast = UnsafeBufferPointer(rebasing: c[0..<n])
                }
                var i = 0
                while i < fast.count {
                    let k = fast.count - i >= Self.rowsPerStatement ? Self.rowsPerStatement : 1
                    let h = k == 1 ? one : many
                    for j in 0..<k { try bind(fast[i + j], to: h, row: Int32(j)) }
                    let rc = sqlite3_step(h)
                    sqlite3_reset(h)
                    guard rc == SQLITE_DONE else { throw w.connection.error(rc, "inserting a batch of samples") }
                    i += k
                }
                try writeAttached(records, table: table, attachments: attachments, with: w)
            }
        } catch let e as SinkError {
            throw e
        } catch let e as StoreError {
            throw SinkError(Self.kind(of: e), e.description)
        } catch {
            throw SinkError(.rejected, "\(error)")
        }
    }

    /// The side-channel part of a batch: attached records as `QuantitySample`s through the
    /// store's insert (sync-identifier upsert), then the newest state per key.
    private func writeAttached(_ records: UnsafeBufferPointer<SampleRecord>,
                               table: (types: [QuantityType], sources: [Source], devices: [Device]),
                               attachments: BatchAttachments, with w: StoreWriter) throws {
        var statements: StoreWriter.InsertStatements?
        for i in records.indices where records[i].flags.contains(.attached) {
            let r = records[i]
            guard Int(r.typeSlot) < table.types.count else { throw SinkError(.rejected, "record names type slot \(r.typeSlot), which was never registered") }
            guard Int(r.sourceSlot) < table.sources.count else { throw SinkError(.rejected, "record names source slot \(r.sourceSlot), which was never registered") }
            let type = table.types[Int(r.typeSlot)]
            let attachment = attachments.samples[i]
            var metadata = attachment?.metadata ?? Metadata()
            if metadata.heartRateSensorLocation == nil { metadata.heartRateSensorLocation = r.heartRateSensorLocation }
            // The flags the bulk path stores as metadata keys hold for attached records too.
            if r.flags.contains(.payloadTruncated) { metadata.user[Metadata.payloadTruncatedKey] = .number(1) }
            if r.flags.contains(.energySaturated) { metadata.user[Metadata.energySaturatedKey] = .number(1) }
            let rr = attachment?.rrIntervals ?? (r.rrCount > 0 ? r.rrTicks : nil)
            if type == .heartRate, metadata.sensorContact == nil {
                metadata.sensorContact = !r.flags.contains(.contactSupported) ? .notSupported
                    : r.flags.contains(.contactDetected) ? .detected : .notDetected
            }
            let device = r.deviceSlot == SlotTable.noDevice || Int(r.deviceSlot) >= table.devices.count
                ? nil : table.devices[Int(r.deviceSlot)]
            let sample: QuantitySample
            do {
                sample = try QuantitySample(
                    type: type, quantity: Quantity(r.value, type.canonicalUnit),
                    start: Date(timeIntervalSince1970: r.start), end: Date(timeIntervalSince1970: r.end),
                    source: table.sources[Int(r.sourceSlot)], device: device, metadata: metadata,
                    rrIntervals: rr.map { RRIntervals(ticks: $0, precededByGap: r.flags.contains(.rrPrecededByGap)) })
            } catch {
                throw SinkError(.rejected, "\(error)")
            }
            if statements == nil { statements = try w.statements() }
            _ = try w.insert(sample, using: statements!)
        }
        let now = Date()
        for (key, value) in attachments.state.sorted(by: { $0.key < $1.key }) { try w.setState(key, value, at: now) }
    }

    static func kind(of e: StoreError) -> SinkError.Kind {
        switch e.primaryCode {
        case SQLITE_FULL: return .diskFull
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY: return .io
        case SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_TOOBIG: return .rejected
        default: return .other
        }
    }

    /// Writes a fresh v7 UUID (big-endian byte order) into `out`.
    private func nextUUID(_ out: inout (UInt64, UInt64)) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var ms = UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec) / 1_000_000
        if ms <= lastMillis {
            // Same (or an earlier) millisecond: keep order with the counter, borrowing a
            // millisecond when the counter runs out.
            ms = lastMillis
            counter &+= 1
            if counter > 0x0FFF { ms += 1; counter = UInt16(truncatingIfNeeded: rng.next() as UInt64) & 0x01FF }
        } else {
            counter = UInt16(truncatingIfNeeded: rng.next() as UInt64) & 0x01FF
        }
        lastMillis = ms
        let hi = (ms << 16) | 0x7000 | UInt64(counter)
        let random: UInt64 = rng.next()
        let lo = (random & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        out = (hi.bigEndian, lo.bigEndian)
    }
}
