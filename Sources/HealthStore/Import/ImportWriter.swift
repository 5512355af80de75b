import CSQLite
import Foundation
import HealthModel

extension HealthStore {
    /// Saves `samples` in one transaction with exactly ``save(_:state:)``'s rules and outcomes —
    /// each sample's own UUID, a UUID already stored is a duplicate, sync identifiers replace
    /// lower versions (with a tombstone) and ignore equal or higher ones, in the order given — at
    /// the bulk writer's speed: runs of samples without a sync identifier go through the
    /// 50-row statements of ``StoreWriter/insertNew(count:_:)`` (their duplicates counted from
    /// SQLite's change count), a sample with one through the one-row path with its lookup.
    /// The type, source and device ids of consecutive samples with the same provenance are
    /// looked up once. `healthgate import` saves through this.
    /// - Throws: ``StoreError`` (nothing of the batch is kept), or
    ///   ``HealthModelError/unknownType(_:)`` for a type not in ``registry``.
    @discardableResult
    package func saveImported(_ samples: [QuantitySample]) throws -> SaveSummary {
        try write { w in try w.insertImported(samples) }
    }
}

extension StoreWriter {
    /// The work of ``HealthStore/saveImported(_:)`` inside an open transaction.
    package func insertImported(_ samples: [QuantitySample]) throws -> SaveSummary {
        if samples.contains(where: { $0.seriesIndex != nil }) {
            // Quantities of quantity series (export's lines with "series") are stored as their
            // series (docs/store.md, "Quantity series"); the other samples as before.
            var series: [UUID: [QuantitySample]] = [:]
            var order: [UUID] = []
            for s in samples where s.seriesIndex != nil {
                if series[s.uuid] == nil { order.append(s.uuid) }
                series[s.uuid, default: []].append(s)
            }
            var summary = try insertImported(samples.filter { $0.seriesIndex == nil })
            for u in order { summary.add(try insertSeries(series[u]!)) }
            return summary
        }
        var summary = SaveSummary()
        let db = connection
        let many = try db.prepare(SampleColumns.insertSQL(rows: Self.rowsPerStatement)).handle
        let single = try statements()
        var ids = ProvenanceIDs()
        var i = 0
        let n = samples.count
        while i < n {
            if samples[i].metadata.syncIdentifier != nil {
                summary.add(try insert(samples[i], using: single))
                i += 1
                continue
            }
            var run = 0
            while run < Self.rowsPerStatement, i + run < n, samples[i + run].metadata.syncIdentifier == nil { run += 1 }
            if run == Self.rowsPerStatement {
                for k in 0..<run { try bind(samples[i + k], into: many, row: Int32(k), ids: &ids) }
                let rc = sqlite3_step(many)
                sqlite3_reset(many)
                guard rc == SQLITE_DONE else { throw db.error(rc, "inserting a batch of samples") }
                let stored = db.changes
                summary.inserted += stored
                summary.duplicates += run - stored
            } else {
                for k in 0..<run {
                    try bind(samples[i + k], into: single.insert.handle, row: 0, ids: &ids)
                    try single.insert.run()
                    if db.changes == 0 { summary.duplicates += 1 } else { summary.inserted += 1 }
                }
            }
            i += run
        }
        return summary
    }

    /// The row ids of the last type, source and device bound, to skip their lookups when the
    /// next sample has the same.
    private struct ProvenanceIDs {
        var type: (QuantityType, Int64)?
        var source: (Source, Int64)?
        var device: (Device, Int64)?
    }

    /// Binds `s` as row `row` of `statement` (``SampleColumns``, as ``bindSample(_:_:)``).
    private func bind(_ s: QuantitySample, into statement: OpaquePointer, row: Int32, ids: inout ProvenanceIDs) throws {
        let typeID: Int64
        if let (t, id) = ids.type, t == s.type { typeID = id } else {
            typeID = try self.typeID(s.type)
            ids.type = (s.type, typeID)
        }
        let sourceID: Int64
        if let (src, id) = ids.source, src == s.source { sourceID = id } else {
            sourceID = try self.sourceID(s.source)
            ids.source = (s.source, sourceID)
        }
        var deviceID: Int64?
        if let d = s.device {
            if let (dev, id) = ids.device, dev == d { deviceID = id } else {
                let id = try self.deviceID(d)
                ids.device = (d, id)
                deviceID = id
            }
        }
        let m = s.metadata
        let r = SampleRow(typeID: typeID, sourceID: sourceID, deviceID: deviceID, value: s.canonicalValue,
                          start: s.startDate.timeIntervalSince1970, end: s.endDate.timeIntervalSince1970,
                          sensorLocation: m.heartRateSensorLocation, sensorContact: m.sensorContact,
                          motionContext: m.heartRateMotionContext,
                          flags: s.rrIntervals?.precededByGap == true ? .rrPrecededByGap : [])
        let ticks = s.rrIntervals?.ticks ?? []
        withUnsafeBytes(of: s.uuid.uuid) { u in
            ticks.withUnsafeBufferPointer { rr in
                SampleColumns.bind(statement, offset: row * SampleColumns.count, uuid: u, r, rrTicks: rr,
                                   metadata: MetadataColumn.encode(m), sync: nil)
            }
        }
    }
}
