import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Simulators
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `healthgate run` (a real child) reaching simulated straps over Unix sockets
/// (`[[strap]] socket = …`) and simulated pedometers over ptys (`[[pedometer]] path =
/// "/dev/pts/N"`): every device's samples land in the store, and SIGTERM drains them all.
@Suite(.serialized) struct RunOverUnixSocketsTests {
    @Test func storesHeartRateFromEveryStrapAndStepsFromEveryPedometer() async throws {
        let load = try SimulatedLoad(directory: shortTempDirectory("run"), straps: 10, rate: 4, pedometers: 4,
                                     pedometerInterval: .milliseconds(200))
        defer { load.stop() }
        load.start()
        let db = tempDBPath("sockets")
        let (child, _) = try startRun(load, db: db, flushMs: 100)
        let probe = try StoreProbe(db)
        // Every strap: connected, discovered, subscribed, and its notifications stored under
        // the configured name.
        #expect(await eventually(seconds: 120) { load.straps.allSatisfy { probe.heartRate($0.name) >= 5 } },
                "per strap: \(load.straps.map { probe.heartRate($0.name) }); \(child.stderr)")
        #expect(load.subscribedStraps == 10)
        // Every pedometer opened by its /dev/pts path, its steps stored under the configured
        // name (steps are intervals between readings, so the first reading stores nothing).
        #expect(await eventually(seconds: 120) { load.pedometers.allSatisfy { probe.steps($0.name) >= 2 } },
                "per pedometer: \(load.pedometers.map { probe.steps($0.name) }); \(child.stderr)")
        // The status line (log and systemd STATUS=) says how many devices are live.
        #expect(await eventually(seconds: 60) { child.stderr.contains("10/10 straps subscribed, 4 pedometer(s) open; ") },
                "\(child.stderr.suffix(2000))")

        child.signal(SIGTERM)
        #expect(await offThread { child.wait() } == 0, "\(child.stderr)")
        let last = child.stderr.split(separator: "\n").last { $0.contains("stopped:") }
        #expect(last?.contains(" 0 waiting, 0 dropped") == true, "\(child.stderr)")
        // Nothing invented: a strap's stored samples never exceed what it sent.
        for (k, s) in load.straps.enumerated() {
            #expect(probe.heartRate(s.name) <= load.sentCount(strap: k), "\(s.name)")
        }
        #expect(try probe.integrity() == "ok")
        // The device registry knows every strap, as after `live`: seen, with its battery.
        let store = try HealthStore(path: db)
        for s in load.straps {
            let record = try store.device(localIdentifier: "socket:\(s.socketPath)")
            #expect(record?.battery == 87 && record?.lastSeen != nil && record?.device.name == s.name, "\(s.name): \(String(describing: record))")
        }
        // …and `healthgate devices` lists them, as `run --help` promises (they were filed as
        // kind "other", which `devices` hides).
        let devices = try await offThread { try HealthGateExecutable.run(["devices", "--json", "--db", db]) }
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(devices.stdout.utf8)) as? [[String: Any]], "\(devices)")
        // The pedometers are there too, registered once their ports were open, by their id (a
        // pty has no USB parent: its node).
        let straps = listed.filter { ($0["localIdentifier"] as? String)?.hasPrefix("socket:") == true }
        #expect(Set(straps.compactMap { $0["localIdentifier"] as? String }) == Set(load.straps.map { "socket:\($0.socketPath)" }),
                "\(devices.stdout)")
        #expect(straps.allSatisfy { $0["kind"] as? String == "ble" })
        let pedometers = listed.filter { ($0["localIdentifier"] as? String)?.hasPrefix("socket:") != true }
        #expect(Set(pedometers.compactMap { $0["localIdentifier"] as? String }) == Set(load.pedometers.map { "serial:\($0.path)" }),
                "\(devices.stdout)")
        #expect(pedometers.allSatisfy { $0["kind"] as? String == "serial" })
        // Each strap's connection and subscription is in the log once (info), not only failures.
        for s in load.straps {
            let subscribed = child.stderr.components(separatedBy: "strap \(s.name): subscribed to heart rate notifications").count - 1
            let connected = child.stderr.components(separatedBy: "strap \(s.name): connected").count - 1
            #expect(subscribed == 1 && connected == 1, "\(s.name): \(child.stderr.suffix(3000))")
        }
    }

    @Test func aStrapSocketThatGoesAwayAndComesBackIsReconnectedAndResubscribed() async throws {
        let load = try SimulatedLoad(directory: shortTempDirectory("recon"), straps: 2, rate: 5, pedometers: 0)
        defer { load.stop() }
        load.start()
        let db = tempDBPath("reconnect")
        let (child, _) = try startRun(load, db: db, flushMs: 50)
        defer { if child.process.isRunning { child.signal(SIGKILL) } }
        let probe = try StoreProbe(db)
        let (gone, stays) = (load.straps[0], load.straps[1])
        #expect(await eventually(seconds: 120) { probe.heartRate(gone.name) >= 3 && probe.heartRate(stays.name) >= 3 }, "\(child.stderr)")
        #expect(gone.peripheral.connectionCount == 1)

        // The strap walks away: link closed, socket file removed. The daemon notices, and its
        // reconnect attempts fail (no socket there) while the other strap keeps flowing.
        load.takeDown(strap: 0)
        #expect(await eventually(seconds: 120) { child.stderr.contains("no socket there") }, "\(child.stderr)")
        let staysBefore = probe.heartRate(stays.name)
        #expect(await eventually(seconds: 120) { probe.heartRate(stays.name) >= staysBefore + 5 }, "\(child.stderr)")

        // It comes back on the same path: the daemon reconnects (backoff), rediscovers and
        // writes the CCCD again on the new link, and samples flow again.
        try load.bringBack(strap: 0)
        #expect(await eventually(seconds: 180) { gone.peripheral.connectionCount == 2 }, "\(child.stderr)")
        #expect(await eventually(seconds: 120) {
            load.isSubscribed(strap: 0)
        }, "no re-subscription: \(child.stderr)")
        let goneAfter = probe.heartRate(gone.name)
        #expect(await eventually(seconds: 120) { probe.heartRate(gone.name) >= goneAfter + 5 }, "\(child.stderr)")

        child.signal(SIGTERM)
        #expect(await offThread { child.wait() } == 0, "\(child.stderr)")
        #expect(try probe.integrity() == "ok")
    }
}
