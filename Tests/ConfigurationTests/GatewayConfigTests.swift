import Foundation
import Testing
@testable import Ingest
@testable import HealthGateConfiguration

/// Config files: every key read, and every mistake reported with file, line and what is wrong.
@Suite struct GatewayConfigTests {
    @Test func readsEveryKey() throws {
        let text = """
            status_interval = 30
            [store]
            path = "/var/lib/healthgate/health.sqlite"

            [ingest]
            batch_size = 500
            flush_interval_ms = 100
            ring_capacity = 1024
            overflow = "spill"
            spill_limit = 5000
            durability = "every-commit"
            sync_interval_ms = 2000
            reconnect_pause_ms = 250
            reconnect_max_pause_ms = 4000
            reconnect_settle_ms = 3000

            [[strap]]
            address = "aa:bb:cc:dd:ee:ff"
            address_type = "random"
            name = "Chest"
            encrypt = true

            [[pedometer]]
            vendor = "1A86"
            product = "7523"
            baud = 9600
            """
        let c = try GatewayConfig.parse(text, file: "t.toml")
        #expect(c.databasePath == "/var/lib/healthgate/health.sqlite")
        #expect(c.statusInterval == 30)
        #expect(c.ingest.batchSize == 500)
        #expect(c.ingest.flushInterval == .milliseconds(100))
        #expect(c.ingest.ringCapacity == 1024)
        #expect(c.ingest.overflow == .spill(limit: 5000))
        #expect(c.durability == .everyCommit)
        #expect(c.reconnect == ReconnectPolicy(initialPause: .milliseconds(250), maximumPause: .seconds(4), settlePause: .seconds(3)))
        #expect(c.ingest.syncInterval == .milliseconds(2000))
        #expect(c.straps == [.init(address: "AA:BB:CC:DD:EE:FF", addressType: "random", name: "Chest", encrypt: true)])
        #expect(c.pedometers.count == 1)
        #expect(c.pedometers[0].vendor == "1a86" && c.pedometers[0].baud == 9600 && c.pedometers[0].path == nil)
    }

    @Test func theReconnectPolicyDefaultsAndItsSettlePauseStandsAlone() throws {
        #expect(try GatewayConfig.parse("", file: "t.toml").reconnect == ReconnectPolicy(initialPause: .milliseconds(500), maximumPause: .seconds(2), settlePause: .seconds(2)))
        let settleOnly = try GatewayConfig.parse("[ingest]\nreconnect_settle_ms = 0\n", file: "t.toml").reconnect
        #expect(settleOnly == ReconnectPolicy(initialPause: .milliseconds(500), maximumPause: .seconds(2), settlePause: .zero))
        let pausesOnly = try GatewayConfig.parse("[ingest]\nreconnect_pause_ms = 100\n", file: "t.toml").reconnect
        #expect(pausesOnly.settlePause == .seconds(2))
    }

    @Test func anOmittedAddressTypeIsLeftToRunToResolve() throws {
        let c = try GatewayConfig.parse("[[strap]]\naddress = \"f0:48:47:00:00:0a\"\n", file: "t.toml")
        #expect(c.straps == [.init(address: "F0:48:47:00:00:0A", addressType: nil, name: nil)])
    }

