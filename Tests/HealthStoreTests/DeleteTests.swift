import Foundation
import HealthModel
import Testing
@testable import HealthStore

@Suite("Deletes remove samples and always leave tombstones")
struct DeleteTests {
    @Test("delete by UUID")
    func byUUID() throws {
        let tmp = try TempStore()
        let a = try sample(.heartRate, 60, from: 0), b = try sample(.heartRate, 70, from: 1)
        try tmp.store.save([a, b])
        #expect(try tmp.store.delete(uuids: [a.uuid, UUID()]) == 1)
        #expect(try tmp.store.samples(SampleQuery()).map(\.uuid) == [b.uuid])
        #expect(try scalar(tmp.store, "SELECT count(*) FROM deleted_samples") == 1)
    }

    @Test("delete by predicate removes only what matches")
    func byPredicate() throws {
        let tmp = try TempStore()
        try tmp.store.save([
            try sample(.heartRate, 60, from: 0), try sample(.heartRate, 70, from: 100),
            try sample(.stepCount, 10, from: 0, to: 60),
        ])
        let n = try tmp.store.delete(matching: SampleQuery(type: .heartRate, start: t(50)))
        #expect(n == 1)
        #expect(try tmp.store.count(SampleQuery(type: .heartRate)) == 1)
        #expect(try tmp.store.count(SampleQuery(type: .stepCount)) == 1)
        #expect(try scalar(tmp.store, "SELECT count(*) FROM deleted_samples") == 1)
    }

    @Test("row ids are never reused after a delete (they are the change-feed sequence)")
    func idsNotReused() throws {
        let tmp = try TempStore()
        let a = try sample(.heartRate, 60, from: 0)
        try tmp.store.save([a])
        let first = try scalar(tmp.store, "SELECT max(id) FROM samples")
        try tmp.store.delete(uuids: [a.uuid])
        try tmp.store.save([try sample(.heartRate, 61, from: 1)])
        #expect(try scalar(tmp.store, "SELECT max(id) FROM samples") > first)
    }
}
