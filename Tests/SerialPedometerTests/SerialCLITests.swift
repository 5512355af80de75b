import Foundation
import HealthGateTesting
import Testing

/// `healthgate serial list`, `decode pedometer` and the configuration errors, run as the built binary.
@Suite struct SerialCLITests {
    struct Output { var code: Int32; var out: String; var err: String }

    private func hg(_ args: [String], env: [String: String] = [:]) throws -> Output {
        let r = try HealthGateExecutable.run(args, environment: env)
        return Output(code: r.status, out: r.stdout, err: r.stderr)
    }

    private func tempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hg-serial-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test(.enabled(if: WatchCommandTests.binary != nil))
    func listShowsEveryTTYWithAllAndMatchesByRule() throws {
        let r = try hg(["serial", "list", "--json", "--all", "--match", "serial:NOPE"])
        #expect(r.code == 0, "\(r.err)")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [[String: Any]])
        let names = Set(list.compactMap { $0["name"] as? String })
        #expect(names == Set(try FileManager.default.contentsOfDirectory(atPath: "/sys/class/tty")))
        #expect(list.allSatisfy { $0["pedometer"] as? Bool == false })
        let hardware = try hg(["serial", "list", "--json"])
        let few = try #require(try JSONSerialization.jsonObject(with: Data(hardware.out.utf8)) as? [[String: Any]])
        #expect(!few.contains { $0["name"] as? String == "tty1" })
    }

    @Test(.enabled(if: WatchCommandTests.binary != nil))
    func decodePrintsWhatTheLineCarried() throws {
        let r = try hg(["decode", "pedometer", #"{"steps":1234,"t":1700000001.25,"seq":7,"boot":"b3"}"#, "--json"])
        #expect(r.code == 0)
        let o = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        #expect(o["steps"] as? Int == 1234 && o["seq"] as? Int == 7 && o["boot"] as? String == "b3")
        #expect(o["t"] as? Double == 1_700_000_001.25)
        #expect(Set(o.keys) == ["steps", "t", "seq", "boot"])
        let kv = try hg(["decode", "pedometer", "steps:42" + String(repeating: " ", count: 22), "--json"])
        #expect(kv.out.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"steps":42}"#)
    }

    @Test(.enabled(if: WatchCommandTests.binary != nil))
    func notAPedometerLineExits65WithTheReason() throws {
        let r = try hg(["decode", "pedometer", "Step: 1234"])
        #expect(r.code == 65)
        #expect(r.err.contains("not a pedometer line"))
        let p = try hg(["decode", "pedometer", "Step: 1234", "--format", "profile:seeed-bma456", "--json"])
        #expect(p.code == 0)
        #expect(p.out.contains(#""steps":1234"#))
    }

    @Test(.enabled(if: WatchCommandTests.binary != nil))
    func userProfilesComeFromTheConfigurationFile() throws {
        let dir = try tempDir()
        let conf = dir.appendingPathComponent("serial.toml").path
        try "match = [\"1d50:6120\"]\n[profiles.band]\npattern = '^Pedo=(?<steps>\\d+)$'\nsemantics = \"delta\"\n"
            .write(toFile: conf, atomically: true, encoding: .utf8)
        let r = try hg(["decode", "pedometer", "Pedo=17", "--format", "profile:band", "--json", "--config", conf])
        #expect(r.code == 0, "\(r.err)")
        #expect(r.out.contains(#""dsteps":17"#))
        // The same file through XDG_CONFIG_HOME.
        let xdg = dir.appendingPathComponent("xdg/healthgate")
        try FileManager.default.createDirectory(at: xdg, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: conf, toPath: xdg.appendingPathComponent("serial.toml").path)
        let viaEnv = try hg(["decode", "pedometer", "Pedo=3", "--format", "profile:band"],
                            env: ["XDG_CONFIG_HOME": dir.appendingPathComponent("xdg").path])
        #expect(viaEnv.code == 0, "\(viaEnv.err)")
        try "match = [\"everything\"]\n".write(toFile: conf, atomically: true, encoding: .utf8)
        let bad = try hg(["serial", "list", "--config", conf])
        #expect(bad.code == 78)
        // One sentence with the program, the kind of failure, the file and the line.
        #expect(bad.err.hasPrefix("healthgate: configuration error: \(conf):1: "), "\(bad.err)")
        // The file that made toml++ abort (SIGABRT, 134) before HealthGate read TOML itself.
        try "match = [}]\n".write(toFile: conf, atomically: true, encoding: .utf8)
        let broken = try hg(["serial", "list", "--config", conf])
        #expect(broken.code == 78)
        #expect(broken.err.contains("configuration error: \(conf):1: not valid TOML (column 10): expected a value"), "\(broken.err)")
    }

    @Test(.enabled(if: WatchCommandTests.binary != nil))
    func autoNeverReadsEveryTTY() throws {
        let dir = try tempDir()
        let r = try hg(["serial", "watch", "--auto", "--no-store", "--config", dir.appendingPathComponent("none.toml").path])
        #expect(r.code == 78)   // an explicit --config that does not exist is a configuration error
        let none = try hg(["serial", "watch", "--auto", "--no-store"], env: ["XDG_CONFIG_HOME": dir.path])
        #expect(none.code == 78)
        #expect(none.err.contains("never reads every tty"))
        #expect(try hg(["serial", "watch", "--auto", "--match", "*", "--no-store"]).code == 64)
        #expect(try hg(["serial", "watch", "/dev/ttyS9", "--counter-bits", "20"]).code == 64)
    }
}
