import Foundation
import HealthModel

extension StoreWriter {
    /// Saves quantities of one quantity series (all with the series' UUID and a
    /// ``HealthModel/QuantitySample/seriesIndex``), as `import` does with what `export` wrote
    /// (docs/store.md, "Quantity series"). A series not stored yet is created (closed, its
    /// first index the smallest given); for a stored one, indices it already holds are
    /// duplicates and every other index is added, wherever it lies. As HealthKit takes the
    /// quantities it is given, indices need not follow each other (a part of a series with some
    /// quantities left out, or two parts imported one after the other): each run of consecutive
    /// indices gets chunks of its own, which carry their first index, so every quantity keeps
    /// its index. Chunks are otherwise cut as the writer cuts them (``SeriesWriter``).
    /// - Throws: ``StoreError/invalidSeries(_:)`` when the quantities disagree on the series'
    ///   type, source, device or sensor location, carry metadata a series quantity cannot hold,
    ///   or the UUID is an individually stored sample's.
    package func insertSeries(_ quantities: [QuantitySample], chunkQuantities: Int = SeriesWriter.chunkQuantities,
                              chunkSpan: Double = SeriesWriter.chunkSpan) throws -> SaveSummary {
        var summary = SaveSummary()
        guard let head = quantities.first else { return summary }
        let uuid = head.uuid
        let location = head.metadata.heartRateSensorLocation
        for q in quantities {
            guard q.uuid == uuid, q.seriesIndex != nil else {
                throw StoreError.invalidSeries("insertSeries got quantities of more than one series")
            }
            guard q.type == head.type, q.source == head.source, q.device == head.device,
                  q.metadata.heartRateSensorLocation == location else {
                throw StoreError.invalidSeries(
                    "the quantities of series \(uuid) disagree on its type, source, device or sensor location (index \(q.seriesIndex!) differs from index \(head.seriesIndex!)); a series has one of each: fix the file or drop the \"series\" key to store them as separate samples with their own UUIDs")
            }
            var m = q.metadata
            m.heartRateSensorLocation = nil
            m.sensorContact = nil
            m.user[Metadata.payloadTruncatedKey] = nil
            m.user[Metadata.energySaturatedKey] = nil
            let hrv = q.metadata.user[Metadata.hrvIntervalsKey] != nil || q.metadata.user[Metadata.hrvCorrectedKey] != nil
            m.user[Metadata.hrvIntervalsKey] = nil
            m.user[Metadata.hrvCorrectedKey] = nil
            let truncated = q.metadata.user[Metadata.payloadTruncatedKey], saturated = q.metadata.user[Metadata.energySaturatedKey]
            guard m == Metadata(), truncated == nil || truncated == .number(1), saturated == nil || saturated == .number(1),
                  !hrv || HRVCounts(user: q.metadata.user) != nil else {
                throw StoreError.invalidSeries(
                    "quantity \(q.seriesIndex!) of series \(uuid) carries metadata a series quantity cannot hold (only sensor location, sensor contact, \(Metadata.payloadTruncatedKey) and \(Metadata.energySaturatedKey) of 1, and \(Metadata.hrvIntervalsKey) with \(Metadata.hrvCorrectedKey) as whole numbers from 0 to \(HRVCounts.limit - 1), both or neither); drop the \"series\" key and give it a UUID of its own to keep it as a separate sample")
            }
        }
        let db = connection
        let clash = try db.prepare("SELECT 1 FROM samples WHERE uuid = ?")
        clash.bind(1, uuid)
        if try clash.step() {
            clash.reset()
            throw StoreError.invalidSeries("\(uuid) is already an individually stored sample, so it cannot also name a series; drop the \"series\" key or give the series another UUID")
        }
        let typeID = try typeID(head.type), sourceID = try sourceID(head.source)
        let deviceID = try head.device.map { try self.deviceID($0) }

        // What is stored of this series already: its row, and the index runs its chunks hold.
        var seriesID: Int64?
        var firstIndex = 0, chunkSeq = 0, count = 0
        var start = Double.infinity, end = -Double.infinity
        var stored: [Range<Int>] = []
        let find = try db.prepare("""
            SELECT id, type_id, source_id, device_id, sensor_location, first_index, \(SeriesTotalsSQL.count("series")),
                   start, \(SeriesTotalsSQL.end("series")),
                   (SELECT coalesce(max(seq), -1) + 1 FROM series_chunks WHERE series_id = series.id), open
            FROM series WHERE uuid = ?
            """)
        find.bind(1, uuid)
        var open = false
        if try find.step() {
            defer { find.reset() }
            let storedDevice: Int64? = find.isNull(3) ? nil : find.int64(3)
            let storedLocation: Int? = find.optionalInt(4)
            guard find.int64(1) == typeID, find.int64(2) == sourceID, storedDevice == deviceID,
                  storedLocation == location?.rawValue else {
                throw StoreError.invalidSeries("series \(uuid) is stored with another type, source, device or sensor location than these quantities; a series has one of each: fix the file or give the series another UUID")
            }
            seriesID = find.int64(0)
            firstIndex = find.int(5); count = find.int(6)
            start = find.double(7); end = find.double(8)
            chunkSeq = find.int(9)
            open = find.int(10) != 0
        }
        if let seriesID {
            let runs = try db.prepare("SELECT first_index, count FROM series_chunks WHERE series_id = ? ORDER BY first_index")
            runs.bind(1, seriesID)
            while try runs.step() { stored.append(runs.int(0)..<(runs.int(0) + runs.int(1))) }
        }

        // In index order, each index once; what the series holds already is a duplicate.
        var byIndex: [Int: QuantitySample] = [:]
        for q in quantities {
            if byIndex[q.seriesIndex!] == nil { byIndex[q.seriesIndex!] = q } else { summary.duplicates += 1 }
        }
        var fresh: [QuantitySample] = []
        var run = 0   // the first stored run that may still hold an index (both ascend)
        for i in byIndex.keys.sorted() {
            while run < stored.count, stored[run].upperBound <= i { run += 1 }
            if run < stored.count, stored[run].contains(i) {
                summary.duplicates += 1
            } else {
                fresh.append(byIndex[i]!)
            }
        }
        guard let lowest = fresh.first?.seriesIndex else { return summary }
        if open {
            // A series its writer may still append to (`run`) numbers its next quantity by its
            // count: only the quantities that continue it in order can be added.
            for (k, q) in fresh.enumerated() where q.seriesIndex! != firstIndex + count + k {
                throw StoreError.invalidSeries("series \(uuid) is still open for its writer (healthgate run), which numbers its next quantity \(firstIndex + count); quantity \(q.seriesIndex!) does not continue it in order: import these once the series is closed, or drop the \"series\" key to store them as separate samples")
            }
        }
        firstIndex = seriesID == nil ? lowest : min(firstIndex, lowest)
        if seriesID == nil {
            let ins = try db.prepare("""
                INSERT INTO series(uuid, type_id, source_id, device_id, sensor_location, start, "end", count, first_index, open, change_seq)
                VALUES (?, ?, ?, ?, ?, 0, 0, 0, ?, 0, 0)
                """)
            ins.bind(1, uuid); ins.bind(2, typeID); ins.bind(3, sourceID); ins.bind(4, deviceID)
            ins.bind(5, location?.rawValue); ins.bind(6, firstIndex)
            try ins.run()
            seriesID = db.lastInsertRowID
        }
        let changeSeq = try reservePositions(count: 1)
        let style = head.type.aggregationStyle
        var chunk: [SeriesQuantity] = []
        var chunkFirst = lowest, lo = 0.0, hi = 0.0
        func seal() throws {
            guard !chunk.isEmpty else { return }
            try SeriesChunkSQL.write(db, seriesID: seriesID!, seq: chunkSeq, firstIndex: chunkFirst, quantities: chunk,
                                     style: style, changeSeq: changeSeq)
            chunkSeq += 1
            chunk.removeAll(keepingCapacity: true)
        }
        for q in fresh {
            var flags: SampleRow.Flags = []
            if q.rrIntervals?.precededByGap == true { flags.insert(.rrPrecededByGap) }
            if q.metadata.user[Metadata.payloadTruncatedKey] != nil { flags.insert(.payloadTruncated) }
            if q.metadata.user[Metadata.energySaturatedKey] != nil { flags.insert(.energySaturated) }
            let x = SeriesQuantity(start: q.startDate.timeIntervalSince1970, end: q.endDate.timeIntervalSince1970,
                                   value: q.canonicalValue,
                                   attributes: SeriesAttributes.encode(contact: q.metadata.sensorContact, flags: flags,
                                                                       hrv: HRVCounts(user: q.metadata.user)),
                                   rr: q.rrIntervals?.ticks ?? [])
            // A chunk holds consecutive indices: an index gap starts the next one.
            if !chunk.isEmpty, chunk.count >= chunkQuantities || max(hi, x.end) - min(lo, x.start) > chunkSpan
                || q.seriesIndex! != chunkFirst + chunk.count { try seal() }
            if chunk.isEmpty { lo = x.start; hi = x.end; chunkFirst = q.seriesIndex! }
            chunk.append(x)
            lo = min(lo, x.start); hi = max(hi, x.end)
            start = min(start, x.start); end = max(end, x.end)
        }
        try seal()
        count += fresh.count
        // The row now holds every chunk's totals: an open series' pending chunks start after them.
        let up = try db.prepare("""
            UPDATE series SET start = ?, "end" = ?, count = ?, first_index = ?, change_seq = ?,
                              pending_seq = CASE WHEN pending_seq IS NULL THEN NULL ELSE ? END WHERE id = ?
            """)
        up.bind(1, start); up.bind(2, end); up.bind(3, count); up.bind(4, firstIndex); up.bind(5, changeSeq)
        up.bind(6, chunkSeq); up.bind(7, seriesID!)
        try up.run()
        summary.inserted += fresh.count
        return summary
    }
}
