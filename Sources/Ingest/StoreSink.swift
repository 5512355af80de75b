import Foundation
import HealthModel
import HealthStore
import Synchronization
import Locking

/// The production sink: commits each batch into a ``HealthStore`` in one transaction through
/// the store's bulk writer (`StoreWriter.insertNew`, the same one the benchmark's ceiling
/// calls) — the fast path. It writes the same rows as `HealthStore.save`, without building a
/// `QuantitySample` per record; the store binds the columns and makes the v7 ids (at commit
/// time, so the UNIQUE uuid index appends instead of scattering; docs/performance.md).
///
/// Thread rules: used by the pipeline's writer thread only (the store itself is thread-safe,
/// so readers may share it).
package final class StoreSink: SampleSink, @unchecked Sendable {
    /// The store written to.
    package let store: HealthStore

    /// When committed batches reach the disk itself (docs/ingestion.md, "Durability").
    package enum Durability: String, Sendable, Equatable, CaseIterable {
        /// Group commit (the default): transactions commit without an fsync
        /// (`synchronous=NORMAL`) and the writer syncs the WAL at most once per sync interval
        /// (`IngestConfiguration.syncInterval`, default 5 s; zero: once it has caught up after
        /// each commit), so one fsync covers many batches and an SD card is written less. A
        /// process crash loses nothing committed; a power cut loses at most the batches committed
        /// since the last sync: up to one sync interval of them.
        case group
        /// One fsync per committed transaction (`synchronous=FULL`): the classic setting; every
        /// batch is on disk before the next one starts, whatever the load.
        case everyCommit = "every-commit"

        /// The `PRAGMA synchronous` value of this mode.
        package var synchronousPragma: String { self == .group ? "NORMAL" : "FULL" }
    }

    /// How heart-rate readings are stored.
    package enum Storage: String, Sendable, Equatable, CaseIterable {
        /// As quantity series (docs/store.md, "Quantity series"): the default.
        case series
        /// One `samples` row per reading, as before series existed (the benchmark's baseline
        /// and the tests' reference).
        case individual
    }

    /// How heart-rate readings are stored (``Storage``).
    package let storage: Storage
    /// The open series of this writer (nil with ``Storage/individual``); writer thread only.
    private let series: SeriesWriter?

    /// The durability mode: the one asked for, until a failed sync switches group commit to
    /// ``Durability/everyCommit`` for good (see ``sync()``).
    package var durability: Durability { mode.withLock { $0 } }
    private let mode: Lock<Durability>

    /// A sink writing into `store` with `durability` (see ``Durability``; group commit unless
    /// told otherwise). It sets the store connection's `synchronous` pragma to match, and its
    /// checkpoint size (``walAutocheckpointPages``, ``journalSizeLimitBytes``).
    /// - Throws: ``SinkError`` when the pragmas cannot be set.
    package init(store: HealthStore, durability: Durability = .group, storage: Storage = .series) throws(SinkError) {
        self.store = store
        self.mode = Lock(durability)
        self.storage = storage
        self.series = storage == .series ? SeriesWriter() : nil
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
    package func sync() throws(SinkError) {
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
    package static let walAutocheckpointPages = 4000
    /// After a checkpoint, the WAL file is truncated to at most this (`PRAGMA journal_size_limit`),
    /// so a burst that grew it (a long reader holding off checkpoints) does not keep the space.
    package static let journalSizeLimitBytes = 16 << 20

    /// The connection settings the writer runs with, for a raw connection to match them (the
    /// benchmark's ceiling): `synchronous` for `durability`, the checkpoint size and WAL limit.
    package static func pragmas(for durability: Durability) -> String {
        "PRAGMA synchronous=\(durability.synchronousPragma); PRAGMA wal_autocheckpoint=\(walAutocheckpointPages); "
            + "PRAGMA journal_size_limit=\(journalSizeLimitBytes)"
    }

    package func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable) throws(SinkError) {
        try write(records, slots: slots, attachments: .none)
    }

    /// Marks this writer's open series closed (`series.open = 0`) after flushing them, in one
    /// transaction: the pipeline calls it when it stops cleanly (``SampleSink/finish()``). A
    /// crash skips it; the next writer closes what was left open when it starts a series for
    /// the same type, source and device (or continues it, docs/store.md "The writer").
    package func finish() throws(SinkError) -> Bool {
        guard let series, series.hasOpenSeries else { return false }
        let before = series.state
        do {
            try store.write { w in try series.closeAll(w) }
            return true
        } catch let e as StoreError {
            series.restore(before)
            throw SinkError(Self.kind(of: e), "closing the open quantity series of \(store.path): \(e)")
        } catch {
            series.restore(before)
            throw SinkError(.other, "closing the open quantity series of \(store.path): \(error)")
        }
    }

    /// The committed value of `key` in the store's state table.
    package func persistedState(forKey key: String) throws(SinkError) -> Data? {
        do { return try store.state(key) } catch let e as StoreError {
            throw SinkError(Self.kind(of: e), e.description)
        } catch {
            throw SinkError(.other, "\(error)")
        }
    }

    /// Writes the batch as ``write(_:slots:)`` does, and in the same transaction the records
    /// flagged ``SampleRecord/Flags/attached`` with their metadata (through the store's own
    /// sync-identifier upsert) and `attachments.state`.
    package func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable,
                      attachments: BatchAttachments) throws(SinkError) {
        let table = slots.snapshot()
        let before = series?.state
        do {
            try store.write { w in
                // Slot -> row id, resolved once per batch (arrays, not dictionaries).
                var typeIDs = [Int64](repeating: -1, count: table.types.count)
                var sourceIDs = [Int64](repeating: -1, count: table.sources.count)
                var deviceIDs = [Int64](repeating: -1, count: table.devices.count)
                let heartRateSlot = table.types.firstIndex(of: .heartRate).map { UInt16($0) }
                func ids(_ r: SampleRecord) throws -> (type: Int64, source: Int64, device: Int64?) {
                    let ts = Int(r.typeSlot), ss = Int(r.sourceSlot)
                    guard ts < typeIDs.count else { throw SinkError(.rejected, "record names type slot \(r.typeSlot), which was never registered") }
                    guard ss < sourceIDs.count else { throw SinkError(.rejected, "record names source slot \(r.sourceSlot), which was never registered") }
                    if typeIDs[ts] < 0 { typeIDs[ts] = try w.typeID(table.types[ts]) }
                    if sourceIDs[ss] < 0 { sourceIDs[ss] = try w.sourceID(table.sources[ss]) }
                    var device: Int64?
                    let ds = Int(r.deviceSlot)
                    if r.deviceSlot != SlotTable.noDevice && ds < deviceIDs.count {
                        if deviceIDs[ds] < 0 { deviceIDs[ds] = try w.deviceID(table.devices[ds]) }
                        device = deviceIDs[ds]
                    }
                    return (typeIDs[ts], sourceIDs[ss], device)
                }
                func contact(_ r: SampleRecord) -> SensorContact? {
                    guard r.typeSlot == heartRateSlot else { return nil }
                    return !r.flags.contains(.contactSupported) ? .notSupported
                        : r.flags.contains(.contactDetected) ? .detected : .notDetected
                }
                func rowFlags(_ r: SampleRecord) -> SampleRow.Flags {
                    var flags: SampleRow.Flags = []
                    if r.flags.contains(.payloadTruncated) { flags.insert(.payloadTruncated) }
                    else if r.flags.contains(.energySaturated) { flags.insert(.energySaturated) }
                    if r.flags.contains(.rrPrecededByGap) { flags.insert(.rrPrecededByGap) }
                    return flags
                }
                // The HRV counts that are an attached record's only extra (nil for any other).
                func hrvCounts(_ i: Int) -> HRVCounts? {
                    guard records[i].flags.contains(.attached), let a = attachments.samples[i], a.stateKey == nil, a.state == nil,
                          a.rrIntervals == nil, records[i].rrCount == 0 else { return nil }
                    return HRVCounts(onlyIn: a.metadata)
                }
                func withRR<T>(_ r: SampleRecord, _ body: (UnsafeBufferPointer<UInt16>) throws -> T) rethrows -> T {
                    try withUnsafeBytes(of: r.rr) { raw in
                        try body(UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt16.self), count: Int(r.rrCount)))
                    }
                }
                // Record -> the store's row; RR ticks are handed over in place.
                func bind(_ r: SampleRecord, _ binder: inout SampleRowBinder) throws {
                    let (type, source, device) = try ids(r)
                    let row = SampleRow(typeID: type, sourceID: source, deviceID: device, value: r.value, start: r.start, end: r.end,
                                        sensorLocation: r.heartRateSensorLocation, sensorContact: contact(r), flags: rowFlags(r))
                    withRR(r) { binder.bind(row, rrTicks: $0) }
                }
                // Every record without extras goes to its series (docs/store.md, "Quantity
                // series"): a strap's heart rate, energy, SDNN and RMSSD; so does an HRV window
                // whose only extra is its counts (``HRVCounts``: beats were corrected), which a
                // series quantity holds. Records with other extras (a pedometer's step intervals,
                // whose sync identifiers make a re-saved interval a duplicate, or a heart rate
                // whose RR list is longer than a record holds) keep a row of their own, through
                // the store's sync rules below.
                let seriesWriter = series
                func toSeries(_ i: Int) -> Bool {
                    seriesWriter != nil && (!records[i].flags.contains(.attached) || hrvCounts(i) != nil)
                }
                var fast = records
                var compacted: UnsafeMutableBufferPointer<SampleRecord>?
                defer { compacted?.deallocate() }
                if records.indices.contains(where: { records[$0].flags.contains(.attached) || toSeries($0) }) {
                    let c = UnsafeMutableBufferPointer<SampleRecord>.allocate(capacity: records.count)
                    var n = 0
                    for i in records.indices where !records[i].flags.contains(.attached) && !toSeries(i) { c[n] = records[i]; n += 1 }
                    compacted = c
                    fast = UnsafeBufferPointer(rebasing: c[0..<n])
                }
                let rows = fast
                try w.insertNew(count: rows.count) { i, binder in try bind(rows[i], &binder) }
                if let seriesWriter {
                    for i in records.indices where toSeries(i) {
                        let r = records[i]
                        let (type, source, device) = try ids(r)
                        try withRR(r) { rr in
                            try seriesWriter.append(w, key: SeriesWriter.Key(typeID: type, sourceID: source, deviceID: device),
                                                    style: table.types[Int(r.typeSlot)].aggregationStyle,
                                                    sensorLocation: r.heartRateSensorLocation, start: r.start, end: r.end,
                                                    value: r.value, contact: contact(r), flags: rowFlags(r), hrv: hrvCounts(i), rr: rr)
                        }
                    }
                    try seriesWriter.flush(w)
                }
                try writeAttached(records, table: table, attachments: attachments, with: w, skipping: toSeries)
            }
        } catch let e as SinkError {
            if let before { series?.restore(before) }
            throw e
        } catch let e as StoreError {
            if let before { series?.restore(before) }
            throw SinkError(Self.kind(of: e), e.description)
        } catch {
            if let before { series?.restore(before) }
            throw SinkError(.rejected, "\(error)")
        }
    }

    /// The side-channel part of a batch: attached records as `QuantitySample`s through the
    /// store's insert (sync-identifier upsert), then the newest state per key.
    private func writeAttached(_ records: UnsafeBufferPointer<SampleRecord>,
                               table: (types: [QuantityType], sources: [Source], devices: [Device]),
                               attachments: BatchAttachments, with w: StoreWriter, skipping stored: (Int) -> Bool) throws {
        var statements: StoreWriter.InsertStatements?
        for i in records.indices where records[i].flags.contains(.attached) && !stored(i) {
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
        switch e.writeFailure {
        case .diskFull: return .diskFull
        case .busy: return .busy
        case .io: return .io
        case .rejected: return .rejected
        case .other: return .other
        }
    }
}
