import Foundation
import HealthModel
import HealthStore
import Testing
@testable import Gateway
import HealthGateTesting
@testable import HealthGateConfiguration
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `healthgate simulate` as the README's two-terminal workflow: simulate in one child, `run` on
/// the configuration it wrote in another; the daemon stores every simulated device's samples,
/// and stopping simulate removes its sockets.
@Suite(.serialized) struct SimulateCommandTests {
    @Test func theWrittenConfigurationDrivesARealRunAndStoppingRemovesTheSockets() async throws {
        let dir = shortTempDirectory("simcmd")
        let configOut = dir + "-sim.toml"
        let sim = try Child(["simulate", "--straps", "3", "--pedometers", "2", "--rate", "5",
                             "--pedometer-interval-ms", "200", "--dir", dir, "--config-out", configOut, "--json"])
        defer { if sim.process.isRunning { sim.signal(SIGKILL) } }
        #expect(await eventually(seconds: 120) { sim.stdout.contains("\n") }, "simulate printed nothing: \(sim.stderr)")
        let line = try #require(sim.stdout.split(separator: "\n").first)
        let ready = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(ready["config"] as? String == configOut)
        #expect(ready["directory"] as? String == dir)
        let straps = try #require(ready["straps"] as? [[String: String]])
        let pedometers = try #require(ready["pedometers"] as? [[String: String]])
        #expect(straps.count == 3 && pedometers.count == 2)

        // The configuration names each strap by socket and each pedometer by a link in the
        // directory to its pty (gone when the simulator stops, so a daemon left running never
        // opens the next pty to get that number).
        let config = try GatewayConfig.load(path: configOut)
        #expect(config.straps.map(\.socket) == straps.map { $0["socket"] })
        #expect(config.straps.allSatisfy { $0.address == nil })
        #expect(config.pedometers.map(\.path) == pedometers.map { $0["path"] })
        #expect(pedometers.allSatisfy { $0["path"]?.hasPrefix(dir + "/pedometer-") == true && $0["tty"]?.hasPrefix("/dev/pts/") == true })
        for p in pedometers {
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: p["path"] ?? "")) == p["tty"])
        }
        for s in straps { #expect(FileManager.default.fileExists(atPath: s["socket"] ?? "")) }

        let db = tempDBPath("simcmd")
        let run = try Child(["run", "--config", configOut, "--db", db])
        defer { if run.process.isRunning { run.signal(SIGKILL) } }
        let store = try HealthStore(path: db)
        func hr(_ name: String?) -> Int { (try? store.count(SampleQuery(type: .heartRate, device: name))) ?? 0 }
        #expect(await eventually(seconds: 120) { straps.allSatisfy { hr($0["name"]) >= 5 } }, "\(run.stderr)")
        #expect(await eventually(seconds: 120) { ((try? store.count(SampleQuery(type: .stepCount))) ?? 0) >= 4 }, "\(run.stderr)")
        run.signal(SIGTERM)
        #expect(await offThread { run.wait() } == 0, "\(run.stderr)")

        sim.signal(SIGTERM)
        #expect(await offThread { sim.wait() } == 0, "\(sim.stderr)")
        for s in straps { #expect(!FileManager.default.fileExists(atPath: s["socket"] ?? "")) }
        for p in pedometers { #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: p["path"] ?? "")) == nil) }
    }

    @Test func helpTeachesTheTwoTerminalWorkflow() async throws {
        let child = try Child(["simulate", "--help"])
        #expect(await offThread { child.wait() } == 0)
        #expect(child.stdout.contains("healthgate simulate --straps 10 --pedometers 4 --config-out sim.toml"), "\(child.stdout)")
        #expect(child.stdout.contains("healthgate run --config sim.toml"), "\(child.stdout)")
        // Each device option says what serves it (help text wraps: compare without spacing).
        let options = child.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(options.contains("Simulated heart-rate straps (Unix sockets)."), "\(child.stdout)")
        #expect(options.contains("Simulated serial pedometers (ptys)."), "\(child.stdout)")
    }

    @Test func badCountsAreUsageErrors() async throws {
        let child = try Child(["simulate", "--straps", "0", "--pedometers", "0"])
        #expect(await offThread { child.wait() } == 64, "\(child.stderr)")
    }

    /// A sent log that cannot be written is an I/O error (73: cannot create) said in one
    /// sentence naming it, before anything is served; the sockets are removed again.
    @Test func anUnwritableSentLogIsRefusedBeforeServing() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hg-sim-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let child = try Child(["simulate", "--straps", "1", "--pedometers", "0", "--dir", dir,
                               "--sent-log", dir + "/no-such-folder/sent.jsonl"])
        #expect(await offThread { child.wait() } == 73, "\(child.stderr)")
        #expect(child.stderr.contains("sent log") && child.stderr.contains("no-such-folder"), "\(child.stderr)")
        #expect(child.stderr.split(separator: "\n").count == 1, "\(child.stderr)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        #expect(!left.contains { $0.hasSuffix(".sock") }, "\(left)")
    }
}
