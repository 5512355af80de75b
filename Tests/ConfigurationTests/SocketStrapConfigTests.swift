import Foundation
import Testing
@testable import HealthGateConfiguration

/// `[[strap]] socket = "/path"`: a strap reached over a Unix socket instead of Bluetooth;
/// exactly one of `address` and `socket`, and every mistake reported with file and line.
@Suite struct SocketStrapConfigTests {
    @Test func readsASocketStrapBesideABluetoothOne() throws {
        let c = try GatewayConfig.parse("""
            [[strap]]
            socket = "/run/healthgate-sim/strap-1.sock"
            name = "Sim Strap 1"

            [[strap]]
            address = "aa:bb:cc:dd:ee:ff"
            """, file: "t.toml")
        #expect(c.straps.count == 2)
        #expect(c.straps[0].socket == "/run/healthgate-sim/strap-1.sock" && c.straps[0].address == nil && c.straps[0].name == "Sim Strap 1")
        #expect(c.straps[1].address == "AA:BB:CC:DD:EE:FF" && c.straps[1].socket == nil)
    }

    @Test(arguments: [
        ConfigCase(text: "[[strap]]\naddress = \"AA:BB:CC:DD:EE:FF\"\nsocket = \"/run/s.sock\"\n", line: 3,
             says: "'socket' in [[strap]] #1: give either 'address' (over Bluetooth) or 'socket'"),
        ConfigCase(text: "# x\n[[strap]]\nsocket = \"strap.sock\"\n", line: 3, says: "'strap.sock' is not an absolute path"),
        ConfigCase(text: "[[strap]]\nsocket = \"/\(String(repeating: "d", count: 120)).sock\"\n", line: 2, says: "longer than the 107 a Unix socket allows"),
        ConfigCase(text: "[[strap]]\nsocket = \"/run/s.sock\"\naddress_type = \"random\"\n", line: 3, says: "'address_type' goes with 'address'"),
        ConfigCase(text: "[[strap]]\nsocket = 5\n", line: 2, says: "'socket' in [[strap]] #1: expected a string in quotes"),
        ConfigCase(text: "[[strap]]\nname = \"x\"\n", line: 1, says: "or 'socket' (a Unix socket carrying its ATT channel)"),
        ConfigCase(text: "[[strap]]\nsocket = \"/run/s.sock\"\nsockett = \"/run/t.sock\"\n", line: 3, says: "known keys here: address, address_type, name, socket, encrypt"),
        ConfigCase(text: "[[strap]]\nsocket = \"/run/s.sock\"\nencrypt = true\n", line: 3, says: "'encrypt' goes with 'address'"),
        ConfigCase(text: "[[strap]]\naddress = \"AA:BB:CC:DD:EE:FF\"\nencrypt = \"yes\"\n", line: 3, says: "'encrypt' in [[strap]] #1: expected true or false"),
    ])
    func reportsFileLineAndWhatIsWrong(_ c: ConfigCase) {
        expectConfigError(c)
    }
}
