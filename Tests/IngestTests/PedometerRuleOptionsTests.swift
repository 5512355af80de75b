import Foundation
import HealthGateTesting
import HealthModel
import Logging
import SerialPedometer
import Simulators
import Testing
@testable import Gateway
@testable import Ingest
@testable import HealthGateConfiguration

/// A `[[pedometer]]` rule's serial options (id, format, counter bits, device time, flow
/// control) reach the source `run`'s watcher opens. (Reading the keys: ConfigurationTests.)
@Suite struct PedometerRuleOptionsTests {
    @Test func aRulesOptionsAreTheSourcesOptions() throws {
        let c = try GatewayConfig.parse("""
            [[pedometer]]
            path = "/dev/ttyUSB0"
            format = "int"
            counter_bits = 24
            device_time = "trust"
            flow_control = "rtscts"

            [[pedometer]]
            path = "/dev/ttyACM0"
            """, file: "t.toml")
        #expect(c.pedometers[0].sourceOptions == PedometerSource.Options(baud: 115_200, flowControl: .rtscts, format: .integer,
                                                                        counterBits: 24, trustDeviceTime: true))
        #expect(c.pedometers[1].sourceOptions == PedometerSource.Options(baud: 115_200, flowControl: .none, format: .auto,
                                                                        counterBits: nil, trustDeviceTime: false))
    }

    /// The rule's options reach the source the watcher opens: with `counter_bits = 16` a
    /// decrease that fits is a wrap (steps kept), and `id` keys the samples and the state.
    @Test func theWatcherOpensSourcesWithTheRulesOptions() async throws {
        let ped = try SimulatedPedometer()
        let c = try GatewayConfig.parse("""
            [[pedometer]]
            path = "\(ped.path)"
            id = "PED-CFG"
            format = "int"
            counter_bits = 16
            """, file: "t.toml")
        let rig = try DaemonRig(path: temporaryStorePath())
        let watcher = PedometerWatcher(rules: c.pedometers, runner: rig.runner, logger: Logger(label: "test"))
        #expect(watcher.scanOnce() == [ped.path])
        ped.writeLine("65530")
        ped.writeLine("4")
        #expect(await eventually { rig.steps().count == 1 })
        _ = await offThread { rig.stop() }
        let s = try #require(rig.steps().first)
        #expect(s.quantity.value == 10, "65530 → 4 wrapped at 2^16")
        #expect(s.metadata.syncIdentifier?.hasPrefix("serial:PED-CFG:") == true)
        #expect(rig.counterState("PED-CFG")?.tally.wraps == 1)
    }

}
