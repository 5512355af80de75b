import Foundation
import HealthModel
import HealthStore
import Testing
@testable import Ingest
import HealthGateTesting

/// The bulk path into a real SQLite store: the rows `save` would write, v7 ids, disk full.
@Suite struct StoreSinkTests {
    func tempPath() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ingest-\(UUID().uuidString)")
        return dir.appendingPathComponent("health.sqlite").path
    }

    @Test func writesTheRowsSaveWouldWrite() async throws {
        let store = try HealthStore(path: tempPath())
        let slots = SlotTable()
        let hr = try slots.slot(for: .heartRate)
        let steps = try slots.slot(for: .stepCount)
        let src = try slots.slot(for: Source(name: "HealthGate BLE", identifier: "org.healthgate.ble"))
        let dev = try slots.slot(for: Device(name: "Strap", manufacturer: "Acme", localIdentifier: "ble:AA:BB:CC:DD:EE:FF"))
        let p = try IngestPipeline(sink: try StoreSink(store: store), slots: slots)
        let ring = try p.makeRing(name: "t")
        var a = SampleRecord(typeSlot: hr, value: 72, start: 1_790_000_000, end: 1_790_000_000, sourceSlot: src,
                             deviceSlot: dev, flags: [.contactSupported, .contactDetected])
        a.appendRR(1024); a.appendRR(900)
        a.flags.insert(.rrPrecededByGap)
        ring.push(a)
        ring.push(SampleRecord(typeSlot: steps, value: 12, start: 1_790_000_000, end: 1_790_000_060, sourceSlot: src))
        p.start()
        let final = await offThread { p.stop() }
        #expect(final.committed == 2)

        let hrs = try store.samples(SampleQuery(type: .heartRate))
        #expect(hrs.count == 1)
        let s = try #require(hrs.first)
        #expect(s.quantity.value == 72)
        #expect(s.startDate.timeIntervalSince1970 == 1_790_000_000)
        #expect(s.source.identifier == "org.healthgate.ble")
        #expect(s.device?.manufacturer == "Acme")
        #expect(s.metadata.sensorContact == .detected)
        #expect(s.rrIntervals == RRIntervals(ticks: [1024, 900], precededByGap: true))
        #expect(s.uuid.uuid.6 >> 4 == 7, "sample ids are UUID v7")
        let st = try store.samples(SampleQuery(type: .stepCount))
        #expect(st.map(\.quantity.value) == [12])
        #expect(st.first?.device == nil)
        #expect(st.first?.metadata.sensorContact == nil)
    }

    @Test func idsGrowWithinAndAcrossBatches() async throws {
        let store = try HealthStore(path: tempPath())
        let slots = SlotTable()
        let hr = try slots.slot(for: .heartRate)
        let src = try slots.slot(for: Source(name: "t"))
        // Rows of their own (heart rate goes to series by default; these ids are the rows').
        let sink = try StoreSink(store: store, storage: .individual)
        var recs = (0..<3_000).map { SampleRecord(typeSlot: hr, value: 60, start: Double($0), end: Double($0), sourceSlot: src) }
        try recs.withUnsafeMutableBufferPointer { try sink.write(UnsafeBufferPointer($0), slots: slots) }
        recs = Array(recs.prefix(10))
        try recs.withUnsafeMutableBufferPointer { try sink.write(UnsafeBufferPointer($0), slots: slots) }
        let ids = try store.withConnection { db -> [String] in
            let s = try db.prepare("SELECT hex(uuid) FROM samples ORDER BY id", cached: false)
            var out: [String] = []
            while try s.step() { out.append(s.string(0) ?? "") }
            return out
        }
        #expect(ids.count == 3_010)
        #expect(Set(ids).count == 3_010)
        // In insert (row id) order the v7 ids ascend, so the UNIQUE index only appends.
        #expect(ids == ids.sorted())
    }

    @Test func aFullDiskStallsTheWriterAndSpaceReturningResumesIt() async throws {
        let store = try HealthStore(path: tempPath())
        let slots = SlotTable()
        let hr = try slots.slot(for: .heartRate)
        let src = try slots.slot(for: Source(name: "t"))
        // Cap the file at its current size: the next insert needs a page and gets SQLITE_FULL.
        let pages = try store.withConnection { db -> Int64 in
            let s = try db.prepare("PRAGMA page_count", cached: false)
            _ = try s.step()
            return s.int64(0)
        }
        try store.withConnection { try $0.execute("PRAGMA max_page_count = \(pages)") }
        let p = try IngestPipeline(sink: try StoreSink(store: store), slots: slots, configuration: IngestConfiguration(
            batchSize: 200, flushInterval: .milliseconds(5), ringCapacity: 256, retryInterval: .milliseconds(5)))
        p.start()
        let ring = try p.makeRing(name: "t")
        for i in 0..<2_000 { ring.push(SampleRecord(typeSlot: hr, value: 60, start: Double(i), end: Double(i), sourceSlot: src, tag: UInt64(i))) }
        #expect(await eventually { p.stats.stalledBy != nil })
        let stalled = p.stats
        #expect(stalled.stalledBy?.contains("disk full") == true, "\(stalled)")
        #expect(stalled.dropped == 0)
        try store.withConnection { try $0.execute("PRAGMA max_page_count = 1073741823") }
        let final = await offThread { p.stop() }
        #expect(final.committed == 2_000 && final.dropped == 0 && final.stalledBy == nil)
        #expect(try store.count(SampleQuery(type: .heartRate)) == 2_000)
        let ok = try store.withConnection { db -> String? in
            let s = try db.prepare("PRAGMA integrity_check", cached: false)
            _ = try s.step()
            return s.string(0)
        }
        #expect(ok == "ok")
    }
}
