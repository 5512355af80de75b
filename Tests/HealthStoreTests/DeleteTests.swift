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

    @Test("the count a confirmation names is what goes: a series of which the filter selects a quantity counts whole (it said 2, and 4 went)")
    func deletionCountNamesTheWholeSeries() throws {
        let tmp = try TempStore()
        try SeriesSampleTests.append(tmp.store, SeriesWriter(), times: [0, 60, 120].map { t($0).timeIntervalSince1970 })
        try tmp.store.save([try sample(.heartRate, 70, from: 90)])
        let q = SampleQuery(type: .heartRate, start: t(90), end: t(180))
        #expect(try tmp.store.count(q) == 2, "the row at 90 and the series' quantity at 120")
        #expect(try tmp.store.deletionCount(matching: q) == 4)
        var first = q
        first.limit = 1
        #expect(try tmp.store.deletionCount(matching: first) == 1, "the limit reaches the row only")
        first.limit = 2
        #expect(try tmp.store.deletionCount(matching: first) == 4)
        #expect(try tmp.store.delete(matching: q) == 4)
        #expect(try tmp.store.count(SampleQuery()) == 0)
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
