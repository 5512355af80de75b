import Foundation
import HealthModel

extension StoreWriter {
    /// `import`'s policy on top of the store's one bulk writer: saves `samples` in this
    /// transaction with exactly ``HealthStore/save(_:state:)``'s rules and outcomes — each
    /// sample's own UUID, a UUID already stored is a duplicate, sync identifiers replace lower
    /// versions (with a tombstone) and ignore equal or higher ones, in the order given.
    ///
    /// Runs of samples without a sync identifier go through ``insertNew(count:makingIDs:_:)``
    /// under their own UUIDs (its 50-row statements and its per-slot rollups; duplicates counted
    /// from SQLite's change count); a sample with one through ``insert(_:using:)`` with its
    /// lookup; quantities of quantity series (export's lines with "series") through
    /// ``insertSeries(_:chunkQuantities:chunkSpan:)``. The type, source and device ids of
    /// consecutive samples with the same provenance are looked up once.
    /// - Throws: ``StoreError`` (the caller's transaction then rolls back), or
    ///   ``HealthModelError/unknownType(_:)`` for a type not in ``registry``.
    package func insertImported(_ samples: [QuantitySample]) throws -> SaveSummary {
        if samples.contains(where: { $0.seriesIndex != nil }) {
            // Quantities of quantity series are stored as their series (docs/store.md,
            // "Quantity series"); the other samples as below.
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
        var single: InsertStatements?
        var ids = ProvenanceIDs()
        var i = 0
        let n = samples.count
        while i < n {
            if samples[i].metadata.syncIdentifier != nil {
                if single == nil { single = try statements() }
                summary.add(try insert(samples[i], using: single!))
                i += 1
                continue
            }
            var run = 0
            while i + run < n, samples[i + run].metadata.syncIdentifier == nil { run += 1 }
            let first = i
            let stored = try insertNew(count: run, makingIDs: false) { k, binder in
                let s = samples[first + k]
                let row = try self.row(s, ids: &ids)
                let metadata = MetadataColumn.encode(s.metadata)
                if let rr = s.rrIntervals {
                    rr.ticks.withUnsafeBufferPointer { binder.bind(row, uuid: s.uuid, rrTicks: $0, metadata: metadata) }
                } else {
                    binder.bind(row, uuid: s.uuid, rrTicks: UnsafeBufferPointer(start: nil, count: 0), metadata: metadata)
                }
            }
            summary.inserted += stored
            summary.duplicates += run - stored
            i += run
        }
        return summary
    }

    /// The row ids of the last type, source and device seen, to skip their lookups when the
    /// next sample has the same.
    private struct ProvenanceIDs {
        var type: (QuantityType, Int64)?
        var source: (Source, Int64)?
        var device: (Device, Int64)?
    }

    /// `s` as the bulk writer's row (as ``bindSample(_:_:)`` makes it).
    private func row(_ s: QuantitySample, ids: inout ProvenanceIDs) throws -> SampleRow {
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
        return SampleRow(typeID: typeID, sourceID: sourceID, deviceID: deviceID, value: s.canonicalValue,
                         start: s.startDate.timeIntervalSince1970, end: s.endDate.timeIntervalSince1970,
                         sensorLocation: m.heartRateSensorLocation, sensorContact: m.sensorContact,
                         motionContext: m.heartRateMotionContext,
                         flags: s.rrIntervals?.precededByGap == true ? .rrPrecededByGap : [])
    }
}
