import Testing
@testable import Udev

/// Match rules from configuration: vid:pid, serial, by-id path, tag; never "every tty".
@Suite struct DeviceMatchTests {
    let pedometer = TTYDevice(sysname: "ttyUSB0", devnode: "/dev/ttyUSB0", tags: ["healthgate-pedometer"],
                              devlinks: ["/dev/healthgate/pedometer-PED0001",
                                         "/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_PED0001-if00-port0"],
                              vendorID: "0403", modelID: "6001", serialShort: "PED0001")
    let other = TTYDevice(sysname: "ttyACM0", devnode: "/dev/ttyACM0", vendorID: "2341", modelID: "0043",
                          serialShort: "X1")
    let console = TTYDevice(sysname: "tty1", devnode: "/dev/tty1", hasHardware: false)

    @Test(arguments: ["0403:6001", "usb:0403:6001", "vid:0403:6001", "0403:6001".uppercased(), "serial:PED0001",
                      "tag:healthgate-pedometer", "by-id:/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_PED0001-if00-port0",
                      "/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_PED0001-if00-port0",
                      "by-id:usb-FTDI_FT232R_USB_UART_PED0001-if00-port0"])
    func eachRuleKindMatchesThePedometerOnly(_ text: String) throws {
        let rule = try DeviceMatch(parsing: text)
        #expect(rule.matches(pedometer))
        #expect(!rule.matches(other))
        #expect(!rule.matches(console))
        #expect(try DeviceMatch(parsing: rule.description) == rule)
    }

    @Test(arguments: ["", "*", "all", "0403", "0403:60011", "serial:", "tag:", "xyz:0403:6001", "ttyUSB0",
                      "\u{FF10}403:6001", "0403:\u{FF16}001"])   // full-width digits: a rule no udev id can match
    func badRulesAreRejected(_ text: String) {
        #expect(throws: DeviceMatchError.self) { try DeviceMatch(parsing: text) }
    }

    @Test func noRulesMatchNothing() {
        let rules: [DeviceMatch] = []
        #expect(rules.firstMatch(pedometer) == nil)
        #expect([DeviceMatch.serial("X1"), .tag("healthgate-pedometer")].firstMatch(other) == .serial("X1"))
    }

    @Test func stableIDPrefersTheSerialNumber() {
        #expect(pedometer.stableID == "PED0001")
        #expect(pedometer.byIDPath == "/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_PED0001-if00-port0")
        #expect(TTYDevice(sysname: "ttyS0").stableID == "ttyS0")
    }
}
