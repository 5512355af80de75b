import Foundation
import HealthGateTesting
import HealthModel
@testable import HealthStore
import Testing
@testable import Ingest

/// The ingest writer's quantity series (issue #12, docs/store.md "Quantity series"): strap
/// heart rate stored as series reads back exactly as when each reading is its own row.
@Suite struct SeriesStorageTests {
    static func tempPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("series-\(name)-\(UUID().uuidString)")
            .appendingPathComponent("health.sqlite").path
    }

    struct Stream {
        let slots = SlotTable()
        var batches: [[SampleRecord]] = []
        var start = Double.infinity, end = -Double.infinity
    }

    /// Random readings of two straps (two sources, overlapping in time) plus some step records:
    /// 1 Hz and 4 Hz stretches, duplicate receipt times, clock steps backwards, gaps longer than
    /// a series allows (a reconnect), sensor location changes, RR lists of 0–9, every flag.
    static func stream(seed: UInt64) throws -> Stream {
        var rng = SplitMix64(seed: seed)
        var s = Stream()
        let hr = try s.slots.slot(for: .heartRate)
        let steps = try s.slots.slot(for: .stepCount)
        let sources = [try s.slots.slot(for: Source(name: "HealthGate BLE", identifier: "org.healthgate.ble")),
                       try s.slots.slot(for: Source(name: "Other Gateway", identifier: "com.example.gw"))]
        let devices = [try s.slots.slot(for: Device(name: "Strap A", localIdentifier: "AA:01")),
                       try s.slots.slot(for: Device(name: "Strap B", localIdentifier: "BB:02"))]
        var clocks = [1_790_000_000.0, 1_790_000_000.0 + Double(rng.next() % 30)]
        var locations: [HeartRateSensorLocation?] = [.chest, nil]
        let n = 200 + Int(rng.next() % 800)
        var all: [SampleRecord] = []
        for _ in 0..<n {
            let k = Int(rng.next() % 2)
            switch rng.next() % 100 {
            case 0..<60: clocks[k] += 1
            case 60..<75: clocks[k] += 0.25
            case 75..<82: break                                              // duplicate receipt time
            case 82..<88: clocks[k] -= Double(1 + rng.next() % 5000) / 1000    // clock step backwards
            case 88..<92: clocks[k] += Double(61 + rng.next() % 600)           // reconnect
            case 92..<94: locations[k] = [.chest, .wrist, nil][Int(rng.next() % 3)]
            case 94..<97: clocks[k] += Double(rng.next() % 1000) / 1000 + 0.001  // sub-second at ms resolution
            default: clocks[k] += 59.9
            }
            let t = (clocks[k] * 1000).rounded() / 1000
            var flags: SampleRecord.Flags = []
            switch rng.next() % 3 {
            case 0: break
            case 1: flags.insert(.contactSupported)
            default: flags.formUnion([.contactSupported, .contactDetected])
            }
            if rng.next() % 10 == 0 { flags.insert(.rrPrecededByGap) }
            if rng.next() % 20 == 0 { flags.insert(.payloadTruncated) }
            var r = SampleRecord(typeSlot: hr, value: Double(40 + rng.next() % 160), start: t, end: t,
                                 sourceSlot: sources[k], deviceSlot: devices[k], flags: flags)
            r.heartRateSensorLocation = locations[k]
            for _ in 0..<Int(rng.next() % 10) { r.appendRR(UInt16(300 + rng.next() % 1200)) }
            all.append(r)
            s.start = min(s.start, t); s.end = max(s.end, t)
            if rng.next() % 15 == 0 {
                all.append(SampleRecord(typeSlot: steps, value: Double(rng.next() % 50), start: t - 10, end: t,
                                        sourceSlot: sources[k], deviceSlot: devices[k]))
            }
        }
        var i = 0
        while i < all.count {
            let size = 1 + Int(rng.next() % 40)
            s.batches.append(Array(all[i..<min(all.count, i + size)]))
            i += size
        }
        return s
    }

    /// What a sample says apart from its identity (UUID and series index).
    struct Content: Hashable {
        var type: String, value: Double, start: Double, end: Double, source: Source, device: Device?
        var metadata: Metadata, rr: RRIntervals?
        init(_ s: QuantitySample) {
            type = s.type.identifier; value = s.quantity.value
            start = s.startDate.timeIntervalSince1970; end = s.endDate.timeIntervalSince1970
            source = s.source; device = s.device; metadata = s.metadata; rr = s.rrIntervals
        }
    }

    static func write(_ stream: Stream, to path: String, storage: StoreSink.Storage) throws -> HealthStore {
        let store = try HealthStore(path: path)
        let sink = try StoreSink(store: store, storage: storage)
        for b in stream.batches {
            try b.withUnsafeBufferPointer { try sink.write($0, slots: stream.slots) }
        }
        return store
    }

    /// The same answer in the same order; among samples tied on the sort date the order may
    /// differ (save order vs series order), so ties compare as multisets. With a limit, the
    /// samples tied at the cut may differ too: there only the dates must agree.
    static func expectSame(_ a: [QuantitySample], _ b: [QuantitySample], _ q: SampleQuery, _ what: String) {
        #expect(a.count == b.count, "\(what): \(a.count) vs \(b.count)")
        guard a.count == b.count else { return }
        func date(_ s: QuantitySample) -> Double {
            q.sortBy == .startDate ? s.startDate.timeIntervalSince1970 : s.endDate.timeIntervalSince1970
        }
        #expect(a.map(date) == b.map(date), "\(what): order")
        let cut = q.limit != nil && a.count == q.limit ? a.last.map(date) : nil
        var x: [Double: [Content: Int]] = [:], y: [Double: [Content: Int]] = [:]
        for s in a where date(s) != cut { x[date(s), default: [:]][Content(s), default: 0] += 1 }
        for s in b where date(s) != cut { y[date(s), default: [:]][Content(s), default: 0] += 1 }
        #expect(x == y, "\(what): content")
    }

    @Test("random streams stored as series and as rows give identical samples, counts and statistics", arguments: 0..<12)
    func seriesEqualsRows(seed: Int) async throws {
        try await offThreadOneAtATime {
            let stream = try Self.stream(seed: UInt64(seed) &* 7919 &+ 17)
            let series = try Self.write(stream, to: Self.tempPath("s"), storage: .series)
            let rows = try Self.write(stream, to: Self.tempPath("r"), storage: .individual)
            #expect(try Self.scalar(series, "SELECT count(*) FROM samples WHERE type_id = (SELECT id FROM types WHERE identifier = 'heartRate')") == 0)
            #expect(try Self.scalar(series, "SELECT count(*) FROM series") > 0)
            var rng = SplitMix64(seed: UInt64(seed) + 99)
            var queries = [SampleQuery(), SampleQuery(type: .heartRate), SampleQuery(type: .heartRate, sortBy: .endDate, ascending: false),
                           SampleQuery(type: .heartRate, device: "Strap B"), SampleQuery(source: "Other Gateway", ascending: false),
                           SampleQuery(type: .heartRate, sensorLocation: .chest), .mostRecent(.heartRate)]
            for _ in 0..<25 {
                let span = stream.end - stream.start
                let a = stream.start - 5 + Double(rng.next() % UInt64(span + 10)), b = a + Double(rng.next() % 900)
                // Bounds exactly on a reading's time too (the instant edge rules).
                let lo = rng.next() % 3 == 0 ? a.rounded() : a
                queries.append(SampleQuery(type: rng.next() % 4 == 0 ? nil : .heartRate,
                                           start: rng.next() % 5 == 0 ? nil : Date(timeIntervalSince1970: lo),
                                           end: rng.next() % 5 == 0 ? nil : Date(timeIntervalSince1970: b),
                                           strictStartDate: rng.next() % 3 == 0, strictEndDate: rng.next() % 3 == 0,
                                           sortBy: rng.next() % 2 == 0 ? .startDate : .endDate, ascending: rng.next() % 2 == 0,
                                           limit: rng.next() % 3 == 0 ? Int(rng.next() % 50) : nil))
            }
            for q in queries {
                Self.expectSame(try series.samples(q), try rows.samples(q), q, "seed \(seed) \(q)")
                var unlimited = q
                unlimited.limit = nil
                #expect(try series.count(unlimited) == (try rows.count(unlimited)), "seed \(seed) count \(q)")
            }
            // Statistics (the bridge that decodes series) merge the two sources identically.
            let options: StatisticsOptions = [.discreteAverage, .discreteMin, .discreteMax, .mostRecent]
            for tz in ["UTC", "Europe/Berlin", "Pacific/Chatham"] {
                let q = StatisticsQuery(type: .heartRate, options: options)
                let a = try series.statisticsCollection(q, interval: try StatisticsInterval(parsing: "7min"), timeZone: TimeZone(identifier: tz)!)
                let b = try rows.statisticsCollection(q, interval: try StatisticsInterval(parsing: "7min"), timeZone: TimeZone(identifier: tz)!)
                #expect(a == b, "seed \(seed) \(tz)")
            }
            #expect(try series.statistics(StatisticsQuery(type: .heartRate, options: options.union(.separateBySource)))
                    == (try rows.statistics(StatisticsQuery(type: .heartRate, options: options.union(.separateBySource)))))
        }
    }

    static func scalar(_ store: HealthStore, _ sql: String) throws -> Int {
        try store.withConnection { db in
            let st = try db.prepare(sql, cached: false)
            _ = try st.step()
            let n = st.int(0)
            st.reset()
            return n
        }
    }

    @Test("chunks hold at most 300 quantities or 900 s, their aggregates are what their quantities give, a 60 s silence starts a new series")
    func chunkBoundsAndAggregates() async throws {
        try await offThread {
            let stream = try Self.stream(seed: 4242)
            let store = try Self.write(stream, to: Self.tempPath("c"), storage: .series)
            let chunks = try store.withConnection { db -> [(series: Int64, count: Int, span: Double, agg: [Double?], data: [UInt8], first: Int)] in
                let st = try db.prepare("""
                    SELECT series_id, count, "end" - start, sum, min, max, weighted, weight, first, last, recent, recent_start,
                           recent_end, start, "end", data, first_index FROM series_chunks ORDER BY series_id, seq
                    """, cached: false)
                var out: [(Int64, Int, Double, [Double?], [UInt8], Int)] = []
                while try st.step() {
                    out.append((st.int64(0), st.int(1), st.double(2), (3...14).map { st.optionalDouble(Int32($0)) },
                                [UInt8](st.data(15) ?? Data()), st.int(16)))
                }
                return out
            }
            #expect(!chunks.isEmpty)
            var next: [Int64: Int] = [:]
            for c in chunks {
                #expect(c.count >= 1 && c.count <= SeriesWriter.chunkQuantities && SeriesWriter.chunkQuantities == 300)
                #expect(c.span <= SeriesWriter.chunkSpan && SeriesWriter.chunkSpan == 900)
                let q = try SeriesCodec.decode(c.data)
                #expect(q.count == c.count)
                #expect(c.first == next[c.series, default: 0], "chunks continue each other's indices")
                next[c.series] = c.first + c.count
                // Heart rate is temporally weighted: an instant weighs 1 s.
                let values = q.map(\.value)
                let recent = q.indices.max { (q[$0].end, q[$0].start, $0) < (q[$1].end, q[$1].start, $1) }!
                let expected: [Double?] = [values.reduce(0, +), values.min(), values.max(), values.reduce(0, +), Double(q.count),
                                           values.first, values.last, q[recent].value, q[recent].start, q[recent].end,
                                           q.map(\.start).min(), q.map(\.end).max()]
                #expect(c.agg == expected)
            }
            // Within a series, no reading starts more than 60 s after the latest end before it.
            let series = try store.samples(SampleQuery(type: .heartRate)).filter { $0.seriesIndex != nil }
            for (_, quantities) in Dictionary(grouping: series, by: \.uuid) {
                let ordered = quantities.sorted { $0.seriesIndex! < $1.seriesIndex! }
                #expect(ordered.map(\.seriesIndex!) == Array(ordered.first!.seriesIndex!..<(ordered.first!.seriesIndex! + ordered.count)))
                var latest = -Double.infinity
                for q in ordered {
                    if latest > -.infinity { #expect(q.startDate.timeIntervalSince1970 <= latest + 60) }
                    latest = max(latest, q.endDate.timeIntervalSince1970)
                }
                #expect(Set(ordered.map(\.source)).count == 1 && Set(ordered.map(\.device)).count == 1)
                #expect(Set(ordered.map(\.metadata.heartRateSensorLocation)).count == 1)
            }
            // Only the newest series of each strap is still open, per type (steps are series too).
            #expect(try Self.scalar(store, "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM series WHERE open = 1 GROUP BY type_id)") <= 2)
            #expect(try Self.scalar(store, "SELECT count(*) FROM series WHERE open = 1 AND type_id = (SELECT id FROM types WHERE identifier = 'heartRate')") <= 2)
        }
    }

    @Test("every batch's commit holds every reading so far: a second connection reads them after each batch, the open chunk rewritten in place")
    func openChunkIsDurableAtEachCommit() async throws {
        try await offThread {
            let path = Self.tempPath("d")
            let store = try HealthStore(path: path)
            let slots = SlotTable()
            let hr = try slots.slot(for: .heartRate)
            let src = try slots.slot(for: Source(name: "HealthGate BLE", identifier: "org.healthgate.ble"))
            let dev = try slots.slot(for: Device(name: "Strap", localIdentifier: "AA:01"))
            let sink = try StoreSink(store: store)
            let reader = try HealthStore(path: path, mode: .readOnly)
            var written = 0
            for batch in 0..<110 {
                var recs: [SampleRecord] = []
                for k in 0..<3 {
                    let t: Double = 1_790_000_000 + Double(batch * 3 + k)
                    recs.append(SampleRecord(typeSlot: hr, value: Double(60 + k), start: t, end: t, sourceSlot: src, deviceSlot: dev))
                }
                try recs.withUnsafeBufferPointer { try sink.write($0, slots: slots) }
                written += 3
                #expect(try reader.count(SampleQuery(type: .heartRate)) == written)
            }
            // 330 readings at 1 Hz: a chunk of 300 (the quantity bound comes before the 900 s
            // one), then the open chunk of 30, in one series.
            #expect(try Self.scalar(store, "SELECT count(*) FROM series") == 1)
            #expect(try Self.scalar(store, "SELECT count(*) FROM series_chunks") == 2)
            #expect(try Self.scalar(store, "SELECT count FROM series_chunks ORDER BY seq LIMIT 1") == 300)
            #expect(try Self.scalar(store, "SELECT sum(count) FROM series_chunks") == 330)
        }
    }

    /// A device's silence, not a type's, ends its series: an HRV value every 60–180 s (the
    /// windows between were stored elsewhere, or were refused) stays in one series while the
    /// strap's heart rate keeps coming, and both start a new series after the strap was silent
    /// for more than 60 s (a reconnect) — at exactly 60 s it is still the same stretch. A clock
    /// step back does not end it. Before 2026-11-29 every sparse value opened a series (and a
    /// chunk row) of its own: 310 series a day for each HRV type.
    @Test("a device's silence ends its series, not a sparse type's: HRV windows share one series while heart rate comes")
    func sparseTypesShareTheDevicesStretch() async throws {
        try await offThread {
            let store = try HealthStore(path: Self.tempPath("sparse"))
            let slots = SlotTable()
            let hr = try slots.slot(for: .heartRate), sdnn = try slots.slot(for: .heartRateVariabilitySDNN)
            let src = try slots.slot(for: Source(name: "HealthGate BLE", identifier: "org.healthgate.ble"))
            let dev = try slots.slot(for: Device(name: "Strap", localIdentifier: "AA:01"))
            let other = try slots.slot(for: Device(name: "Strap B", localIdentifier: "BB:02"))
            let sink = try StoreSink(store: store)
            let t0: Double = 1_790_000_000
            // (heart-rate times, HRV window ends every `every` s) per stretch; one batch a second.
            func feed(from: Int, to: Int, every: Int, device: UInt16 = dev) throws {
                for s in from..<to {
                    let t = t0 + Double(s)
                    var recs = [SampleRecord(typeSlot: hr, value: 70, start: t, end: t, sourceSlot: src, deviceSlot: device)]
                    if (s - from) % every == every - 1 {
                        recs.append(SampleRecord(typeSlot: sdnn, value: 40, start: t - 60, end: t, sourceSlot: src, deviceSlot: device))
                    }
                    try recs.withUnsafeBufferPointer { try sink.write($0, slots: slots) }
                }
            }
            try feed(from: 0, to: 1_000, every: 150)          // HRV 150 s apart: 6 values
            try feed(from: 1_059, to: 1_500, every: 70)       // a silence of exactly 60 s: the same stretch
            // A clock step back of 30 s, then on.
            try feed(from: 1_470, to: 1_700, every: 100)
            try feed(from: 1_761, to: 2_000, every: 100)      // 61 s of silence: a new stretch
            try feed(from: 0, to: 200, every: 100, device: other)   // another strap's stretch is its own
            let perType = try store.withConnection { db -> [String: [Int]] in
                let st = try db.prepare("SELECT t.identifier, \(SeriesTotalsSQL.count("s")) FROM series s JOIN types t ON t.id = s.type_id JOIN devices d ON d.id = s.device_id WHERE d.local_identifier = 'AA:01' ORDER BY s.id", cached: false)
                var out: [String: [Int]] = [:]
                while try st.step() { out[st.string(0)!, default: []].append(st.int(1)) }
                return out
            }
            #expect(perType["heartRate"] == [1_000 + 441 + 230, 239])
            #expect(perType["heartRateVariabilitySDNN"] == [6 + 6 + 2, 2])
            #expect(try Self.scalar(store, "SELECT count(*) FROM series s JOIN devices d ON d.id = s.device_id WHERE d.local_identifier = 'BB:02'") == 2)
            #expect(try store.count(SampleQuery(type: .heartRateVariabilitySDNN)) == 14 + 2 + 2)
        }
    }

    /// A live HRV window with corrected beats carries its counts as metadata (the mapper's
    /// attachment). They fit a series quantity, so it is stored in its series like a window
    /// without corrections, reads back with the same metadata as a row of its own would, and
    /// export → import keeps it. Anything else attached (another key, a count past 24 bits, a
    /// sync identifier) keeps a row of its own. Before 2026-11-29 every corrected window was a
    /// row: about half the windows of a day of the size benchmark, 350 KB of 1.07 MB.
    @Test("an HRV window's counts go into its series quantity; other attachments keep their rows; both read back alike")
    func hrvCountsAreSeriesAttributes() async throws {
        try await offThread {
            let t0: Double = 1_790_000_000
            func write(_ storage: StoreSink.Storage) throws -> HealthStore {
                let store = try HealthStore(path: Self.tempPath("hrv-\(storage)"))
                let slots = SlotTable()
                let rmssd = try slots.slot(for: .heartRateVariabilityRMSSD)
                let src = try slots.slot(for: Source(name: "HealthGate BLE", identifier: "org.healthgate.ble"))
                let dev = try slots.slot(for: Device(name: "Strap", localIdentifier: "AA:01"))
                let sink = try StoreSink(store: store, storage: storage)
                let attachments: [Int: Metadata] = [
                    1: Metadata(user: [Metadata.hrvIntervalsKey: .number(71), Metadata.hrvCorrectedKey: .number(3)]),
                    2: Metadata(user: [Metadata.hrvIntervalsKey: .number(Double(HRVCounts.limit - 1)), Metadata.hrvCorrectedKey: .number(0)]),
                    3: Metadata(user: [Metadata.hrvIntervalsKey: .number(Double(HRVCounts.limit)), Metadata.hrvCorrectedKey: .number(1)]),
                    4: Metadata(user: [Metadata.hrvIntervalsKey: .number(70), Metadata.hrvCorrectedKey: .number(1), "note": .string("x")]),
                    5: Metadata(user: [Metadata.hrvIntervalsKey: .number(70.5), Metadata.hrvCorrectedKey: .number(1)]),
                    6: Metadata(syncIdentifier: "w6", syncVersion: 1, user: [Metadata.hrvIntervalsKey: .number(70), Metadata.hrvCorrectedKey: .number(1)]),
                    7: Metadata(user: [Metadata.hrvIntervalsKey: .number(72)]),
                ]
                var records: [SampleRecord] = []
                var batch = BatchAttachments()
                for k in 0..<9 {
                    var r = SampleRecord(typeSlot: rmssd, value: 20 + Double(k) / 8, start: t0 + Double(k) * 60, end: t0 + Double(k + 1) * 60,
                                         sourceSlot: src, deviceSlot: dev)
                    if let m = attachments[k] {
                        r.flags.insert(.attached)
                        batch.samples[k] = SampleAttachment(metadata: m)
                    }
                    records.append(r)
                }
                try records.withUnsafeBufferPointer { try sink.write($0, slots: slots, attachments: batch) }
                return store
            }
            let series = try write(.series), rows = try write(.individual)
            #expect(try Self.scalar(series, "SELECT count(*) FROM samples") == 5, "3 (too large), 4 (another key), 5 (not whole), 6 (sync identifier), 7 (one key)")
            #expect(try Self.scalar(series, "SELECT sum(\(SeriesTotalsSQL.count("s"))) FROM series s") == 4)
            #expect(try Self.scalar(rows, "SELECT count(*) FROM series") == 0)
            func view(_ store: HealthStore) throws -> [String] {
                try store.samples(SampleQuery(type: .heartRateVariabilityRMSSD)).map {
                    "\($0.startDate.timeIntervalSince1970) \($0.quantity.value) \($0.metadata.user.sorted { $0.key < $1.key }) \($0.metadata.syncIdentifier ?? "-")"
                }
            }
            #expect(try view(series) == view(rows))
            let stored = try series.samples(SampleQuery(type: .heartRateVariabilityRMSSD))
            #expect(stored[1].seriesIndex == 1 && stored[1].metadata.user == [Metadata.hrvIntervalsKey: .number(71), Metadata.hrvCorrectedKey: .number(3)])
            #expect(stored[0].seriesIndex == 0 && stored[0].metadata.user.isEmpty)

            // export -> import into a fresh store keeps the series with its counts.
            let copy = try HealthStore(path: Self.tempPath("hrv-copy"))
            _ = try copy.save(stored)
            #expect(try view(copy) == view(series))
            #expect(try Self.scalar(copy, "SELECT sum(count) FROM series") == 4)
            // A series line with one count of the two cannot be a series quantity: refused, as other metadata is.
            let q = stored[1]
            let half = try QuantitySample(uuid: q.uuid, type: q.type, quantity: q.quantity, start: q.startDate, end: q.endDate, source: q.source,
                                          device: q.device, metadata: Metadata(user: [Metadata.hrvIntervalsKey: .number(71)]), rrIntervals: nil,
                                          checkingPlausibility: false, seriesIndex: q.seriesIndex)
            #expect(throws: StoreError.self) { _ = try HealthStore(path: Self.tempPath("hrv-half")).save([half]) }
        }
    }

    @Test("a failed batch leaves the series as before it: the retried batch is stored once")
    func failedBatchRollsBackTheSeries() async throws {
        try await offThread {
            let store = try HealthStore(path: Self.tempPath("f"))
            let slots = SlotTable()
            let hr = try slots.slot(for: .heartRate)
            let src = try slots.slot(for: Source(name: "HealthGate BLE", identifier: "org.healthgate.ble"))
            let sink = try StoreSink(store: store)
            func reading(_ i: Int, _ value: Double, source: UInt16) -> SampleRecord {
                let t: Double = 1_790_000_000 + Double(i)
                return SampleRecord(typeSlot: hr, value: value, start: t, end: t, sourceSlot: source)
            }
            let good = (0..<5).map { reading($0, 70, source: src) }
            try good.withUnsafeBufferPointer { try sink.write($0, slots: slots) }
            // A reading naming an unregistered source fails the whole batch after the readings
            // before it were appended to the series.
            var bad = (5..<10).map { reading($0, 71, source: src) }
            bad.append(reading(10, 72, source: 999))
            #expect(throws: SinkError.self) { try bad.withUnsafeBufferPointer { try sink.write($0, slots: slots) } }
            #expect(try store.count(SampleQuery(type: .heartRate)) == 5)
            bad.removeLast()
            try bad.withUnsafeBufferPointer { try sink.write($0, slots: slots) }
            let all = try store.samples(SampleQuery(type: .heartRate))
            #expect(all.map(\.quantity.value) == [70, 70, 70, 70, 70, 71, 71, 71, 71, 71])
            #expect(all.map(\.seriesIndex) == (0..<10).map { $0 })
            #expect(Set(all.map(\.uuid)).count == 1)
        }
    }

    /// A clean stop (`systemctl stop`, Ctrl-C, the end of a replay) finishes the sink: the
    /// series it wrote are no longer marked open, so readers and `import` see them as complete.
    /// A crash skips this (``SeriesCrashTests``: the next writer deals with what is left open).
    @Test("a clean stop of the pipeline marks the writer's series closed, every reading kept")
    func cleanStopClosesTheSeries() async throws {
        let path = Self.tempPath("stop")
        let store = try HealthStore(path: path)
        let pipeline = try IngestPipeline(sink: try StoreSink(store: store))
        let ring = try pipeline.makeRing(name: "straps")
        let hr = try pipeline.slots.slot(for: .heartRate), energy = try pipeline.slots.slot(for: .activeEnergyBurned)
        let src = try pipeline.slots.slot(for: Source(name: "HealthGate BLE", identifier: "org.healthgate.ble"))
        let devices = try (0..<2).map { try pipeline.slots.slot(for: Device(name: "Strap \($0)", localIdentifier: "AA:0\($0)")) }
        pipeline.start()
        for k in 0..<50 {
            let t = 1_790_000_000 + Double(k)
            for d in devices {
                _ = ring.push(SampleRecord(typeSlot: hr, value: Double(60 + k % 20), start: t, end: t, sourceSlot: src, deviceSlot: d))
            }
            if k % 10 == 9 { _ = ring.push(SampleRecord(typeSlot: energy, value: 3, start: t - 10, end: t, sourceSlot: src, deviceSlot: devices[0])) }
        }
        let final = await offThread { pipeline.stop() }
        #expect(final.committed == 105)
        #expect(try Self.scalar(store, "SELECT count(*) FROM series") == 3)
        #expect(try Self.scalar(store, "SELECT count(*) FROM series WHERE open = 1") == 0)
        #expect(try store.count(SampleQuery(type: .heartRate)) == 100)
        #expect(try store.count(SampleQuery(type: .activeEnergyBurned)) == 5)
    }
}
