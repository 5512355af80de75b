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

    private func waitFor(seconds: Double = 60, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }
}
