import Foundation
import GATT
import HealthGateTesting
import HealthModel
import HealthStore
import Simulators
import Testing
@testable import BluetoothLinux
@testable import Gateway

@Suite("pair: read and remember (simulated strap over a socket pair, real SQLite)")
struct PairingTests {
    static let target = StrapTarget(address: BluetoothAddress("F0:F1:F2:F3:F4:F5")!, addressType: .random)

    @Test func remembersTheStrapUnderItsFriendlyName() async throws {
        let store = try StrapSessionTests.tempStore()
        let strap = SimulatedPeripheral.heartRateStrap()
        let when = Date(timeIntervalSince1970: 1_800_000_000)
        let r = try await Pairing.pair(Self.target, connector: { _, _ in try strap.connectSocketPair() }, alias: "chest",
                                       store: store, transactionTimeout: .seconds(5), now: when)
        #expect(r.info.sensorLocation == .chest)
        #expect(r.info.battery == 87)
        #expect(r.security == nil)  // not a kernel socket
        let d = try #require(try store.device(matching: "chest"))
        #expect(d.kind == .ble)
        #expect(d.address == "F0:F1:F2:F3:F4:F5")
        #expect(d.addressType == "random")
        #expect(d.alias == "chest")
        #expect(d.device.name == "HealthGate Sim HR")
        #expect(d.device.manufacturer == "HealthGate")
        #expect(d.device.model == "SIM-HR1")
        #expect(d.device.hardwareVersion == "1.0")
        #expect(d.device.firmwareVersion == "2.3.4")
        #expect(d.device.softwareVersion == "5.6")
        #expect(d.battery == 87)
        #expect(d.sensorLocation == .chest)
        #expect(d.lastSeen == when)
        #expect(strap.connectionCount == 1)
        #expect(await eventually { !strap.notifyHeartRate([0x06, 60]) })  // disconnected afterwards
    }

    @Test func pairingAgainKeepsTheNameAndUpdatesTheRest() async throws {
        let store = try StrapSessionTests.tempStore()
        var config = SimulatedStrapConfiguration()
        let first = SimulatedPeripheral.heartRateStrap(config)
        _ = try await Pairing.pair(Self.target, connector: { _, _ in try first.connectSocketPair() }, alias: "chest",
                                   store: store, transactionTimeout: .seconds(5))
        config.batteryLevel = 40
        config.firmwareRevision = "2.4.0"
        let again = SimulatedPeripheral.heartRateStrap(config)
        _ = try await Pairing.pair(Self.target, connector: { _, _ in try again.connectSocketPair() }, alias: nil,
                                   store: store, transactionTimeout: .seconds(5))
        let all = try store.devices(kind: .ble)
        #expect(all.count == 1)
        #expect(all.first?.alias == "chest")
        #expect(all.first?.battery == 40)
        #expect(all.first?.device.firmwareVersion == "2.4.0")
    }

    @Test func aDeviceThatIsNotAStrapIsNotRemembered() async throws {
        let store = try StrapSessionTests.tempStore()
        let lamp = SimulatedPeripheral(services: [SimulatedService(0x180F, [SimulatedCharacteristic(0x2A19, properties: [.read], value: [5])])])
        let e = await #expect(throws: BluetoothError.self) {
            try await Pairing.pair(Self.target, connector: { _, _ in try lamp.connectSocketPair() }, alias: "lamp",
                                   store: store, transactionTimeout: .seconds(5))
        }
        #expect(e?.exitCode == 69)
        #expect(try store.devices(kind: .ble).isEmpty)
    }
}
