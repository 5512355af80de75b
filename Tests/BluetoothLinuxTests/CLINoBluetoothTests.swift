import Foundation
import Glibc
import HealthGateTesting
import Testing

/// Runs the built `healthgate` binary (next to this test bundle) as a child process.
struct CLIRun {
    var status: Int32
    var stdout: String
    var stderr: String

    static func run(_ args: [String], environment extra: [String: String] = [:]) throws -> CLIRun {
        let r = try HealthGateExecutable.run(args, environment: extra)
        return CLIRun(status: r.status, stdout: r.stdout, stderr: r.stderr)
    }
}

@Suite("The CLI on a machine without Bluetooth", .serialized)
struct CLINoBluetoothTests {
    static let noBluetooth = kernelBluetoothErrno() == EAFNOSUPPORT

    static let tmp: String = {
        let dir = NSTemporaryDirectory() + "healthgate-ble-cli-\(getpid())"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }()

    /// Every BLE command that needs the radio, as a new user would type it.
    static let commands: [[String]] = [
        ["scan"],
        ["scan", "--adapter", "hci0", "--timeout", "2", "--all", "--json"],
        ["pair", "C4:7C:8D:6A:1F:02", "--name", "chest"],
        ["pair", "F0:F1:F2:F3:F4:F5", "--bond", "--json", "--address-type", "random"],
        ["live"],
        ["live", "C4:7C:8D:6A:1F:02", "--json", "--no-store", "--duration", "1"],
        ["reset-energy", "C4:7C:8D:6A:1F:02"],
        ["reset-energy", "chest"],
        ["record", "C4:7C:8D:6A:1F:02", "--out", CLINoBluetoothTests.tmp + "/never-created.jsonl"],
    ]

    @Test(.enabled(if: noBluetooth, "this kernel has Bluetooth"), arguments: commands)
    func exitsUnavailableWithOneSentence(_ args: [String]) throws {
        let r = try CLIRun.run(args + (args.first == "scan" ? [] : ["--db", Self.tmp + "/h.sqlite"]))
        #expect(r.status == 69, "\(args): \(r.stderr)")
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("healthgate: This kernel has no Bluetooth support"))
        #expect(r.stderr.contains("modprobe bluetooth"))
        #expect(r.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: Self.tmp + "/never-created.jsonl"))
    }

    @Test func devicesWorksWithoutBluetooth() throws {
        let db = Self.tmp + "/devices.sqlite"
        // `devices` only reads: without a store it says so (66) and creates none.
        let missing = try CLIRun.run(["devices", "--json", "--db", db])
        #expect(missing.status == 66, "\(missing.stderr)")
        #expect(missing.stderr.contains("no health store") && !FileManager.default.fileExists(atPath: db))
        #expect(try CLIRun.run(["migrate", "--db", db]).status == 0)
        let r = try CLIRun.run(["devices", "--json", "--db", db])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        let t = try CLIRun.run(["devices", "--db", db])
        #expect(t.status == 0)
        #expect(t.stderr.contains("healthgate pair"))
    }

    @Test func helpTeachesEveryCommand() throws {
        for cmd in ["scan", "devices", "pair", "live", "reset-energy", "record"] {
            let r = try CLIRun.run([cmd, "--help"])
            #expect(r.status == 0)
            #expect(r.stdout.contains("Example"), "\(cmd) --help has no example")
        }
    }

    @Test func aTimeoutOutOfRangeSaysTheRuleItBreaks() throws {
        // The message and the rule agree: 0 is refused, so the message must not say "between 0 and".
        for (args, bound) in [(["scan", "--timeout", "0"], "3600"), (["scan", "--timeout", "3601"], "3600"),
                              (["pair", "AA:BB:CC:DD:EE:FF", "--connect-timeout", "0"], "600")] {
            let r = try CLIRun.run(args)
            #expect(r.status == 64, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("more than 0 and at most \(bound)") && !r.stderr.contains("between 0"), "\(args): \(r.stderr)")
        }
    }

    @Test func badAddressIsAUsageError() throws {
        let r = try CLIRun.run(["pair", "not-an-address"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("AA:BB:CC:DD:EE:FF"))
    }

    @Test func badOptionIsAUsageError() throws {
        let r = try CLIRun.run(["scan", "--timeout", "0"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--timeout"))
    }
}
