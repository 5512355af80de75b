import CSQLite
import Foundation
import HealthModel
import Testing
@testable import HealthStore

/// The store's bulk writer (`StoreWriter.insertNew`, what the ingest sink and the benchmark's
/// ceiling call) and `save` bind the same columns the same way: the same readings written
/// through each come back as equal samples (ids aside).
@Suite struct BulkWriterTests {
    let source = Source(name: "Strap", identifier: "ble:strap")
    let device = Device(name: "H10", manufacturer: "Polar", localIdentifier: "ble:AA")

    /// Readings covering every column: heart rate with contact, location, RR with a gap mark and
    /// the truncated flag; energy with the saturated flag and no device; a heart rate with
    /// motion context and both flags; a sample with an odd RR count.
    func readings() throws -> [(QuantitySample, SampleRow.Flags)] {
        let hr = QuantityType.heartRate
        func m(_ loc: HeartRateSensorLocation?, _ contact: SensorContact?, motion: HeartRateMotionContext? = nil, user: [String: MetadataValue] = [:]) -> Metadata {
            var x = Metadata(user: user)
            x.heartRateSensorLocation = loc; x.sensorContact = contact; x.heartRateMotionContext = motion
            return x
        }
        let items: [(QuantitySample, SampleRow.Flags)] = [
            (try sample(hr, 72, from: 1, device: device, metadata: m(.chest, .detected, user: [Metadata.payloadTruncatedKey: .number(1)]),
                        rr: RRIntervals(ticks: [800, 812, 799], precededByGap: true)), [.payloadTruncated, .rrPrecededByGap]),
            (try sample(.activeEnergyBurned, 12.5, from: 2, to: 62, metadata: m(nil, nil, user: [Metadata.energySaturatedKey: .number(1)])), [.energySaturated]),
            (try sample(hr, 180, from: 3, device: device,
                        metadata: m(.wrist, .notDetected, motion: .active,
                                    user: [Metadata.payloadTruncatedKey: .number(1), Metadata.energySaturatedKey: .number(1)]),
                        rr: RRIntervals(ticks: [333], precededByGap: false)), [.payloadTruncated, .energySaturated]),
            (try sample(.stepCount, 0, from: 4, to: 9, device: device), []),
        ]
        return items
    }

    @Test func theBulkWriterAndSaveStoreTheSameColumns() throws {
        let viaSave = try TempStore(), viaBulk = try TempStore()
        let items = try readings()
        try viaSave.store.save(items.map(\.0))
        try viaBulk.store.write { w in
            let rows = try items.map { s, flags in
                SampleRow(typeID: try w.typeID(s.type), sourceID: try w.sourceID(s.source),
                          deviceID: try s.device.map { try w.deviceID($0) }, value: s.canonicalValue,
                          start: s.startDate.timeIntervalSince1970, end: s.endDate.timeIntervalSince1970,
                          sensorLocation: s.metadata.heartRateSensorLocation, sensorContact: s.metadata.sensorContact,
                          motionContext: s.metadata.heartRateMotionContext, flags: flags)
            }
            try w.insertNew(count: rows.count) { i, binder in
                (items[i].0.rrIntervals?.ticks ?? []).withUnsafeBufferPointer { binder.bind(rows[i], rrTicks: $0) }
            }
        }
        let a = try viaSave.store.samples(SampleQuery())
        let b = try viaBulk.store.samples(SampleQuery())
        #expect(a.count == items.count && b.count == items.count)
        for (x, y) in zip(a, b) {
            #expect(y.uuid.uuid.6 >> 4 == 7, "bulk ids are v7")
            let sameButID = try QuantitySample(uuid: x.uuid, type: y.type, quantity: y.quantity, start: y.startDate, end: y.endDate,
                                               source: y.source, device: y.device, metadata: y.metadata, rrIntervals: y.rrIntervals)
            #expect(sameButID == x)
        }
    }

