import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

/// `healthgate live` while `healthgate run` owns the straps: it shows what the daemon commits
/// instead of fighting it for the connection (issue 7), and a second daemon on the same store is
/// refused. Real child processes; this machine has no Bluetooth, so a `live` that tried the radio
/// would exit 69 instead.
@Suite("live defers to a running daemon")
struct LiveFollowsDaemonTests {
    @Test("live follows the daemon's commits; a second run is refused; after the daemon, live tries the radio")
    func followsDaemon() async throws {
        let db = TempDB()
        let config = db.dir.appendingPathComponent("gateway.toml")
        try "[store]\npath = \"\(db.path)\"\n".write(to: config, atomically: true, encoding: .utf8)

        let daemon = try Child(["run", "--config", config.path])
        let lockFile = db.path + ".daemon"
        let started = await waitFor { FileManager.default.fileExists(atPath: lockFile) }
        #expect(started, "healthgate run never wrote \(lockFile)")

        let second = try await CLI.run(["run", "--config", config.path])
        #expect(second.status == 75, "a second run on the same store must be refused with 75: \(second.stderr)")
        #expect(second.stderr.contains("already owns"))

        let live = try Child(["live", "--json", "--count", "2", "--duration", "120", "--db", db.path])
        #expect(await live.waitForStderr("owns the straps"), "live did not say the daemon owns the straps")
        let store = try db.open()
        let device = Device(name: "Strap A", localIdentifier: "ble:F0:48:47:00:00:0A")
        for bpm in [71.0, 72.0] {
            try store.save([try QuantitySample(type: .heartRate, quantity: Quantity(bpm, .countPerMinute),
                                               start: Date(), end: Date(), source: Source(name: "HealthGate BLE"),
                                               device: device)])
        }
        let shown = await live.waitUntil { lines in lines.compactMap(jsonObject).count >= 2 }
        #expect(shown, "live did not print the daemon's two committed readings")
        let values = live.outputLines.compactMap(jsonObject).compactMap { $0["value"] as? Double }
        #expect(values == [71, 72])
        await live.stop()

        await daemon.stop()
        let after = try await CLI.run(["live", "--duration", "1", "--db", db.path])
        #expect(after.status == 69, "with no daemon, live must try the radio (no Bluetooth here: 69): \(after.stderr)")
        #expect(!after.stderr.contains("owns the straps"))
    }

    @Test("live --workout while the daemon owns the straps: the session is a workout of what the daemon stores, its totals end the output")
    func workoutWhileFollowing() async throws {
        let db = TempDB()
        let config = db.dir.appendingPathComponent("gateway.toml")
        try "[store]\npath = \"\(db.path)\"\n".write(to: config, atomically: true, encoding: .utf8)
        let daemon = try Child(["run", "--config", config.path])
        #expect(await waitFor { FileManager.default.fileExists(atPath: db.path + ".daemon") })
        #expect(try await CLI.run(["live", "--workout", "running", "--no-store", "--db", db.path]).status == 64)
        let live = try Child(["live", "--json", "--workout", "running", "--count", "2", "--duration", "120", "--db", db.path])
        #expect(await live.waitForStderr("owns the straps"))
        let store = try db.open()
        // Save until live has shown two (it takes its anchor just after saying it follows).
        for bpm in 100..<160 {
            try store.save([try QuantitySample(type: .heartRate, quantity: Quantity(Double(bpm), .countPerMinute),
                                               start: Date(), end: Date(), source: Source(name: "HealthGate BLE"),
                                               device: Device(name: "Strap A"))])
            if await live.waitUntil(seconds: 1, { $0.compactMap(jsonObject).count >= 2 }) { break }
        }
        let ended = await live.waitUntil { lines in lines.compactMap(jsonObject).contains { $0["event"] as? String == "workout" } }
        #expect(ended, "live never printed the workout's totals: \(live.outputLines)")
        let totals = live.outputLines.compactMap(jsonObject).first { $0["event"] as? String == "workout" }
        #expect(totals?["activity"] as? String == "running" && totals?["state"] as? String == "ended")
        let hr = totals?["heartRate"] as? [String: Any]
        #expect((hr?["samples"] as? Int ?? 0) >= 2, "the readings stored during the session count in it: \(String(describing: totals))")
        #expect(try store.workoutsInProgress().isEmpty && store.workouts().count == 1)
        await live.stop()
        await daemon.stop()
    }

    @Test("live's text line gives RR in milliseconds with the unit; --json keeps the ticks")
    func rrHasAUnit() async throws {
        // Issue #17 item 21: following the daemon, the text line printed raw ticks ("RR 512 1024").
        let db = TempDB()
        let config = db.dir.appendingPathComponent("gateway.toml")
        try "[store]\npath = \"\(db.path)\"\n".write(to: config, atomically: true, encoding: .utf8)
        let daemon = try Child(["run", "--config", config.path])
        #expect(await waitFor { FileManager.default.fileExists(atPath: db.path + ".daemon") })
        let live = try Child(["live", "--count", "1", "--duration", "120", "--db", db.path])
        let json = try Child(["live", "--json", "--count", "1", "--duration", "120", "--db", db.path])
        #expect(await live.waitForStderr("owns the straps"))
        #expect(await json.waitForStderr("owns the straps"))
        // A child says it follows the daemon just before it takes its start anchor: a sample
        // saved in between is not shown, so save again until both have printed one.
        let store = try db.open()
        for _ in 0..<30 {
            try store.save([try QuantitySample(type: .heartRate, quantity: Quantity(70, .countPerMinute),
                                               start: Date(), end: Date(), source: Source(name: "HealthGate BLE"),
                                               device: Device(name: "Strap A"), rrIntervals: RRIntervals(ticks: [512, 1024, 831]))])
            let text = await live.waitUntil(seconds: 2) { !$0.isEmpty }
            let object = await json.waitUntil(seconds: 2) { !$0.compactMap(jsonObject).isEmpty }
            if text && object { break }
        }
        #expect(live.outputLines.contains { $0.contains("70 count/min") && $0.hasSuffix("RR 500 1000 812 ms") }, "\(live.outputLines)")
        let rr = json.outputLines.compactMap(jsonObject).first?["rrIntervals"] as? [String: Any]
        #expect(rr?["ticks"] as? [Int] == [512, 1024, 831])
        await live.stop()
        await json.stop()
        await daemon.stop()
    }

    private func waitFor(seconds: Double = 60, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }
}
