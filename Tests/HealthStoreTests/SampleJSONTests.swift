import Foundation
import HealthModel
import Testing
@testable import HealthStore

@Suite("Sample JSON: the import/export shape")
struct SampleJSONTests {
    @Test("a line with every field parses; encoding it again gives the same object")
    func roundTrip() throws {
        let line = """
            {"uuid":"019a4a5c-0000-7000-8000-000000000001","type":"heartRate","value":1.2,"unit":"count/s",\
            "start":"2026-11-02T08:00:00Z","end":"2026-11-02T08:00:01Z","source":{"name":"Strap","identifier":"org.healthgate.ble","version":"1"},\
            "device":{"name":"H10","manufacturer":"Polar","localIdentifier":"ble:AA"},\
            "metadata":{"heartRateSensorLocation":"chest","syncIdentifier":"x","syncVersion":2,"note":"n","when":"2026-11-02T08:00:00Z","k":1.5},\
            "rrIntervals":{"ticks":[1000,1010],"precededByGap":true}}
            """
        let s = try SampleJSON.sample(fromLine: line)
        #expect(abs(s.canonicalValue - 72) < 1e-9)
        #expect(s.source == Source(name: "Strap", identifier: "org.healthgate.ble", version: "1"))
        #expect(s.device?.localIdentifier == "ble:AA")
        #expect(s.metadata.user["when"] == .date(ISO8601.date("2026-11-02T08:00:00Z")!))
        #expect(s.metadata.user["k"] == .number(1.5))
        #expect(s.rrIntervals == RRIntervals(ticks: [1000, 1010], precededByGap: true))
        let again = try SampleJSON.sample(from: try SampleJSON.object(s, unit: s.quantity.unit))
        #expect(again == s)
    }