    @Test func theShippedSampleConfigParses() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/healthgate.toml")
        let c = try GatewayConfig.load(path: url.path)
        #expect(!c.straps.isEmpty)
        #expect(!c.pedometers.isEmpty)
    }

    @Test(arguments: [
        ConfigCase(text: "[ingest]\nbatch_size = 0\n", line: 2, says: "'batch_size' in [ingest]: 0 is outside 1…1000000"),
        ConfigCase(text: "# c\n[ingest]\nflush_interval_ms = \"fast\"\n", line: 3, says: "expected a whole number, found string"),
        ConfigCase(text: "[ingest]\nbach_size = 10\n", line: 2, says: "unknown key"),
        ConfigCase(text: "[ingest]\nsync_interval_ms = 600001\n", line: 2, says: "'sync_interval_ms' in [ingest]: 600001 is outside 0…600000"),
        ConfigCase(text: "[ingest]\nsync_interval_ms = -1\n", line: 2, says: "'sync_interval_ms' in [ingest]: -1 is outside 0…600000"),
        ConfigCase(text: "[ingest]\nsync_interval_ms = \"5s\"\n", line: 2, says: "expected a whole number, found string"),
        ConfigCase(text: "[ingest]\noverflow = \"block\"\n", line: 2, says: "'block' is not a policy"),
        ConfigCase(text: "[ingest]\nreconnect_settle_ms = 60001\n", line: 2, says: "'reconnect_settle_ms' in [ingest]: 60001 is outside 0…60000"),
        ConfigCase(text: "[ingest]\n\ndurability = \"sometimes\"\n", line: 3, says: "'sometimes' is not a durability mode"),
        ConfigCase(text: "[[strap]]\naddress = \"AA:BB\"\n", line: 2, says: "is not a Bluetooth address"),
        ConfigCase(text: "[[strap]]\naddress = \"AA:BB:CC:DD:EE:FF\"\n[[strap]]\nname = \"x\"\n", line: 3, says: "[[strap]] #2: missing 'address'"),
        ConfigCase(text: "[[pedometer]]\nbaud = 9600\n", line: 1, says: "give a 'path' or"),
        ConfigCase(text: "[store]\npath = \"a\"\n[ingest\n", line: 3, says: "not valid TOML"),
        ConfigCase(text: "colour = 1\n", line: 1, says: "'colour' in top level: unknown key"),
        // A misspelt table: the line of its header (it had no line number).
        ConfigCase(text: "[ingest]\nflush_interval_ms = 250\n\n[ingst]\nx = 1\n", line: 4, says: "'ingst' in top level: unknown key"),
        ConfigCase(text: "[ingst.sub]\nx = 1\n", line: 1, says: "'ingst' in top level: unknown key"),
        ConfigCase(text: "[[pedometers]]\npath = \"/a\"\n", line: 1, says: "'pedometers' in top level: unknown key"),
        // CRLF line ends and a byte-order mark keep the line numbers right (docs/input-rules.md).
        ConfigCase(text: "# c\r\n[ingest]\r\n\r\ndurability = \"sometimes\"\r\n", line: 4, says: "'sometimes' is not a durability mode"),
        ConfigCase(text: "\u{FEFF}# c\n[ingest]\nbatch_size = 0\n", line: 3, says: "'batch_size' in [ingest]: 0 is outside"),
        // A control character anywhere: toml++ (inside TOMLKit, HealthGate's TOML parser until
        // 2026-11) aborted the process on this one
        // (an assert in its key parser; found by fuzzing, docs/fuzzing.md); TOML allows none.
        ConfigCase(text: "[store]\npath = \"x\"\n\n[\u{1B}strap]]\n", line: 4, says: "the control character U+001B is not allowed in TOML"),
        ConfigCase(text: "# a comment with a NUL \u{0}\n", line: 1, says: "U+0000 is not allowed"),
        ConfigCase(text: "[[strap]]\nname = \"bell\u{7}\"\n", line: 2, says: "U+0007 is not allowed in TOML (not even in a string"),
        ConfigCase(text: "[ingest]\r\nbatch_size = 7\r\n\u{7F}\n", line: 3, says: "U+007F"),
        // A table header that does not start with a key: toml++ asserted in its key parser (fuzzing).
        ConfigCase(text: "[?tore]\npath = \"x\"\n", line: 1, says: "not valid TOML (column 2): expected a key (letters, digits, '_', '-', or a quoted key), found '?'"),
        ConfigCase(text: "status_interval = 5\n\n[[ *strap]]\n", line: 3, says: "(column 4): expected a key"),
        // An empty array element and a non-ASCII space: toml++ asserted in its value parser (fuzzing, CI).
        ConfigCase(text: "match = [}]\n", line: 1, says: "(column 10): expected a value"),
        ConfigCase(text: "[ingest]\nbatch_size =\u{3000}7\n", line: 2, says: "found the character U+3000"),
    ])
    func reportsFileLineAndWhatIsWrong(_ c: ConfigCase) {
        expectConfigError(c)
    }

    @Test func syncIntervalDefaultsToFiveSecondsAndZeroMeansAfterEachCommit() throws {
        #expect(try GatewayConfig.parse("[ingest]\nbatch_size = 7\n", file: "t.toml").ingest.syncInterval == .seconds(5))
        #expect(try GatewayConfig.parse("[ingest]\nsync_interval_ms = 0\n", file: "t.toml").ingest.syncInterval == .zero)
    }

    /// Brackets that are not headers — a multi-line array's rows, a `[` inside a string or a
    /// comment, quoted header keys — are left to the TOML parser (the header check must not refuse them).
    @Test func bracketsThatAreNotHeadersParse() throws {
        let c = try GatewayConfig.parse("""
            # [?not a header]
            match = [
              "1a86:7523",
              "tag:[?not-a-header]",
            ]

            ["ingest"]
            batch_size = 7
            """, file: "brackets.toml")
        #expect(c.ingest.batchSize == 7)
        #expect(c.pedometers.count == 2)
    }

    @Test func crlfAndByteOrderMarkParse() throws {
        let c = try GatewayConfig.parse("\u{FEFF}[ingest]\r\nbatch_size = 7\r\n", file: "crlf.toml")
        #expect(c.ingest.batchSize == 7)
    }

    @Test(arguments: [
        // Two straps with one address (case does not matter): the second is named, with the first's line.
        ConfigCase(text: "[[strap]]\naddress = \"AA:BB:CC:DD:EE:FF\"\nname = \"a\"\n\n[[strap]]\naddress = \"aa:bb:cc:dd:ee:ff\"\n",
                   line: 6, says: "'address' in [[strap]] #2: 'AA:BB:CC:DD:EE:FF' is already used by [[strap]] #1 at /etc/healthgate.toml:2"),
        ConfigCase(text: "[[strap]]\nsocket = \"/run/s.sock\"\n[[strap]]\nsocket = \"/run/s.sock\"\n",
                   line: 4, says: "is already used by [[strap]] #1 at /etc/healthgate.toml:2"),
        // Two pedometers with one id would share one counter state.
        ConfigCase(text: "[[pedometer]]\npath = \"/dev/ttyUSB0\"\nid = \"walk\"\n[[pedometer]]\npath = \"/dev/ttyUSB1\"\nid = \"walk\"\n",
                   line: 6, says: "'walk' is already used by [[pedometer]] #1 at /etc/healthgate.toml:3; two pedometers with one id would share one counter state"),
        // Without ids, two rules for one path are one device too.
        ConfigCase(text: "[[pedometer]]\npath = \"/dev/ttyUSB0\"\n[[pedometer]]\npath = \"/dev/ttyUSB0\"\n",
                   line: 4, says: "is already used by [[pedometer]] #1 at /etc/healthgate.toml:2"),
    ])
    func refusesDuplicateDevicesNamingBothLines(_ c: ConfigCase) {
        expectConfigError(c)
    }

    @Test func distinctDevicesAreAccepted() throws {
        let c = try GatewayConfig.parse("""
            [[strap]]
            address = "AA:BB:CC:DD:EE:01"
            [[strap]]
            address = "AA:BB:CC:DD:EE:02"
            [[pedometer]]
            path = "/dev/ttyUSB0"
            id = "a"
            [[pedometer]]
            path = "/dev/ttyUSB0"
            id = "b"
            [[pedometer]]
            vendor = "0403"
            [[pedometer]]
            vendor = "0403"
            product = "6001"
            """, file: "t.toml")
        #expect(c.straps.count == 2 && c.pedometers.count == 4)
    }

    @Test func aMissingFileSaysSo() {
        #expect(throws: ConfigError.self) { try GatewayConfig.load(path: "/nonexistent/healthgate.toml") }
    }
}
