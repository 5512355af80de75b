import HealthModel

/// Appends readings to quantity series (docs/store.md, "Quantity series"): one open series per
/// type, source and device, cut into chunks of at most ``maxChunkQuantities`` quantities or
/// ``maxChunkSpan`` seconds; a new series starts when nothing came from the device (any type of
/// the same source and device) for ``maxGap`` seconds (a reconnect, a strap taken off) or the
/// sensor location changes. A type the device sends seldom (an HRV value a minute, some of them
/// stored elsewhere) therefore stays in one series while the device keeps sending. A writer
/// continues the series an earlier writer left open (a crash, a restart) when its readings come
/// within ``maxGap`` of that series' end.
///
/// Durability: every ``flush(_:)`` (call it at the end of each batch, inside the batch's
/// transaction) rewrites the open chunk's row, so a commit holds every quantity appended before
/// it; nothing waits in memory for a chunk to fill. The series row is rewritten only when a
/// chunk fills, its start moves or the series closes: it holds the totals of the chunks before
/// `pending_seq`, and readers add the rest (``SeriesTotalsSQL``; docs/store.md, "Writes").
///
/// Used by one thread at a time (the ingest writer's); inside ``HealthStore/write(_:)`` only.
/// If the transaction fails, call ``restore(_:)`` with the ``state`` taken before it.
package final class SeriesWriter {
    /// What a series belongs to: row ids of its type, source and device.
    package struct Key: Hashable, Sendable {
        package var typeID: Int64
        package var sourceID: Int64
        package var deviceID: Int64?
        package init(typeID: Int64, sourceID: Int64, deviceID: Int64?) {
            self.typeID = typeID; self.sourceID = sourceID; self.deviceID = deviceID
        }
    }

    /// What a device is (its source and device row ids): the unit whose silence ends its series.
    struct DeviceKey: Hashable {
        var sourceID: Int64
        var deviceID: Int64?
    }

    /// A device's activity as this writer saw it: the latest end of any reading from it, and how
    /// many silences of more than ``maxGap`` it had (its series belong to one such stretch).
    struct Activity {
        var latestEnd: Double
        var stretch: Int
    }

    struct Open {
        var id: Int64
        /// The device's stretch of activity (``Activity/stretch``) this series belongs to.
        var stretch: Int
        var style: AggregationStyle
        var location: Int?
        var start: Double
        var end: Double
        var count: Int
        var chunkSeq: Int
        var chunk: [SeriesQuantity]
        /// Chunks filled since the last flush: (seq, first index, quantities).
        var sealed: [(seq: Int, first: Int, quantities: [SeriesQuantity])]
        var chunkStart: Double
        var chunkEnd: Double
        var dirty: Bool
        /// The `start` the series row holds (nil: not written yet). Rewritten only when it
        /// moves (a clock step back): `start` is indexed, and naming it in an UPDATE rewrites its
        /// index entry (a page per commit).
        var storedStart: Double? = nil
        /// The `pending_seq` the series row holds (nil: not written by this writer): its totals
        /// cover the chunks before it. Rewritten when it is not the open chunk's seq.
        var storedPending: Int? = nil
        /// The latest end of the chunks before the open one (−∞: none).
        var sealedEnd = -Double.infinity
        /// Readings appended since the last flush (the newest ones of `sealed` + `chunk`).
        var unflushed = 0
    }

    /// The open series, as of the last commit (a value: copy it before a batch).
    package struct State {
        var open: [Key: Open] = [:]
        /// Every device this writer appended for.
        var devices: [DeviceKey: Activity] = [:]
        /// Keys whose series left open by an earlier writer were looked for (``resume``).
        var asked: Set<Key> = []
    }

    /// Most quantities in one chunk.
    package let maxChunkQuantities: Int
    /// Longest span of one chunk, seconds (latest end − earliest start).
    package let maxChunkSpan: Double
    /// A reading that starts more than this many seconds after the series' latest end starts a
    /// new series.
    package let maxGap: Double

    package private(set) var state = State()

    /// Whether a series is open (appended to and not closed yet).
    package var hasOpenSeries: Bool { !state.open.isEmpty }

    /// The store's chunk bound in quantities (docs/store.md, "Chunk size"): five minutes of a
    /// strap at 1 Hz; with RR intervals about 1.5 KB, which a 4 KiB leaf holds.
    package static let chunkQuantities = 300
    /// The store's chunk bound in seconds (latest end − earliest start): a 15-minute rollup
    /// slot, so sparse readings (an SDNN a minute, energy every 10 s) share a chunk too.
    package static let chunkSpan: Double = 900

    /// A writer with the store's chunk bounds (docs/store.md): ``chunkQuantities`` quantities or
    /// ``chunkSpan`` seconds a chunk, a new series after 60 s without a reading.
    package init(maxChunkQuantities: Int = SeriesWriter.chunkQuantities, maxChunkSpan: Double = SeriesWriter.chunkSpan,
                 maxGap: Double = 60) {
        precondition(maxChunkQuantities > 0 && maxChunkSpan >= 0 && maxGap >= 0)
        self.maxChunkQuantities = maxChunkQuantities
        self.maxChunkSpan = maxChunkSpan
        self.maxGap = maxGap
    }

    /// Puts back the open series as they were before a failed transaction.
    package func restore(_ s: State) { state = s }

    /// Appends one reading to the open series of `key` (opening one when needed), inside `w`'s
    /// transaction. `rr` are its RR intervals (1/1024 s ticks, oldest first); `hrv`, an HRV value's window counts.
    package func append(_ w: StoreWriter, key: Key, style: AggregationStyle, sensorLocation: HeartRateSensorLocation?,
                        start: Double, end: Double, value: Double, contact: SensorContact?, flags: SampleRow.Flags,
                        hrv: HRVCounts? = nil, rr: UnsafeBufferPointer<UInt16>) throws {
        let q = SeriesQuantity(start: start, end: end, value: value,
                               attributes: SeriesAttributes.encode(contact: contact, flags: flags, hrv: hrv), rr: Array(rr))
        let location = sensorLocation?.rawValue
        // The device's stretch: a reading that starts more than maxGap after the latest end of
        // anything from the device begins a new one (a clock stepped back does not).
        let device = DeviceKey(sourceID: key.sourceID, deviceID: key.deviceID)
        var activity = state.devices[device] ?? Activity(latestEnd: end, stretch: 0)
        if start > activity.latestEnd + maxGap { activity.stretch += 1 }
        activity.latestEnd = Swift.max(activity.latestEnd, end)
        state.devices[device] = activity
        var candidate: Open?
        if let open = state.open[key] {
            if open.location == location && open.stretch == activity.stretch { candidate = open }
        } else if var resumed = try resume(w, key: key, style: style) {
            // Left open by an earlier writer: continued when this reading comes within maxGap of its end.
            resumed.stretch = activity.stretch
            if resumed.location == location && !(start > resumed.end + maxGap) { candidate = resumed }
        }
        var s: Open
        if let candidate {
            s = candidate
        } else {
            if let old = state.open[key] { try close(w, old, key: key) }
            s = try create(w, key: key, style: style, location: location, stretch: activity.stretch, uuid: w.store.nextUUIDWords())
        }
        place(q, in: &s)
        state.open[key] = s
    }

    /// Adds `q` to `s`'s open chunk, sealing the chunk first when `q` would overfill it.
    private func place(_ q: SeriesQuantity, in s: inout Open) {
        if !s.chunk.isEmpty, s.chunk.count >= maxChunkQuantities
            || Swift.max(s.chunkEnd, q.end) - Swift.min(s.chunkStart, q.start) > maxChunkSpan {
            s.sealed.append((s.chunkSeq, s.count - s.chunk.count, s.chunk))
            s.sealedEnd = Swift.max(s.sealedEnd, s.chunkEnd)
            s.chunkSeq += 1
            s.chunk.removeAll(keepingCapacity: true)
        }
        if s.chunk.isEmpty { s.chunkStart = q.start; s.chunkEnd = q.end }
        s.chunk.append(q)
        s.chunkStart = Swift.min(s.chunkStart, q.start)
        s.chunkEnd = Swift.max(s.chunkEnd, q.end)
        s.start = s.count == 0 ? q.start : Swift.min(s.start, q.start)
        s.end = s.count == 0 ? q.end : Swift.max(s.end, q.end)
        s.count += 1
        s.unflushed += 1
        s.dirty = true
    }

    /// Writes every series that grew since the last flush: its chunks written since (the open
    /// one an upsert) with the next change-feed position, and its row when a chunk filled. Call
    /// once per batch, inside its transaction.
    package func flush(_ w: StoreWriter) throws {
        let dirty = state.open.filter { $0.value.dirty }
        guard !dirty.isEmpty else { return }
        var seq = try w.reservePositions(count: dirty.count)
        // In a fixed order, so change positions follow the series' age.
        for (key, s) in dirty.sorted(by: { $0.value.id < $1.value.id }) {
            state.open[key] = try write(w, s, key: key, changeSeq: seq)
            seq += 1
            state.open[key]?.dirty = false
            state.open[key]?.sealed.removeAll()
            state.open[key]?.unflushed = 0
        }
    }

    /// Flushes and marks every open series closed (the writer stops).
    package func closeAll(_ w: StoreWriter) throws {
        try flush(w)
        for (key, s) in state.open { try close(w, s, key: key) }
        state.open.removeAll()
    }

    /// Writes the chunks written since the last flush, and the series row when a chunk filled
    /// (or its start moved, or it is new). When the row is gone (someone deleted the open
    /// series), the readings not yet written start a new series under a new UUID: a delete
    /// removes what was stored, not what arrives after it.
    private func write(_ w: StoreWriter, _ s: Open, key: Key, changeSeq: Int64) throws -> Open {
        let db = w.connection
        var s = s
        let exists = try db.prepare("SELECT 1 FROM series WHERE id = ?")
        exists.bind(1, s.id)
        let found = try exists.step()
        exists.reset()
        if !found {
            // Only the readings appended since the last flush (the rest was deleted with it).
            let pending = (s.sealed.flatMap(\.quantities) + s.chunk).suffix(s.unflushed)
            var fresh = try create(w, key: key, style: s.style, location: s.location, stretch: s.stretch, uuid: w.store.nextUUIDWords())
            for q in pending { place(q, in: &fresh) }
            s = fresh
        }
        if s.storedStart != s.start {
            let moved = try db.prepare("UPDATE series SET start = ? WHERE id = ?")
            moved.bind(1, s.start); moved.bind(2, s.id)
            try moved.run()
            s.storedStart = s.start
        }
        if s.storedPending != s.chunkSeq {
            // The totals of the chunks before the open one; the open chunk's are read from it.
            // (`change_seq` stays: readers take an open series' position from its open chunk, and
            // naming the indexed column would rewrite its index entry.) With no chunk before the
            // open one, the row's `end` is the series' start, which no quantity's end precedes.
            let sealedCount = s.count - s.chunk.count
            let up = try db.prepare("UPDATE series SET \"end\" = ?, count = ?, pending_seq = ? WHERE id = ?")
            up.bind(1, sealedCount > 0 ? s.sealedEnd : s.start); up.bind(2, sealedCount); up.bind(3, s.chunkSeq); up.bind(4, s.id)
            try up.run()
            s.storedPending = s.chunkSeq
        }
        for c in s.sealed {
            try SeriesChunkSQL.write(db, seriesID: s.id, seq: c.seq, firstIndex: c.first, quantities: c.quantities,
                                     style: s.style, changeSeq: changeSeq)
        }
        if !s.chunk.isEmpty {
            try SeriesChunkSQL.write(db, seriesID: s.id, seq: s.chunkSeq, firstIndex: s.count - s.chunk.count,
                                     quantities: s.chunk, style: s.style, changeSeq: changeSeq)
        }
        return s
    }

    private func close(_ w: StoreWriter, _ s: Open, key: Key) throws {
        var s = s
        if s.dirty { s = try write(w, s, key: key, changeSeq: try w.reservePositions(count: 1)) }
        let st = try w.connection.prepare("UPDATE series SET \(SeriesTotalsSQL.fold) WHERE id = ?")
        st.bind(1, s.id)
        try st.run()
    }

    /// The series a previous writer left open for `key` (it stopped without closing it: a crash,
    /// a restart), to continue it when the next reading comes within ``maxGap`` of its end. Its
    /// open chunk is left as it is; appends start the next chunk. Asked once per key.
    private func resume(_ w: StoreWriter, key: Key, style: AggregationStyle) throws -> Open? {
        guard !state.asked.contains(key) else { return nil }
        state.asked.insert(key)
        let st = try w.connection.prepare("""
            SELECT id, sensor_location, start, \(SeriesTotalsSQL.end("series")), \(SeriesTotalsSQL.count("series")), first_index,
                   (SELECT coalesce(max(seq), -1) + 1 FROM series_chunks WHERE series_id = series.id), pending_seq
            FROM series WHERE open = 1 AND type_id = ? AND source_id = ? AND device_id IS ? AND \(SeriesTotalsSQL.count("series")) > 0
            ORDER BY id DESC LIMIT 1
            """)
        st.bind(1, key.typeID); st.bind(2, key.sourceID); st.bind(3, key.deviceID)
        guard try st.step() else { return nil }
        defer { st.reset() }
        // Only a series this writer kind made (numbered from 0) continues; an imported part never is open.
        guard st.int(5) == 0 else { return nil }
        // Every stored chunk is before the next one this writer opens.
        return Open(id: st.int64(0), stretch: 0, style: style, location: st.optionalInt(1), start: st.double(2), end: st.double(3),
                    count: st.int(4), chunkSeq: st.int(6), chunk: [], sealed: [], chunkStart: 0, chunkEnd: 0, dirty: false,
                    storedStart: st.double(2), storedPending: st.optionalInt(7), sealedEnd: st.double(3))
    }

    /// A new series row (empty until its first flush), closing any other series still marked
    /// open for the same key (a writer that stopped without closing, e.g. a crash).
    private func create(_ w: StoreWriter, key: Key, style: AggregationStyle, location: Int?, stretch: Int,
                        uuid: (UInt64, UInt64)) throws -> Open {
        let db = w.connection
        let ins = try db.prepare("""
            INSERT INTO series(uuid, type_id, source_id, device_id, sensor_location, start, "end", count, first_index, open, change_seq)
            VALUES (?, ?, ?, ?, ?, 0, 0, 0, 0, 1, 0)
            """)
        var words = uuid
        withUnsafeBytes(of: &words) { ins.bind(1, bytes: $0) }
        ins.bind(2, key.typeID); ins.bind(3, key.sourceID); ins.bind(4, key.deviceID); ins.bind(5, location)
        try ins.run()
        let id = db.lastInsertRowID
        let stale = try db.prepare("""
            UPDATE series SET \(SeriesTotalsSQL.fold) WHERE open = 1 AND type_id = ? AND source_id = ? AND device_id IS ? AND id <> ?
            """)
        stale.bind(1, key.typeID); stale.bind(2, key.sourceID); stale.bind(3, key.deviceID); stale.bind(4, id)
        try stale.run()
        return Open(id: id, stretch: stretch, style: style, location: location, start: 0, end: 0, count: 0, chunkSeq: 0, chunk: [],
                    sealed: [], chunkStart: 0, chunkEnd: 0, dirty: true)
    }
}
