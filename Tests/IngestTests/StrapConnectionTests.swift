import GATT
import HealthGateTesting
import HealthModel
import Simulators
import Testing
@testable import BluetoothLinux
@testable import Gateway

@Suite("Strap connection: discovery, information, control point (simulated strap over a socket pair)")
struct StrapConnectionTests {
    static let target = StrapTarget(address: BluetoothAddress("C4:7C:8D:6A:1F:02")!, addressType: .random, name: "chest")

    static func open(_ strap: SimulatedPeripheral) async throws -> StrapConnection {
        try await StrapConnection.open(target.description, bearer: try strap.connectSocketPair(), transactionTimeout: .seconds(5))
    }

    @Test func readsInformationFromTheCompactLayout() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let c = try await Self.open(strap)
        defer { c.close() }
        let info = try await c.readInfo()
        #expect(info.gapName == "HealthGate Sim HR")
        #expect(info.manufacturer == "HealthGate")
        #expect(info.model == "SIM-HR1")
        #expect(info.hardwareRevision == "1.0")
        #expect(info.firmwareRevision == "2.3.4")
        #expect(info.softwareRevision == "5.6")
        #expect(info.sensorLocation == .chest)
        #expect(info.battery == 87)
        #expect(info.hasControlPoint)
        #expect(info.batteryNotifies)
        let device = info.device(localIdentifier: Self.target.localIdentifier, fallbackName: Self.target.name)
        #expect(device.localIdentifier == "C4:7C:8D:6A:1F:02")
        #expect(device.name == "HealthGate Sim HR")
        #expect(device.firmwareVersion == "2.3.4")
    }

    @Test func polarH7LayoutHasNoControlPoint() async throws {
        var config = SimulatedStrapConfiguration()
        config.layout = .polarH7
        config.bodySensorLocation = 9  // reserved: kept raw, shown as other
        config.manufacturer = nil
        let c = try await Self.open(.heartRateStrap(config))
        defer { c.close() }
        let info = try await c.readInfo()
        #expect(!info.hasControlPoint)
        #expect(info.manufacturer == nil)
        #expect(info.sensorLocationRaw == 9)
        #expect(info.sensorLocation == .other)
        let e = await #expect(throws: BluetoothError.self) { try await c.resetEnergyExpended() }
        #expect(e?.kind == .notSupported)
        #expect(e?.exitCode == 69)
        #expect(e?.message.contains("no Heart Rate Control Point") == true)
    }

    @Test func resetEnergyWritesOneToTheControlPoint() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let c = try await Self.open(strap)
        defer { c.close() }
        try await c.resetEnergyExpended()
        let handle = try #require(strap.valueHandle(of: 0x2A39))
        let write: [UInt8] = [0x12, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x01]
        #expect(strap.transcript.contains { $0.direction == .clientToServer && $0.bytes == write })
    }

    @Test func controlPointAnswering0x80IsNotSupported() async throws {
        let strap = SimulatedPeripheral(services: [
            SimulatedService(0x180D, [
                SimulatedCharacteristic(0x2A37, properties: [.notify]),
                SimulatedCharacteristic(0x2A39, properties: [.write]) { _ in .heartRateControlPointNotSupported },
            ]),
        ])
        let c = try await Self.open(strap)
        defer { c.close() }
        let e = await #expect(throws: BluetoothError.self) { try await c.resetEnergyExpended() }
        #expect(e?.kind == .notSupported)
        #expect(e?.message.contains("0x80") == true)
    }

    @Test func aDeviceWithoutHeartRateIsRefused() async throws {
        let lamp = SimulatedPeripheral(services: [
            SimulatedService(0x180F, [SimulatedCharacteristic(0x2A19, properties: [.read], value: [50])]),
        ])
        let e = await #expect(throws: BluetoothError.self) { try await Self.open(lamp) }
        #expect(e?.kind == .notSupported)
        #expect(e?.message.contains("not a heart-rate strap") == true)
    }

    @Test func missingOptionalServicesLeaveFieldsEmpty() async throws {
        var config = SimulatedStrapConfiguration()
        config.layout = .script  // only 0x180D with 0x2A37
        let c = try await Self.open(.heartRateStrap(config))
        defer { c.close() }
        let info = try await c.readInfo()
        #expect(info == StrapInfo())
    }

    @Test func addressTypeGuess() {
        #expect(StrapTarget.guessAddressType(BluetoothAddress("F0:F1:F2:F3:F4:F5")!) == .random)
        #expect(StrapTarget.guessAddressType(BluetoothAddress("00:22:D0:12:34:56")!) == .public)
    }
}
