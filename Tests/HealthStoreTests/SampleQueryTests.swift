import Foundation
import HealthModel
import Testing
@testable import HealthStore

@Suite("Sample queries: range, strictness, filters, sort, limit, most recent")
struct SampleQueryTests {
    let watch = Source(name: "Watch", identifier: "com.example.watch")
    let phone = Source(name: "iPhone", identifier: "com.example.phone")

    /// Steps: [0,60] [60,120] [100,200] [200,200] instant; all Watch except the third.
    func fixture() throws -> (TempStore, [QuantitySample]) {
        let tmp = try TempStore()
        let strap = Device(name: "Strap", localIdentifier: "ble:01")
        let s = [
            try sample(.stepCount, 1, from: 0, to: 60, source: watch),
            try sample(.stepCount, 2, from: 60, to: 120, source: watch, device: strap),
            try sample(.stepCount, 3, from: 100, to: 200, source: phone),
            try sample(.stepCount, 4, from: 200, to: 200, source: watch),
        ]
        try tmp.store.save(s)
        return (tmp, s)
    }

    func values(_ tmp: TempStore, _ q: SampleQuery) throws -> [Double] {
        try tmp.store.samples(q).map(\.quantity.value)
    }

    @Test("overlap is the default; a sample that only touches the range start is out")
    func overlap() throws {
        let (tmp, _) = try fixture()
        #expect(try values(tmp, SampleQuery(type: .stepCount, start: t(60), end: t(110))) == [2, 3])
        #expect(try values(tmp, SampleQuery(type: .stepCount, start: t(200), end: t(300))) == [4])
        #expect(try values(tmp, SampleQuery(type: .stepCount, start: t(150), end: t(200))) == [3])
    }

    @Test("strict start and strict end")
    func strict() throws {
        let (tmp, _) = try fixture()
        #expect(try values(tmp, SampleQuery(type: .stepCount, start: t(50), end: t(150), strictStartDate: true)) == [2, 3])
        #expect(try values(tmp, SampleQuery(type: .stepCount, start: t(50), end: t(150), strictEndDate: true)) == [1, 2])
        #expect(try values(tmp, SampleQuery(type: .stepCount, start: t(50), end: t(150),
                                            strictStartDate: true, strictEndDate: true)) == [2])
    }

    @Test("device, source and sensor-location filters")
    func filters() throws {
        let (tmp, _) = try fixture()
        #expect(try values(tmp, SampleQuery(device: "Strap")) == [2])
        #expect(try values(tmp, SampleQuery(device: "ble:01")) == [2])
        #expect(try values(tmp, SampleQuery(source: "iPhone")) == [3])
        #expect(try values(tmp, SampleQuery(source: "com.example.watch")) == [1, 2, 4])
        try tmp.store.save([try sample(.heartRate, 80, from: 5, metadata: Metadata(heartRateSensorLocation: .wrist)),
                            try sample(.heartRate, 90, from: 6, metadata: Metadata(heartRateSensorLocation: .chest))])
        #expect(try values(tmp, SampleQuery(type: .heartRate, sensorLocation: .chest)) == [90])
    }

    @Test("sort by start or end, ascending or descending, with a limit")
    func sortAndLimit() throws {
        let (tmp, _) = try fixture()
        #expect(try values(tmp, SampleQuery(type: .stepCount, sortBy: .startDate, ascending: false)) == [4, 3, 2, 1])
        #expect(try values(tmp, SampleQuery(type: .stepCount, sortBy: .endDate, ascending: true)) == [1, 2, 3, 4])
        #expect(try values(tmp, SampleQuery(type: .stepCount, sortBy: .endDate, ascending: false, limit: 2)) == [4, 3])
        #expect(try values(tmp, SampleQuery(type: .stepCount, limit: 1)) == [1])
    }

    @Test("most recent is the latest end date")
    func mostRecent() throws {
        let (tmp, s) = try fixture()
        #expect(try tmp.store.mostRecentSample(of: .stepCount)?.uuid == s[3].uuid)
        #expect(try tmp.store.mostRecentSample(of: .heartRate) == nil)
    }

    @Test("query by UUIDs")
    func byUUID() throws {
        let (tmp, s) = try fixture()
        #expect(try tmp.store.samples(SampleQuery(uuids: [s[2].uuid, s[0].uuid])).map(\.uuid) == [s[0].uuid, s[2].uuid])
    }
}
