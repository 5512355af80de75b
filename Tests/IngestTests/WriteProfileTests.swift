import Foundation
import HealthGateTesting
import HealthModel
@testable import HealthStore
import Testing
@testable import Ingest

/// The SD-card write profile (issue #12, docs/store.md "Writes"): what `scripts/write-profile.sh`
/// divides the bytes written by, and what one ingest commit writes.
@Suite struct WriteProfileTests {
    static func tempPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("write-profile-\(name)-\(UUID().uuidString)")
            .appendingPathComponent("health.sqlite").path
    }

    @Test("every write transaction of the process is counted, explicit or single-statement")
    func commitsAreCounted() throws {
        let path = Self.tempPath("count")
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try HealthStore(path: path)
        let before = HealthStore.processCommits
        for k in 0..<3 {
            _ = try store.save([try QuantitySample(type: .heartRate, quantity: Quantity(Double(60 + k), .countPerMinute),
                                                   start: Date(timeIntervalSince1970: 1_790_000_000 + Double(k)),
                                                   end: Date(timeIntervalSince1970: 1_790_000_000 + Double(k)),
                                                   source: Source(name: "T", identifier: "t"))])
        }
        try store.write { w in try w.connection.execute("UPDATE state SET updated_at = 0 WHERE key = 'nothing'") }
        try store.withConnection { try $0.execute("INSERT INTO state(key, value, updated_at) VALUES ('k', NULL, 0)") }
        // Other suites commit in parallel: at least these five.
        #expect(HealthStore.processCommits >= before + 5)
    }

    /// The straps of `scripts/write-profile.sh` fed to the sink directly, one batch a second:
    /// 10 straps' heart rates with RR, one strap's energy, and an SDNN a minute.
    static func strapBatches(_ n: Int, slots: SlotTable) throws -> [[SampleRecord]] {
        let hr = try slots.slot(for: .heartRate), energy = try slots.slot(for: .activeEnergyBurned)
        let sdnn = try slots.slot(for: .heartRateVariabilitySDNN)
        let ble = try slots.slot(for: Source(name: "HealthGate BLE", identifier: "org.healthgate.ble"))
        let straps = try (0..<10).map { try slots.slot(for: Device(name: "Strap \($0)", localIdentifier: "AA:00:\($0)")) }
        return (0..<n).map { k in
            let t = 1_790_000_000 + Double(k)
            var records: [SampleRecord] = []
            for (j, d) in straps.enumerated() {
                var r = SampleRecord(typeSlot: hr, value: Double(60 + (k + j) % 30), start: t + Double(j) / 1000, end: t + Double(j) / 1000,
                                     sourceSlot: ble, deviceSlot: d, flags: [.contactSupported, .contactDetected])
                r.heartRateSensorLocation = .chest
                r.appendRR(UInt16(800 + k % 50))
                records.append(r)
            }
            records.append(SampleRecord(typeSlot: energy, value: 4, start: t - 10, end: t, sourceSlot: ble, deviceSlot: straps[k % 10]))
            if k % 60 == 59 {
                records.append(SampleRecord(typeSlot: sdnn, value: 42, start: t - 60, end: t, sourceSlot: ble, deviceSlot: straps[k % 10]))
            }
            return records
        }
    }

    @Test("a steady commit of strap readings writes a few pages, not a page of every table, index and series it touches")
    func pagesPerCommit() async throws {
        try await offThreadOneAtATime {
            let path = Self.tempPath("pages")
            defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
            let store = try HealthStore(path: path)
            let sink = try StoreSink(store: store)
            // No checkpoint: the WAL only grows, one frame (page + 24 bytes) per page a commit writes.
            try store.withConnection { try $0.execute("PRAGMA wal_autocheckpoint=0") }
            let slots = SlotTable()
            let batches = try Self.strapBatches(660, slots: slots)
            func write(_ b: [SampleRecord]) throws { try b.withUnsafeBufferPointer { try sink.write($0, slots: slots) } }
            // Ten minutes in, so chunks have been sealed and the tables have grown past a page.
            for b in batches.prefix(600) { try write(b) }
            let pageSize = try Self.scalarValue(store, "PRAGMA page_size")
            func walBytes() throws -> Int { (try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0 }
            let before = try walBytes()
            for b in batches.suffix(60) { try write(b) }
            let frames = Double(try walBytes() - before) / Double(pageSize + 24)
            let perCommit = frames / 60
            // Without migration 6 and the writer's changes (energy and SDNN as rows, chunks keyed
            // by series): 15.9 pages a commit ten minutes in, one leaf per series' open chunk and
            // one per samples index. Before schema 12 (the series row and its `series_change`
            // entry rewritten at every commit): 5.35; since: 3.37 (the open chunks' leaves and
            // `sqlite_sequence`).
            #expect(perCommit <= 4, "\(perCommit) pages per commit")
            #expect(try Self.scalarValue(store, "SELECT count(*) FROM samples") == 0)
        }
    }

    static func scalarValue(_ store: HealthStore, _ sql: String) throws -> Int {
        try store.withConnection { db in
            let st = try db.prepare(sql, cached: false)
            _ = try st.step()
            defer { st.reset() }
            return st.int(0)
        }
    }
}