    @Test("more rows than one statement holds, and a remainder: all stored, ids ascending and unique")
    func statementsAndRemainder() throws {
        let s = try TempStore()
        let n = StoreWriter.rowsPerStatement * 3 + 7
        try s.store.write { w in
            let row = SampleRow(typeID: try w.typeID(.heartRate), sourceID: try w.sourceID(source), value: 60, start: 0, end: 0)
            try w.insertNew(count: n) { i, binder in
                var r = row
                r.value = Double(60 + i % 50); r.start = Double(i); r.end = Double(i)
                binder.bind(r)
            }
        }
        let ids = try s.store.withConnection { db -> [String] in
            let st = try db.prepare("SELECT hex(uuid) FROM samples ORDER BY id", cached: false)
            var out: [String] = []
            while try st.step() { out.append(st.string(0) ?? "") }
            return out
        }
        #expect(ids.count == n && Set(ids).count == n && ids == ids.sorted())
        let values = try s.store.samples(SampleQuery()).map(\.canonicalValue)
        #expect(values == (0..<n).map { Double(60 + $0 % 50) })
    }

    @Test("a row closure that throws rolls the whole transaction back")
    func throwingRowRollsBack() throws {
        struct Refused: Error {}
        let s = try TempStore()
        #expect(throws: Refused.self) {
            try s.store.write { w in
                let row = SampleRow(typeID: try w.typeID(.heartRate), sourceID: try w.sourceID(source), value: 60, start: 0, end: 0)
                try w.insertNew(count: 120) { i, binder in
                    if i == 110 { throw Refused() }
                    binder.bind(row)
                }
            }
        }
        #expect(try s.store.count(SampleQuery()) == 0)
    }

    /// An empty batch (a commit of a strap batch whose records all went to series, a state-only
    /// commit) must not make the bulk writer mark its rollups: that was a WAL page per commit
    /// for every caller (docs/store.md, "Writes").
    @Test("an empty call of the bulk writer dirties no page: the WAL does not grow")
    func emptyBatchWritesNothing() throws {
        let s = try TempStore()
        try s.store.withConnection { try $0.execute("PRAGMA wal_autocheckpoint=0") }
        let row = try s.store.write { w in
            SampleRow(typeID: try w.typeID(.heartRate), sourceID: try w.sourceID(source), value: 60, start: 0, end: 0)
        }
        try s.store.write { w in try w.insertNew(count: 1) { _, binder in binder.bind(row) } }
        func walBytes() throws -> Int { (try FileManager.default.attributesOfItem(atPath: s.path + "-wal")[.size] as? Int) ?? 0 }
        let before = try walBytes()
        #expect(before > 0)
        for _ in 0..<3 {
            try s.store.write { w in
                try w.insertNew(count: 0) { _, _ in Issue.record("no row to bind") }
                #expect(try w.insertNew(count: 0, makingIDs: false) { _, _ in } == 0)
            }
        }
        let after = try walBytes()
        #expect(after == before, "an empty batch wrote \(after - before) bytes of WAL")
        // The writer still works after empty calls.
        try s.store.write { w in try w.insertNew(count: 1) { _, binder in binder.bind(row) } }
        #expect(try s.store.count(SampleQuery()) == 2)
        #expect(try walBytes() > before)
    }

    /// The bulk writer's multi-row inserts fire the rollup trigger inside a longer transaction,
    /// so each keeps a statement journal; past SQLite's default 64 KiB that went to a temporary
    /// file, a fifth of a large import's time (docs/store.md, "Statement journals"). The setting
    /// that keeps it in memory applies only when it ran before the process's first open.
    @Test("statement journals stay in memory up to 4 MiB: the setting took before SQLite initialized")
    func statementJournalSpillIsSet() throws {
        let s = try TempStore()
        #expect(sqliteProcessConfiguration == SQLITE_OK, "SQLite refused the statement-journal setting (\(sqliteProcessConfiguration)): something opened a database before HealthStore did")
        #expect(statementJournalSpillBytes == 4 << 20)
        // Applying it again now is refused: SQLite is initialized, so the first call was the one that counted.
        #expect(healthgate_sqlite3_config_statement_journal_spill(1 << 20) == SQLITE_MISUSE)
        _ = try s.store.count(SampleQuery())
    }
}
