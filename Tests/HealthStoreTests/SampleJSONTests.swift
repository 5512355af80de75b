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
        (#"{"type":"heartRate","value":1,"start":"2026-11-02","metadata":{"heartRateSensorLocation":"knee"}}"#, "heartRateSensorLocation"),
    ])
    func badLines(line: String, mentions: String) {
        do {
            _ = try SampleJSON.sample(fromLine: line)
            Issue.record("accepted \(line)")
        } catch {
            #expect("\(error)".contains(mentions), "\(error)")
        }
    }
}
