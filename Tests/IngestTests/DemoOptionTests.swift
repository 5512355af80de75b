import Foundation
import HealthGateTesting
import Testing

/// `healthgate demo`'s numeric options: values it cannot honour exit 64 with the rule, instead of
/// trapping in a Double → Int conversion (issue #17 audit: `--duration inf` and `--rate 1e-300`
/// crashed).
@Suite struct DemoOptionTests {
    @Test(arguments: [
        (["--duration", "inf"], "--duration must be"),
        (["--duration", "1e300"], "--duration must be"),
        (["--duration", "31536001"], "--duration must be"),
        (["--duration", "nan"], "--duration must be"),
        (["--rate", "1e-300"], "--rate must be"),
        (["--rate", "0.009"], "--rate must be"),
        (["--rate", "nan"], "--rate must be"),
    ])
    func valuesItCannotHonourAreUsageErrors(args: [String], says: String) throws {
        let db = tempDBPath("demo-options")
        let r = try HealthGateExecutable.run(["demo", "--db", db, "--json", "--straps", "0", "--pedometers", "0"] + args)
        #expect(r.status == 64, "\(args): \(r.stderr)")
        #expect(r.stderr.contains(says), "\(args): \(r.stderr)")
    }

    @Test func theLowestRateRuns() throws {
        // 0.01 notifications per second (one every 100 s): the strap driver's sleep fits a UInt32
        // of microseconds; a short run ends normally.
        let db = tempDBPath("demo-options")
        let r = try HealthGateExecutable.run(["demo", "--db", db, "--json", "--straps", "1", "--pedometers", "0",
                                              "--rate", "0.01", "--duration", "0.5"])
        #expect(r.status == 0, "\(r.stderr)")
    }
}
