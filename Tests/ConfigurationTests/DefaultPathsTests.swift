import Foundation
import Testing
@testable import HealthGateConfiguration

/// Where the store and the serial configuration are when no option names them: one rule for
/// every command (`run` adds the configuration file's path between the environment and XDG).
@Suite struct DefaultPathsTests {
    let home = ["HOME": "/home/ada"]

    @Test func theStoreIsTheOptionElseTheVariableElseTheFileElseXDG() {
        let env = home.merging(["HEALTHGATE_DB": "/env.sqlite", "XDG_DATA_HOME": "/xdg"]) { $1 }
        #expect(DefaultPaths.database(given: "/opt.sqlite", configured: "/cfg.sqlite", environment: env) == "/opt.sqlite")
        #expect(DefaultPaths.database(configured: "/cfg.sqlite", environment: env) == "/env.sqlite")
        #expect(DefaultPaths.database(configured: "/cfg.sqlite", environment: home) == "/cfg.sqlite")
        #expect(DefaultPaths.database(environment: ["XDG_DATA_HOME": "/xdg"]) == "/xdg/healthgate/health.sqlite")
        #expect(DefaultPaths.database(environment: home) == "/home/ada/.local/share/healthgate/health.sqlite")
    }

    /// An empty variable is unset, for `run` as for every other command (`run` used to take an
    /// empty `HEALTHGATE_DB` as given and ignore the file's path).
    @Test func anEmptyVariableCountsAsUnset() {
        let env = home.merging(["HEALTHGATE_DB": "", "XDG_DATA_HOME": "", "XDG_CONFIG_HOME": ""]) { $1 }
        #expect(DefaultPaths.database(configured: "/cfg.sqlite", environment: env) == "/cfg.sqlite")
        #expect(DefaultPaths.database(environment: env) == "/home/ada/.local/share/healthgate/health.sqlite")
        #expect(DefaultPaths.serialConfiguration(environment: env) == "/home/ada/.config/healthgate/serial.toml")
        #expect(DefaultPaths.serialConfiguration(environment: ["XDG_CONFIG_HOME": "/c"]) == "/c/healthgate/serial.toml")
    }

    @Test func aMissingDefaultSerialFileIsNoRulesButANamedOneMustExist() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("hg-\(UUID().uuidString).toml").path
        #expect(throws: ConfigError.self) { try GatewayConfig.loadSerial(path: missing) }
    }
}
