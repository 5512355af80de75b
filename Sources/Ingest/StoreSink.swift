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
                var typeIDs: [UInt16: (Int64, Bool)] = [:]
                var sourceIDs: [UInt16: Int64] = [:]
                var deviceIDs: [UInt16: Int64] = [:]
                var uuid = (UInt64(0), UInt64(0))
                var rr = (UInt64(0), UInt64(0), UInt64(0))
                for r in records {
                    let (typeID, isHeartRate): (Int64, Bool)
                    if let known = typeIDs[r.typeSlot] { (typeID, isHeartRate) = known } else {
                        guard Int(r.typeSlot) < table.types.count else { throw SinkError(.rejected, "record names type slot \(r.typeSlot), which was never registered") }
                        let t = table.types[Int(r.typeSlot)]
                        (typeID, isHeartRate) = (try w.typeID(t), t == .heartRate)
                        typeIDs[r.typeSlot] = (typeID, isHeartRate)
                    }
                    let sourceID: Int64
                    if let known = sourceIDs[r.sourceSlot] { sourceID = known } else {
                        guard Int(r.sourceSlot) < table.sources.count else { throw SinkError(.rejected, "record names source slot \(r.sourceSlot), which was never registered") }
                        sourceID = try w.sourceID(table.sources[Int(r.sourceSlot)])
                        sourceIDs[r.sourceSlot] = sourceID
                    }
                    nextUUID(&uuid)
                    withUnsafeBytes(of: &uuid) { ins.bind(1, bytes: $0) }
                    ins.bind(2, typeID)
                    ins.bind(3, r.value)
                    ins.bind(4, r.start)
                    ins.bind(5, r.end)
                    ins.bind(6, sourceID)
                    if r.deviceSlot == SlotTable.noDevice || Int(r.deviceSlot) >= table.devices.count {
                        ins.bindNull(7)
                    } else if let known = deviceIDs[r.deviceSlot] {
                        ins.bind(7, known)
                    } else {
                        let id = try w.deviceID(table.devices[Int(r.deviceSlot)])
                        deviceIDs[r.deviceSlot] = id
                        ins.bind(7, id)
                    }
                    ins.bindNull(8)
                    if isHeartRate {
                        let contact: SensorContact = !r.flags.contains(.contactSupported) ? .notSupported
                            : r.flags.contains(.contactDetected) ? .detected : .notDetected
                        ins.bind(9, contact.rawValue)
                    } else {
                        ins.bindNull(9)
                    }
                    ins.bindNull(10); ins.bindNull(11); ins.bindNull(12); ins.bindNull(13)
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
                            ins.bind(14, bytes: UnsafeRawBufferPointer(rebasing: out[0..<(Int(r.rrCount) * 2)]))
                        }
                        ins.bind(15, r.flags.contains(.rrPrecededByGap) ? 1 : 0)
                    } else {
                        ins.bindNull(14); ins.bindNull(15)
                    }
                    try ins.run()
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
