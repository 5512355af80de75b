import Foundation
import SerialPedometer
import Testing
import Udev
@testable import HealthGateConfiguration

/// `serial watch`'s flags as a one-source configuration: a flag given overrides the rule's key,
/// one not given keeps the rule's own; an id goes to a named device only.
@Suite struct PedometerOverridesTests {
    let config = try! GatewayConfig.parse("""
        match = ["1d50:6120"]
        [[pedometer]]
        tag = "mine"
        format = "int"
        counter_bits = 24
        """, file: "serial.toml")

    @Test func aNamedDeviceIsOneRuleWithEveryFlagItsID() throws {
        let o = PedometerOverrides(baud: 9600, flowControl: .rtscts, format: "kv", counterBits: 16, trustDeviceTime: true, id: "desk")
        let rules = try config.pedometerRules(device: "/dev/ttyUSB3", matches: ["serial:X"], overrides: o)
        #expect(rules.count == 1)
        let r = try #require(rules.first)
        #expect(r.summary == "/dev/ttyUSB3" && r.id == "desk" && r.baud == 9600 && r.flowControl == .rtscts)
        #expect(r.format == .keyValue && r.counterBits == 16 && r.trustDeviceTime)
    }

    @Test func withoutADeviceTheFilesRulesThenTheMatchesKeepTheirOwnKeysButNeverAnID() throws {
        let plain = try config.pedometerRules(matches: ["serial:PED1"])
        #expect(plain.map(\.summary) == ["tag:mine", "1d50:6120", "serial:PED1"])
        #expect(plain[0].format == .integer && plain[0].counterBits == 24 && plain[1].format == .auto)
        let flagged = try config.pedometerRules(matches: [], overrides: PedometerOverrides(counterBits: 32, id: "one"))
        #expect(flagged.allSatisfy { $0.counterBits == 32 && $0.id == nil })
        #expect(flagged[0].format == .integer, "a flag not given keeps the rule's key")
    }

    @Test func aBadMatchOrFormatIsRefused() throws {
        #expect(throws: DeviceMatchError.self) { try config.pedometerRules(matches: ["everything"]) }
        #expect(throws: (any Error).self) { try config.pedometerRules(device: "/dev/ttyUSB0", matches: [], overrides: PedometerOverrides(format: "profile:nope")) }
        #expect(try GatewayConfig(file: "empty").pedometerRules(matches: []).isEmpty)
    }
}
