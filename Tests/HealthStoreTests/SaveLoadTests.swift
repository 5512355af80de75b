import Foundation
import HealthModel
import Testing
@testable import HealthStore

@Suite("Save and load: every field survives a round trip through SQLite")
struct SaveLoadTests {
    @Test("a fully populated heart-rate sample comes back equal")
    func roundTrip() throws {
        let tmp = try TempStore()
        let device = Device(name: "H10", manufacturer: "Polar", model: "H10", hardwareVersion: "1",
                            firmwareVersion: "3.1", softwareVersion: "2", localIdentifier: "ble:AA", udiDeviceIdentifier: "udi")
        var meta = Metadata(heartRateSensorLocation: .chest, heartRateMotionContext: .active, sensorContact: .detected,
                            syncIdentifier: "hr-1", syncVersion: 3, wasUserEntered: false)
        meta.user = ["note": .string("run"), "lap": .number(2.5), "when": .date(t(12.5))]
        let s = try sample(.heartRate, 1.2, .countPerSecond, from: 0, to: 1,
                           source: Source(name: "HealthGate BLE", identifier: "org.healthgate.ble", version: "0.1"),
                           device: device, metadata: meta,
                           rr: RRIntervals(ticks: [1024, 900, 65534], precededByGap: true))
        let summary = try tmp.store.save([s])
        #expect(summary.inserted == 1)
        let back = try #require(try tmp.store.samples(SampleQuery(type: .heartRate)).first)
        #expect(back.uuid == s.uuid)
        #expect(abs(back.quantity.value - 72) < 1e-9)
        #expect(back.quantity.unit == .countPerMinute)
        #expect(back.startDate == s.startDate && back.endDate == s.endDate)
        #expect(back.source == s.source)
        #expect(back.device == device)
        #expect(back.metadata == meta)
        #expect(back.rrIntervals == s.rrIntervals)
    }

    @Test("a new store file is private (0600) and its directories are created")
    func fileMode() throws {
        let tmp = try TempStore()
        let attrs = try FileManager.default.attributesOfItem(atPath: tmp.path)
        #expect((attrs[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try scalar(tmp.store, "PRAGMA user_version") == Schema.version)
        let mode = try tmp.store.withConnection { db -> String? in
            let st = try db.prepare("PRAGMA journal_mode", cached: false)
            _ = try st.step()
            return st.string(0)
        }
        #expect(mode == "wal")
    }

    @Test("reopening keeps data and does not re-run migrations")
    func reopen() throws {
        let tmp = try TempStore()
        try tmp.store.save([try sample(.stepCount, 10, from: 0, to: 60)])
        let again = try HealthStore(path: tmp.path)
        #expect(try again.count(SampleQuery(type: .stepCount)) == 1)
        #expect(try scalar(again, "PRAGMA user_version") == Schema.version)
    }

    @Test("saving the same sample twice stores it once")
    func duplicateUUID() throws {
        let tmp = try TempStore()
        let s = try sample(.stepCount, 10, from: 0, to: 60)
        try tmp.store.save([s])
        let second = try tmp.store.save([s])
        #expect(second.duplicates == 1 && second.inserted == 0)
        #expect(try tmp.store.count(SampleQuery()) == 1)
    }

    @Test("a batch is one transaction: a failure keeps nothing of it")
    func atomicBatch() throws {
        let tmp = try TempStore()
        let good = try sample(.stepCount, 10, from: 0, to: 60)
        let alien = QuantityType(identifier: "alien", canonicalUnit: "count", aggregationStyle: .cumulative, summary: "")
        let bad = try QuantitySample(type: alien, quantity: Quantity(1, .count), start: t(0), end: t(1), source: .manual)
        #expect(throws: HealthModelError.unknownType("alien")) { try tmp.store.save([good, bad]) }
        #expect(try tmp.store.count(SampleQuery()) == 0)
        // Caches were reset with the rollback: the next save recreates the source row.
        try tmp.store.save([good])
        #expect(try tmp.store.sources().map(\.source.name) == ["Watch"])
    }

    @Test("state written with a batch commits with it")
    func stateWithBatch() throws {
        let tmp = try TempStore()
        try tmp.store.save([try sample(.stepCount, 5, from: 0, to: 1)], state: ["pedometer/A/counter": Data("1234".utf8)])
        #expect(try tmp.store.stateString("pedometer/A/counter") == "1234")
        try tmp.store.setState("pedometer/B/counter", string: "7")
        #expect(try tmp.store.stateEntries(prefix: "pedometer/").map(\.key) == ["pedometer/A/counter", "pedometer/B/counter"])
        try tmp.store.setState("pedometer/A/counter", nil)
        #expect(try tmp.store.state("pedometer/A/counter") == nil)
    }

    @Test("a source renamed under the same identifier is one source with the new name")
    func sourceRename() throws {
        let tmp = try TempStore()
        try tmp.store.save([try sample(.stepCount, 1, from: 0, to: 1, source: Source(name: "Old", identifier: "com.x"))])
        try tmp.store.save([try sample(.stepCount, 1, from: 2, to: 3, source: Source(name: "New", identifier: "com.x", version: "2"))])
        let list = try tmp.store.sources()
        #expect(list.map(\.source) == [Source(name: "New", identifier: "com.x", version: "2")])
        #expect(list.first?.sampleCount == 2)
    }

    /// What the Apple Health importer asks to tell a store it imported into before UUIDs became
    /// time-ordered (docs/apple-health.md, "One scheme per store"): a prefix of the source's
    /// identifier, compared as text (no LIKE wildcards), over individually stored samples.
    @Test("hasSamples(fromSourcesPrefixed:): a literal prefix of the identifier, only while a sample of the source is stored")
    func samplesFromSourcesPrefixed() throws {
        let s = try TempStore()
        #expect(try !s.store.hasSamples(fromSourcesPrefixed: "apple-health:"))
        let phone = Source(name: "Anna's iPhone", identifier: "apple-health:Anna's iPhone")
        let other = Source(name: "Other", identifier: "x-apple-health:Other")
        let first = try sample(.stepCount, 10, from: 0, to: 60, source: phone)
        try s.store.save([first, try sample(.stepCount, 5, from: 0, to: 60, source: other)])
        #expect(try s.store.hasSamples(fromSourcesPrefixed: "apple-health:"))
        #expect(try s.store.hasSamples(fromSourcesPrefixed: "apple-health:Anna's iPhone"))
        #expect(try !s.store.hasSamples(fromSourcesPrefixed: "apple-health:Bob"))
        #expect(try !s.store.hasSamples(fromSourcesPrefixed: "apple%"), "a LIKE wildcard is a character")
        #expect(try !s.store.hasSamples(fromSourcesPrefixed: "health:"), "the prefix is at the start")
        // The source row stays after its last sample goes; the answer follows the samples.
        #expect(try s.store.delete(uuids: [first.uuid]) == 1)
        #expect(try !s.store.hasSamples(fromSourcesPrefixed: "apple-health:"))
        #expect(try s.store.hasSamples(fromSourcesPrefixed: "x-apple"))
    }
}
