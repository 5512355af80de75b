import Foundation
import Testing
@testable import HealthGateConfiguration

/// `[uplink.postgres]`: the PostgreSQL uplink `run` keeps going (docs/uplink.md); defaults,
/// every key, and every mistake reported with file and line.
@Suite struct UplinkConfigTests {
    @Test func readsEveryKeyAndDefaults() throws {
        let none = try GatewayConfig.parse("[store]\npath = \"/tmp/x.sqlite\"\n", file: "t.toml")
        #expect(none.uplinkPostgres == nil)
        let minimal = try GatewayConfig.parse("[uplink.postgres]\nurl = \"postgres://pi@fleet/health\"\n", file: "t.toml")
        #expect(minimal.uplinkPostgres == GatewayConfig.UplinkPostgres(url: "postgres://pi@fleet/health"))
        #expect(minimal.uplinkPostgres?.gateway == nil && minimal.uplinkPostgres?.batchSize == 5000)
        let full = try GatewayConfig.parse("""
            [uplink.postgres]
            url = "postgres://pi@fleet/health"
            gateway = "ward-3"
            batch_size = 1
            interval_ms = 10
            retry_backoff_ms = 500
            retry_max_backoff_ms = 500
            """, file: "t.toml")
        let u = try #require(full.uplinkPostgres)
        #expect(u.gateway == "ward-3" && u.batchSize == 1 && u.intervalMilliseconds == 10)
        #expect(u.retryBackoffMilliseconds == 500 && u.retryMaxBackoffMilliseconds == 500)
    }

    @Test func readsTheMQTTTable() throws {
        let minimal = try GatewayConfig.parse("[uplink.mqtt]\nurl = \"mqtt://broker\"\n", file: "t.toml")
        #expect(minimal.uplinkMQTT == GatewayConfig.UplinkMQTT(url: "mqtt://broker"))
        #expect(minimal.uplinkMQTT?.topicPrefix == "healthgate" && minimal.uplinkMQTT?.discoveryPrefix == "homeassistant")
        let full = try GatewayConfig.parse("""
            [uplink.mqtt]
            url = "mqtts://ha:pw@broker:8884"
            gateway = "ward-3"
            topic_prefix = "hg"
            discovery_prefix = ""
            ca_file = "/etc/ssl/certs/ca-certificates.crt"
            """, file: "t.toml")
        let m = try #require(full.uplinkMQTT)
        #expect(m.gateway == "ward-3" && m.topicPrefix == "hg" && m.discoveryPrefix == "" && m.caFile == "/etc/ssl/certs/ca-certificates.crt")
    }

    @Test(arguments: [
        ConfigCase(text: "[uplink.postgres]\ngateway = \"g\"\n", line: 1, says: "[uplink.postgres]: needs url = "),
        ConfigCase(text: "[uplink.postgres]\nurl = 5\n", line: 2, says: "'url' in [uplink.postgres]: expected a string in quotes"),
        ConfigCase(text: "[uplink.postgres]\nurl = \"postgres://x/y\"\nbatch_size = 0\n", line: 3, says: "batch_size"),
        ConfigCase(text: "[uplink.postgres]\nurl = \"postgres://x/y\"\ngateway = \"\"\n", line: 3, says: "a gateway name has 1 to 200 characters"),
        ConfigCase(text: "[uplink.postgres]\nurl = \"postgres://x/y\"\nretry_backoff_ms = 2000\nretry_max_backoff_ms = 1000\n", line: 4,
                   says: "must be at least retry_backoff_ms (2000)"),
        ConfigCase(text: "[uplink.postgres]\nurl = \"postgres://x/y\"\npassword = \"p\"\n", line: 3,
                   says: "known keys here: url, gateway, batch_size"),
        ConfigCase(text: "# x\n[uplink.mqttt]\nurl = \"mqtt://x\"\n", line: 2, says: "[uplink.mqttt]: unknown uplink; known: [uplink.postgres]"),
        ConfigCase(text: "[uplink.mqtt]\ngateway = \"g\"\n", line: 1, says: "[uplink.mqtt]: needs url = "),
        ConfigCase(text: "[uplink.mqtt]\nurl = \"mqtt://h\"\ngateway = \"a/b\"\n", line: 3, says: "no '/', '+' or '#'"),
        ConfigCase(text: "[uplink.mqtt]\nurl = \"mqtt://h\"\ntopic_prefix = \"\"\n", line: 3, says: "a topic level has 1 to 100 characters"),
        ConfigCase(text: "[uplink.mqtt]\nurl = \"mqtt://h\"\nqos = 2\n", line: 3, says: "known keys here: url, gateway, topic_prefix"),
    ])
    func reportsFileLineAndWhatIsWrong(_ c: ConfigCase) {
        expectConfigError(c)
    }
}
