import Foundation
import SerialPedometer
import Testing
import Udev
@testable import HealthGateConfiguration

/// The `[[pedometer]]` keys `serial watch` has as options (id, format with vendor profiles,
/// counter bits, device time, flow control): read, and every mistake reported with file, line
/// and what is wrong.
@Suite struct PedometerConfigTests {
    @Test func readsTheSerialOptionsAndProfiles() throws {
        let text = """
            [profiles.my-band]
            pattern = '^Step: (?<steps>\\d+)$'
            semantics = "delta"

            [[pedometer]]
            path = "/dev/ttyUSB0"
            id = "PED0001"
            format = "profile:my-band"
            counter_bits = 24
            device_time = "trust"
            flow_control = "rtscts"

            [[pedometer]]
            vendor = "10c4"
            format = "profile:seeed-bma456"

            [[pedometer]]
            path = "/dev/ttyACM0"
            """
        let c = try GatewayConfig.parse(text, file: "t.toml")
        #expect(c.pedometers.count == 3)
        let a = c.pedometers[0]
        #expect(a.id == "PED0001" && a.counterBits == 24 && a.trustDeviceTime && a.flowControl == .rtscts)
        guard case .profile(let p) = a.format else { Issue.record("format is \(a.format)"); return }
        #expect(p.name == "my-band" && p.semantics == .delta)
        #expect(c.profiles["my-band"] == p)
        #expect(a.baud == 115_200)
        #expect(c.pedometers[1].format == .profile(VendorProfile.builtIn["seeed-bma456"]!))
        // Left out: serial watch's defaults.
        let d = c.pedometers[2]
        #expect(d.id == nil && d.format == .auto && d.counterBits == nil && !d.trustDeviceTime && d.flowControl == .none)
    }

    /// One reader for `run` and the serial commands: serial.toml's `match = [...]` short form and
    /// a `tag` rule are pedometer rules, matched against devices as udev describes them.
    @Test func matchShortFormAndTagRulesAreRules() throws {
        let c = try GatewayConfig.parse("""
            match = ["1d50:6120", "serial:PED1", "tag:healthgate-pedometer", "by-id:usb-X-if00-port0"]
            [[pedometer]]
            tag = "mine"
            format = "int"
            """, file: "serial.toml")
        #expect(c.pedometers.map(\.summary) == ["tag:mine", "1d50:6120", "serial:PED1", "tag:healthgate-pedometer",
                                                  "/dev/serial/by-id/usb-X-if00-port0"])
        #expect(c.pedometers[0].format == LineFormat.integer)
        #expect(c.pedometers[1].format == LineFormat.auto)
        let ped = TTYDevice(sysname: "ttyUSB0", devnode: "/dev/ttyUSB0", tags: ["healthgate-pedometer"],
                            devlinks: ["/dev/serial/by-id/usb-X-if00-port0"], vendorID: "1d50", modelID: "6120", serialShort: "PED1")
        let other = TTYDevice(sysname: "ttyACM0", devnode: "/dev/ttyACM0", vendorID: "2341", modelID: "0043")
        #expect(c.pedometers.dropFirst().allSatisfy { $0.matches(ped) && !$0.matches(other) })
        #expect(!c.pedometers[0].matches(ped))
        #expect(c.pedometers.firstMatch(other) == nil)
        expectConfigError(ConfigCase(text: "match = [\"everything\"]\n", line: 1, says: "is not a device match"))
        expectConfigError(ConfigCase(text: "match = \"1d50:6120\"\n", line: 1, says: "expected an array of strings"))
    }

    @Test(arguments: [
        ConfigCase(text: "[[pedometer]]\npath = \"/dev/ttyUSB0\"\nformat = \"csv\"\n", line: 3,
             says: "'format' in [[pedometer]] #1: unknown line format \"csv\""),
        ConfigCase(text: "[[pedometer]]\npath = \"/dev/ttyUSB0\"\nformat = \"profile:nope\"\n", line: 3,
             says: "unknown vendor profile \"nope\""),
        ConfigCase(text: "[[pedometer]]\npath = \"/a\"\n[[pedometer]]\npath = \"/b\"\ncounter_bits = 20\n", line: 5,
             says: "'counter_bits' in [[pedometer]] #2: counter width 20 is not supported: use 16, 24 or 32"),
        ConfigCase(text: "[[pedometer]]\npath = \"/a\"\ncounter_bits = \"24\"\n", line: 3, says: "expected a whole number (16, 24 or 32), found string"),
        ConfigCase(text: "[[pedometer]]\npath = \"/a\"\ndevice_time = \"yes\"\n", line: 3, says: "'yes' is not a device time mode"),
        ConfigCase(text: "[[pedometer]]\npath = \"/a\"\nflow_control = \"cts\"\n", line: 3, says: "'cts' is not a flow control"),
        ConfigCase(text: "[[pedometer]]\npath = \"/a\"\nid = \"\"\n", line: 3, says: "the device id is empty"),
        ConfigCase(text: "[[pedometer]]\npath = \"/a\"\nformt = \"int\"\n", line: 3, says: "unknown key"),
        ConfigCase(text: "[profiles.x]\npattern = '(?<steps>\\d+'\n", line: 2, says: "vendor profile \"x\" has a bad pattern"),
        ConfigCase(text: "[profiles.x]\npattern = '(?<steps>\\d+)'\nsemantics = \"total\"\n", line: 3, says: "'total' is not a semantics"),
        ConfigCase(text: "[profiles.x]\nsemantics = \"delta\"\n", line: 1, says: "missing 'pattern'"),
    ])
    func reportsFileLineAndWhatIsWrong(_ c: ConfigCase) {
        expectConfigError(c)
    }
}
