import CSQLite
import Foundation
import HealthModel
import HealthStore

/// The production sink: commits each batch into a ``HealthStore`` in one transaction with one
/// prepared (cached) insert statement bound per record — the bulk fast path. It writes the same
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
    private var rng = SystemRandomNumberGenerator()
    private var lastMillis: UInt64 = 0
    private var counter: UInt16 = 0

    /// A sink writing into `store`.
    ///
    /// With `durable` (the default) it switches the store's connection to `synchronous=FULL`:
    /// in WAL mode that is one fsync of the WAL per committed batch, so a power cut loses at most
    /// the batch not yet committed. (`NORMAL`, the store's default, can also lose the last
    /// committed transactions on power loss — never on a process crash.)
    /// - Throws: ``SinkError`` when the pragma cannot be set.
    public init(store: HealthStore, durable: Bool = true) throws(SinkError) {
        self.store = store
        if durable {
            do { try store.withConnection { try $0.execute("PRAGMA synchronous=FULL") } } catch {
                throw SinkError(.io, "cannot set synchronous=FULL on \(store.path): \(error)")
            }
        }
    }

    public func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable) throws(SinkError) {
        let table = slots.snapshot()
        do {
            try store.write { w in
                let ins = try w.connection.prepare(StoreWriter.insertSQL)
                let h = ins.handle   // raw binds: this loop is the ingest fast path
                let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
                // Slot -> row id, resolved once per batch (arrays, not dictionaries).
                var typeIDs = [Int64](repeating: -1, count: table.types.count)
                var sourceIDs = [Int64](repeating: -1, count: table.sources.count)
                var deviceIDs = [Int64](repeating: -1, count: table.devices.count)
                let heartRateSlot = table.types.firstIndex(of: .heartRate).map { UInt16($0) }
                var uuid = (UInt64(0), UInt64(0))
                var rr = (UInt64(0), UInt64(0), UInt64(0))
                // Columns 8, 10–13 stay NULL (prepare() cleared the bindings): never bound here.
                for r in records {
                    let ts = Int(r.typeSlot), ss = Int(r.sourceSlot)
                    guard ts < typeIDs.count else { throw SinkError(.rejected, "record names type slot \(r.typeSlot), which was never registered") }
                    guard ss < sourceIDs.count else { throw SinkError(.rejected, "record names source slot \(r.sourceSlot), which was never registered") }
                    if typeIDs[ts] < 0 { typeIDs[ts] = try w.typeID(table.types[ts]) }
                    if sourceIDs[ss] < 0 { sourceIDs[ss] = try w.sourceID(table.sources[ss]) }
                    nextUUID(&uuid)
                    withUnsafeBytes(of: &uuid) { _ = sqlite3_bind_blob(h, 1, $0.baseAddress, 16, transient) }
                    sqlite3_bind_int64(h, 2, typeIDs[ts])
                    sqlite3_bind_double(h, 3, r.value)
                    sqlite3_bind_double(h, 4, r.start)
                    sqlite3_bind_double(h, 5, r.end)
                    sqlite3_bind_int64(h, 6, sourceIDs[ss])
                    let ds = Int(r.deviceSlot)
                    if r.deviceSlot == SlotTable.noDevice || ds >= deviceIDs.count {
                        sqlite3_bind_null(h, 7)
                    } else {
                        if deviceIDs[ds] < 0 { deviceIDs[ds] = try w.deviceID(table.devices[ds]) }
                        sqlite3_bind_int64(h, 7, deviceIDs[ds])
                    }
                    if r.typeSlot == heartRateSlot {
                        let contact: SensorContact = !r.flags.contains(.contactSupported) ? .notSupported
                            : r.flags.contains(.contactDetected) ? .detected : .notDetected
                        sqlite3_bind_int64(h, 9, Int64(contact.rawValue))
                    } else {
                        sqlite3_bind_null(h, 9)
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
                            _ = sqlite3_bind_blob(h, 14, out.baseAddress, Int32(r.rrCount) * 2, transient)
                        }
                        sqlite3_bind_int64(h, 15, r.flags.contains(.rrPrecededByGap) ? 1 : 0)
                    } else {
                        sqlite3_bind_null(h, 14); sqlite3_bind_null(h, 15)
                    }
                    let rc = sqlite3_step(h)
                    sqlite3_reset(h)
                    guard rc == SQLITE_DONE else { throw w.connection.error(rc, "inserting a batch of samples") }
                }
            }
        } catch let e as SinkError {
            throw e
        } catch let e as StoreError {
            throw SinkError(Self.kind(of: e), e.description)
        } catch {
            throw SinkError(.rejected, "\(error)")
        }
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