    @Test("without a uuid the same line always gets the same v7 UUID, dated at its start")
    func derivedUUID() throws {
        let line = #"{"type":"stepCount","value":5,"start":"2026-11-02T08:00:00Z"}"#
        let a = try SampleJSON.sample(fromLine: line), b = try SampleJSON.sample(fromLine: line)
        #expect(a.uuid == b.uuid)
        #expect(a.uuid.uuidString.dropFirst(14).first == "7")
        #expect(a.source == SampleJSON.importSource)
        let c = try SampleJSON.sample(fromLine: #"{"type":"stepCount","value":6,"start":"2026-11-02T08:00:00Z"}"#)
        #expect(c.uuid != a.uuid)
    }

    @Test("metadata numbers 0 and 1 stay numbers; true/false are refused as user values")
    func zeroAndOneAreNumbers() throws {
        let s = try SampleJSON.sample(fromLine: """
            {"type":"stepCount","value":5,"start":"2026-11-02T08:00:00Z","metadata":{"seq":0,"boot":1,"wasUserEntered":true}}
            """)
        #expect(s.metadata.user["seq"] == .number(0))
        #expect(s.metadata.user["boot"] == .number(1))
        #expect(s.metadata.wasUserEntered == true)
        #expect(throws: (any Error).self) {
            try SampleJSON.sample(fromLine: #"{"type":"stepCount","value":5,"start":"2026-11-02","metadata":{"flag":true}}"#)
        }
        #expect(throws: (any Error).self) {
            try SampleJSON.sample(fromLine: #"{"type":"stepCount","value":5,"start":"2026-11-02","metadata":{"wasUserEntered":1}}"#)
        }
    }

    @Test("bad lines say what is wrong", arguments: [
        ("[1]", "JSON object"), ("{", "not valid JSON"), (#"{"value":1,"start":"2026-11-02"}"#, "type"),
        (#"{"type":"stepCount","value":true,"start":"2026-11-02"}"#, "value"),
        (#"{"type":"stepCount","value":1}"#, "start"),
        (#"{"type":"stepCount","value":1,"start":"yesterday"}"#, "ISO 8601"),
        (#"{"type":"stepCount","value":1,"start":"2026-02-30T08:00:00Z"}"#, "February 2026 has 28 days"),
        (#"{"type":"stepCount","value":1,"start":"2026-11-02T25:00:00Z"}"#, "hour 25"),
        (#"{"type":"stepCount","value":1,"start":"2026-11-02T08:00:00"}"#, "no time zone"),
        (#"{"type":"stepCount","value":1,"start":"2026-11-02"}"#, "bare date"),
        (#"{"type":"stepCount","value":1,"start":"2026-11-02T08:00:00Z","end":"2026-11-02T08:60:00Z"}"#, "\"end\": minute 60"),
        (#"{"type":"stepCount","value":1,"start":"2026-11-02T08:00:00Z","source":"Wat\u0000ch"}"#, "source contains a NUL"),
        (#"{"type":"stepCount","value":1,"start":"2026-11-02T08:00:00Z","device":{"name":"a\u0000"}}"#, "device name contains a NUL"),
        (#"{"type":"stepCount","value":1,"start":"2026-11-02T08:00:00Z","metadata":{"k":"x\u0000y"}}"#, "contains a NUL"),
        (#"{"type":"heartRate","value":1,"start":"2026-11-02T08:00:00Z","metadata":{"heartRateSensorLocation":1e300}}"#, "heartRateSensorLocation"),
        (#"{"type":"heartRate","value":1,"start":"2026-11-02T08:00:00Z","metadata":{"sensorContact":1.5}}"#, "sensorContact"),
        (#"{"type":"heartRate","value":1,"start":"2026-11-02T00:00:00Z","metadata":{"heartRateSensorLocation":"knee"}}"#, "heartRateSensorLocation"),
    ])
    func badLines(line: String, mentions: String) {
        do {
            _ = try SampleJSON.sample(fromLine: line)
            Issue.record("accepted \(line)")
        } catch {
            #expect("\(error)".contains(mentions), "\(error)")
        }
    }

    @Test("the time of day in a line is kept, with a space separator and to the millisecond")
    func timeOfDay() throws {
        let s = try SampleJSON.sample(fromLine: #"{"type":"stepCount","value":1,"start":"2026-11-02 08:30:00Z","end":"2026-11-02T09:30:00.941+01:00"}"#)
        #expect(s.startDate == Date(timeIntervalSince1970: 1_793_608_200))
        #expect(s.endDate.timeIntervalSince1970 == 1_793_608_200.941)
        #expect(ISO8601.string(s.endDate) == "2026-11-02T08:30:00.941Z")
    }

    @Test("identity comes from the content: key order, spacing, 1e3 for 1000 or an omitted canonical unit give one UUID")
    func contentIdentity() throws {
        let lines = [
            #"{"type":"stepCount","value":1000,"unit":"count","start":"2026-11-02T08:00:00Z","end":"2026-11-02T09:00:00Z","source":"Watch"}"#,
            #"{"source":"Watch","end":"2026-11-02T09:00:00Z","start":"2026-11-02T08:00:00Z","unit":"count","value":1000,"type":"stepCount"}"#,
            #"{ "type" : "stepCount", "value" : 1e3, "start" : "2026-11-02T08:00:00Z", "end" : "2026-11-02T10:00:00+01:00", "source" : "Watch" }"#,
        ]
        let ids = try Set(lines.map { try SampleJSON.sample(fromLine: $0).uuid })
        #expect(ids.count == 1)
        let other = try SampleJSON.sample(fromLine: #"{"type":"stepCount","value":1001,"start":"2026-11-02T08:00:00Z","end":"2026-11-02T09:00:00Z","source":"Watch"}"#)
        #expect(!ids.contains(other.uuid))
        let otherSource = try SampleJSON.sample(fromLine: #"{"type":"stepCount","value":1000,"start":"2026-11-02T08:00:00Z","end":"2026-11-02T09:00:00Z","source":"Phone"}"#)
        #expect(!ids.contains(otherSource.uuid))
        // Minus zero is zero (a probe stored `0` and `-0` as two samples, doubling the count).
        let zeros = try Set(["0", "-0", "-0.0e0", "0.0"].map {
            try SampleJSON.sample(fromLine: #"{"type":"stepCount","value":\#($0),"start":"2026-11-02T08:00:00Z","end":"2026-11-02T09:00:00Z","source":"Watch"}"#).uuid
        })
        #expect(zeros.count == 1)
    }

    @Test("the same sample in another key order is stored once: the step sum does not double")
    func reorderedLineStoredOnce() throws {
        let tmp = try TempStore()
        let a = try SampleJSON.sample(fromLine: #"{"type":"stepCount","value":500,"start":"2026-11-02T08:00:00Z","end":"2026-11-02T09:00:00Z"}"#)
        let b = try SampleJSON.sample(fromLine: #"{"end":"2026-11-02T09:00:00Z","start":"2026-11-02T08:00:00Z","value":500,"type":"stepCount"}"#)
        #expect(try tmp.store.save([a]).inserted == 1)
        #expect(try tmp.store.save([b]).duplicates == 1)
        #expect(try tmp.store.samples(SampleQuery(type: .stepCount)).count == 1)
    }

    @Test("reserved metadata keys cannot be user keys; old rows holding one stay readable under user.<key>")
    func reservedKeys() throws {
        for key in ["syncIdentifier", "heartRateSensorLocation", "HKMetadataKeySyncVersion", "wasUserEntered", "sensorContact"] {
            let m = Metadata(user: [key: .string("zz")])
            #expect(throws: HealthModelError.self) { try m.validate() }
        }
        var m = Metadata()
        MetadataColumn.decode(#"{"user":{"syncIdentifier":"zz","note":"n"}}"#, into: &m)
        #expect(m.user == ["user.syncIdentifier": .string("zz"), "note": .string("n")])
        #expect(m.syncIdentifier == nil)
        try m.validate()
    }

    @Test("numbers are read exactly: a value and a metadata number survive parse → store → JSON bit for bit")
    func exactNumbers() throws {
        let tmp = try TempStore()
        let s = try SampleJSON.sample(fromLine: #"{"type":"activeEnergyBurned","value":1.3946666666666665,"unit":"kJ","start":"2026-11-02T08:00:00Z","metadata":{"k":0.30000000000000004}}"#)
        #expect(s.quantity.value == 1.3946666666666665)
        #expect(s.metadata.user["k"] == .number(0.30000000000000004))
        try tmp.store.save([s])
        let back = try #require(try tmp.store.samples(SampleQuery(type: .activeEnergyBurned)).first)
        #expect(back.metadata.user["k"] == .number(0.30000000000000004))
        #expect(back.canonicalValue == 1.3946666666666665)
    }
}
