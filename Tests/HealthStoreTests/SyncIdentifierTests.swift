import Foundation
import HealthModel
import Testing
@testable import HealthStore

@Suite("Sync identifiers: a higher version replaces, lower or equal is ignored")
struct SyncIdentifierTests {
    func meta(_ v: Int) -> Metadata { Metadata(syncIdentifier: "pedo-A-0800", syncVersion: v) }

    @Test("a higher version replaces the stored sample and leaves a tombstone")
    func higherReplaces() throws {
        let tmp = try TempStore()
        let v1 = try sample(.stepCount, 100, from: 0, to: 60, metadata: meta(1))
        let v2 = try sample(.stepCount, 140, from: 0, to: 60, metadata: meta(2))
        #expect(try tmp.store.save([v1]).inserted == 1)
        let s = try tmp.store.save([v2])
        #expect(s.replaced == 1 && s.inserted == 0)
        let rows = try tmp.store.samples(SampleQuery(type: .stepCount))
        #expect(rows.map(\.uuid) == [v2.uuid])
        #expect(rows.first?.quantity.value == 140)
        let tomb = try tmp.store.withConnection { db -> UUID? in
            let st = try db.prepare("SELECT uuid FROM deleted_samples", cached: false)
            _ = try st.step()
            return st.uuid(0)
        }
        #expect(tomb == v1.uuid)
    }

    @Test("a lower or equal version is ignored", arguments: [1, 2])
    func lowerIgnored(version: Int) throws {
        let tmp = try TempStore()
        let stored = try sample(.stepCount, 100, from: 0, to: 60, metadata: meta(2))
        try tmp.store.save([stored])
        let s = try tmp.store.save([try sample(.stepCount, 5, from: 0, to: 60, metadata: meta(version))])
        #expect(s.ignored == 1 && s.inserted == 0 && s.replaced == 0)
        #expect(try tmp.store.samples(SampleQuery()).map(\.uuid) == [stored.uuid])
        #expect(try scalar(tmp.store, "SELECT count(*) FROM deleted_samples") == 0)
    }

    @Test("within one batch the highest version wins")
    func inOneBatch() throws {
        let tmp = try TempStore()
        let batch = try [3, 1, 5, 4].map { try sample(.stepCount, Double($0), from: 0, to: 60, metadata: meta($0)) }
        let s = try tmp.store.save(batch)
        #expect(s.inserted == 1 && s.replaced == 1 && s.ignored == 2)
        #expect(try tmp.store.samples(SampleQuery()).map(\.quantity.value) == [5])
    }
}
