import Capture
import Foundation
import HealthGateTesting
import HealthModel
import Logging
import Simulators
import Testing
@testable import BluetoothLinux
@testable import Gateway

@Suite("record: raw notifications in the capture format (simulated strap over a socket pair)")
struct StrapRecordingTests {
    /// Runs a recording of the chest strap (a simulated one) on a thread of its own.
    static func start(_ strap: SimulatedPeripheral, path: String, maxNotifications: Int, events: SessionEvents)
        throws -> (StrapRecording, Task<Int, any Error>) {
        let recording = try StrapRecording(straps: StrapSessionTests.straps([StrapSessionTests.chest], [StrapSessionTests.chest.address: strap]),
                                           writer: try CaptureFileWriter(path: path), policy: StrapSessionTests.fast,
                                           maxNotifications: maxNotifications, transactionTimeout: .seconds(5),
                                           logger: Logger(label: "test")) { events.append($0) }
        // A watchdog: a broken test fails instead of hanging on a count that is never reached. Its
        // 300 s start when the recording does (the task waits for the cooperative pool first); a
        // hang guard only, generous for the one-thread pass on a loaded machine.
        return (recording, Task { try await offThread {
            DispatchQueue.global().asyncAfter(deadline: .now() + 300) { recording.stop() }
            return try recording.run(trapsSignals: false)
        } })
    }

    static func tempPath() -> String { NSTemporaryDirectory() + "healthgate-capture-\(UUID().uuidString).jsonl" }

    @Test func writesHeaderAndOneLinePerNotificationAcrossAReconnect() async throws {
        let path = Self.tempPath()
        let strap = SimulatedPeripheral.heartRateStrap()
        let events = SessionEvents()
        let payloads: [[UInt8]] = [[0x16, 72, 0x10, 0x04], [0x16], [0x19, 0x48, 0x00, 0x0A, 0x00], [0x06, 70]]
        let (_, task) = try Self.start(strap, path: path, maxNotifications: payloads.count, events: events)
        func connections() -> Int { events.all.filter { if case .connected = $0 { true } else { false } }.count }
        #expect(await eventually { connections() == 1 })
        #expect(await strapSubscribed(strap))
        strap.notifyHeartRate(payloads[0])
        strap.notifyHeartRate(payloads[1])
        #expect(await eventually { events.all.filter { if case .reading = $0 { true } else { false } }.count == 2 })
        strap.disconnect()
        #expect(await eventually { connections() == 2 })
        #expect(await strapSubscribed(strap))
        strap.notifyHeartRate(payloads[2])
        strap.notifyHeartRate(payloads[3])
        let n = try await task.value
        #expect(n == 4)

        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.first == #"{"format":"healthgate-capture","version":1}"#)
        #expect(lines.count == 5)
        var lastT = 0.0
        for (line, payload) in zip(lines.dropFirst(), payloads) {
            let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(o["kind"] as? String == "ble")
            #expect(o["address"] as? String == "F0:F1:F2:F3:F4:F5")
            #expect(o["characteristic"] as? String == "2A37")
            #expect(o["hex"] as? String == payload.map { String(format: "%02x", $0) }.joined())  // raw, even the rejected one
            let t = try #require(o["t"] as? Double)
            #expect(t >= lastT)
            lastT = t
            let device = try #require(o["device"] as? [String: Any])
            #expect(device["localIdentifier"] as? String == "F0:F1:F2:F3:F4:F5")
            #expect(device["manufacturer"] as? String == "HealthGate")
        }
    }

    @Test func anExistingFileIsNotOverwrittenUnlessAsked() throws {
        let path = Self.tempPath()
        try "keep me\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: CaptureFileError.self) { try CaptureFileWriter(path: path) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "keep me\n")
        _ = try CaptureFileWriter(path: path, overwrite: true)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == CaptureFileWriter.header + "\n")
        #expect(throws: CaptureFileError.self) { try CaptureFileWriter(path: "/nonexistent-dir/x.jsonl") }
    }

    @Test func theCaptureReadsBackWithTheCaptureModule() async throws {
        let path = Self.tempPath()
        let strap = SimulatedPeripheral.heartRateStrap()
        let (_, task) = try Self.start(strap, path: path, maxNotifications: 2, events: SessionEvents())
        #expect(await eventually { strap.notifyHeartRate([0x16, 0x48, 0x00, 0x04]) })
        strap.notifyHeartRate([0x06, 0x49])
        _ = try await task.value
        let records = try CaptureReader(path: path).records
        #expect(records.count == 2)
        #expect(records.map(\.payload) == [[0x16, 0x48, 0x00, 0x04], [0x06, 0x49]])
        #expect(records.allSatisfy { $0.kind == .ble && $0.characteristic == "2A37" && $0.address == "F0:F1:F2:F3:F4:F5" })
        #expect(records.first?.device.model == "SIM-HR1")
    }
}
