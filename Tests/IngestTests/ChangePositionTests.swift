import Foundation
import HealthGateTesting
import HealthModel
@testable import HealthStore
import Testing
@testable import Ingest

/// The change feed's one sequence of positions when a series' growth writes no
/// `sqlite_sequence` (docs/store.md, "Writes"; `ChangePositions`): a strap commit reads the next
/// position instead of reserving it in the counter, so whatever inserts a sample row later —
/// in another process, in the same transaction, after the series was deleted — must still get a
/// position past it, or an anchored consumer would skip the sample.
@Suite struct ChangePositionTests {
    static let t0: Double = 1_790_000_000

    static func tempPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("positions-\(name)-\(UUID().uuidString)")
            .appendingPathComponent("health.sqlite").path
    }

    /// The samples' AUTOINCREMENT counter (nil: no row yet).
    static func counter(_ store: HealthStore) throws -> Int? {
        try store.withConnection { db in
            let st = try db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'samples'", cached: false)
            defer { st.reset() }
            return try st.step() ? st.int(0) : nil
        }
    }

    struct Straps {
        let slots = SlotTable()
        let hr: UInt16, source: UInt16, straps: [UInt16]
        let sink: StoreSink

        init(_ store: HealthStore) throws {
            let slots = self.slots
            hr = try slots.slot(for: .heartRate)
            source = try slots.slot(for: Source(name: "HealthGate BLE", identifier: "org.healthgate.ble"))
            straps = try (0..<3).map { try slots.slot(for: Device(name: "Strap \($0)", localIdentifier: "AA:00:0\($0)")) }
            sink = try StoreSink(store: store)
        }

        /// Seconds `range` of each strap's heart rate, one commit a second.
        func write(_ range: Range<Int>) throws {
            for s in range {
                let t = ChangePositionTests.t0 + Double(s)
                let b = straps.map { SampleRecord(typeSlot: hr, value: 70, start: t, end: t, sourceSlot: source, deviceSlot: $0) }
                try b.withUnsafeBufferPointer { try sink.write($0, slots: slots) }
            }
        }
    }

    static func reading(_ bpm: Double, at s: Double) throws -> QuantitySample {
        try QuantitySample(type: .heartRate, quantity: Quantity(bpm, .countPerMinute),
                           start: Date(timeIntervalSince1970: t0 + s), end: Date(timeIntervalSince1970: t0 + s),
                           source: Source(name: "Manual", identifier: "org.healthgate.manual"))
    }

    @Test("a strap commit writes no sqlite_sequence; a sample saved by another connection still comes after its growth")
    func seriesGrowthWritesNoCounter() async throws {
        try await offThreadOneAtATime {
            let path = Self.tempPath("grow")
            let store = try HealthStore(path: path)
            let straps = try Straps(store)
            try straps.write(0..<20)
            let counter = try Self.counter(store)
            try straps.write(20..<40)
            #expect(try Self.counter(store) == counter, "series growth must not write the samples' counter")
            let grown = try store.currentAnchor()
            #expect(grown.sampleID >= 40, "every commit's growth took positions: \(grown)")

            // `add` in another process: its sample's id must be past the positions the straps took.
            let other = try HealthStore(path: path)
            try other.save([try Self.reading(88, at: 50)])
            let added = try store.changes(types: [.heartRate], since: grown)
            #expect(added.samples.map(\.quantity.value) == [88], "the sample after the anchor: \(added.samples.count)")
            // And the straps' next growth comes after the sample.
            try straps.write(40..<41)
            let next = try store.changes(types: [.heartRate], since: added.anchor)
            // Each strap's open chunk again, whole (41 readings, one chunk each).
            #expect(next.samples.count == 3 * 41)
            #expect(!next.samples.contains { $0.seriesIndex == nil }, "the sample is not sent again")
            #expect(next.samples.contains { $0.seriesIndex == 40 })
            #expect(try store.changes(types: [.heartRate], since: next.anchor).samples.isEmpty)
        }
    }

    @Test("deleting the series that holds the newest positions hands none of them out again")
    func deletedSeriesPositionsAreNotReused() async throws {
        try await offThreadOneAtATime {
            let path = Self.tempPath("delete")
            let store = try HealthStore(path: path)
            let straps = try Straps(store)
            try straps.write(0..<30)
            let anchor = try store.currentAnchor()
            let uuids = Set(try store.samples(SampleQuery(type: .heartRate)).map(\.uuid))
            #expect(uuids.count == 3)
            try store.delete(uuids: Array(uuids))
            try store.validate(anchor)   // not "ahead of the store"
            try store.save([try Self.reading(91, at: 60)])
            let after = try store.changes(types: [.heartRate], since: anchor)
            #expect(after.deleted.count == 3)
            #expect(after.samples.map(\.quantity.value) == [91], "the new sample's position is past the deleted series'")
        }
    }

    @Test("a transaction that stores a series and then inserts a sample gives them different positions, in order")
    func reserveThenInsertInOneTransaction() async throws {
        try await offThreadOneAtATime {
            let store = try HealthStore(path: Self.tempPath("one-txn"))
            let series = UUID()
            let source = Source(name: "Import", identifier: "org.example.import")
            var quantities: [QuantitySample] = []
            for k in 0..<5 {
                let t = Date(timeIntervalSince1970: Self.t0 + Double(k))
                quantities.append(try QuantitySample(uuid: series, type: .heartRate, quantity: Quantity(Double(60 + k), .countPerMinute),
                                                     start: t, end: t, source: source, device: nil, metadata: Metadata(),
                                                     rrIntervals: nil, checkingPlausibility: true, seriesIndex: k))
            }
            try store.write { w in
                _ = try w.insertSeries(quantities)
                _ = try w.insert(try Self.reading(77, at: 100))
            }
            let clash = try store.withConnection { db -> Int in
                let st = try db.prepare("SELECT count(*) FROM samples WHERE id <= (SELECT max(change_seq) FROM series)", cached: false)
                defer { st.reset() }
                _ = try st.step()
                return st.int(0)
            }
            #expect(clash == 0, "the sample's id must come after the series' position")
            let all = try store.changes(types: [.heartRate], since: nil)
            #expect(all.samples.map(\.quantity.value) == [60, 61, 62, 63, 64, 77])
        }
    }
}
