import Capture
import Foundation
import HealthModel
import Testing

/// The capture format: header, one JSON object per line, exact round trip, clear errors.
@Suite struct CaptureFormatTests {
    static let device = Device(name: "Polar H7 D7904C14", manufacturer: "Polar Electro Oy", localIdentifier: "ble-00112233aabbccdd")

    func tempPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("capture-\(UUID().uuidString).jsonl").path
    }

    @Test func writeThenReadRoundTrips() throws {
        let path = tempPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let t = Date(timeIntervalSince1970: 1_800_000_000.125)
        let records = [
            CaptureRecord.ble(receivedAt: t, device: Self.device, address: "00:22:D0:AA:BB:CC", characteristic: "2a37",
                              payload: [0x16, 0x4D, 0x16, 0x03]),
            CaptureRecord.ble(receivedAt: t.addingTimeInterval(1), device: Self.device, address: "00:22:D0:AA:BB:CC",
                              characteristic: "2A37", payload: [UInt8]()),
            CaptureRecord.serial(receivedAt: t.addingTimeInterval(2), device: Device(name: "pedometer"), line: "STEPS 1234 \"quoted\" / ok"),
        ]
        let w = try CaptureWriter(path: path)
        for r in records { try w.write(r) }
        try w.close()
        #expect(w.count == 3)

        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0] == #"{"format":"healthgate-capture","version":1}"#)
        #expect(lines[1] == #"{"address":"00:22:D0:AA:BB:CC","characteristic":"2A37","device":{"localIdentifier":"ble-00112233aabbccdd","manufacturer":"Polar Electro Oy","name":"Polar H7 D7904C14"},"hex":"164d1603","kind":"ble","t":1800000000.125}"#)

        let read = try CaptureReader(path: path)
        #expect(read.records == records.map { var r = $0; r.characteristic = r.characteristic?.uppercased(); return r })
        #expect(read.records[0].payload == [0x16, 0x4D, 0x16, 0x03])
        #expect(read.records[0].receivedAt == t)
        #expect(read.records[2].line == "STEPS 1234 \"quoted\" / ok")
        #expect(read.truncatedTail == 0)
    }

    @Test func aCutLastLineIsSkippedAndCounted() throws {
        let data = Data("""
            {"format":"healthgate-capture","version":1}
            {"t":1.5,"kind":"serial","device":{},"line":"a"}
            {"t":2.5,"kind":"ser
            """.utf8)
        let r = try CaptureReader(data: data)
        #expect(r.records.count == 1 && r.truncatedTail == 1)
    }

    @Test(arguments: [
        ("{\"t\":1,\"kind\":\"ble\",\"device\":{},\"characteristic\":\"2A37\",\"hex\":\"00\"}\n", "needs \"address\""),
        ("{\"t\":1,\"kind\":\"ble\",\"device\":{},\"address\":\"A\",\"characteristic\":\"2A37\",\"hex\":\"00\"}\n", "six hex pairs"),
        ("{\"t\":1,\"kind\":\"ble\",\"device\":{},\"address\":\"AA:BB:CC:DD:EE:0G\",\"characteristic\":\"2A37\",\"hex\":\"00\"}\n", "six hex pairs"),
        ("{\"t\":1,\"kind\":\"ble\",\"device\":{},\"address\":\"AA:BB:CC:DD:EE:01\",\"characteristic\":\"2A37\",\"hex\":\"0\"}\n", "even number"),
        ("{\"t\":1,\"kind\":\"ble\",\"device\":{},\"address\":\"aa:bb:cc:dd:ee:01\",\"characteristic\":\"nope\",\"hex\":\"00\"}\n", "4 hex digits"),
        // A receipt time past 9999-12-31 (a probe stored year 506713 through replay) or not a number of seconds.
        ("{\"t\":1e20,\"kind\":\"serial\",\"device\":{},\"line\":\"x\"}\n", "before 10000-01-01"),
        ("{\"t\":253402300800,\"kind\":\"serial\",\"device\":{},\"line\":\"x\"}\n", "before 10000-01-01"),
        ("{\"t\":-1,\"kind\":\"serial\",\"device\":{},\"line\":\"x\"}\n", "Unix seconds from 0"),
        ("{\"t\":1,\"kind\":\"usb\",\"device\":{}}\n", "line 2 is invalid"),
        ("{\"kind\":\"serial\",\"device\":{},\"line\":\"x\"}\n", "missing \"t\""),
        ("not json\n", "not valid JSON"),
    ])
    func badLinesNameTheLineAndTheProblem(body: String, message: String) {
        let data = Data((CaptureFormat.headerLine + "\n" + body).utf8)
        #expect { _ = try CaptureReader(data: data) } throws: { "\($0)".contains(message) && "\($0)".contains("line 2") }
    }

    @Test func headerIsChecked() {
        #expect(throws: CaptureError.notACapture(path: "(capture)")) { _ = try CaptureReader(data: Data("{\"a\":1}\n".utf8)) }
        #expect(throws: CaptureError.unsupportedVersion(2)) {
            _ = try CaptureReader(data: Data("{\"format\":\"healthgate-capture\",\"version\":2}\n".utf8))
        }
        #expect(throws: CaptureError.io(path: "/nonexistent/x.jsonl", reason: "it does not exist")) {
            _ = try CaptureReader(path: "/nonexistent/x.jsonl")
        }
    }

    @Test func writerRefusesInvalidRecords() throws {
        let path = tempPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let w = try CaptureWriter(path: path)
        var bad = CaptureRecord.serial(receivedAt: Date(), device: Device(), line: "x")
        bad.line = nil
        #expect(throws: CaptureError.self) { try w.write(bad) }
        #expect(w.count == 0)
    }
}
