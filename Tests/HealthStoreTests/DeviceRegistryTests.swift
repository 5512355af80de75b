import Foundation
import HealthModel
import Testing
@testable import HealthStore

@Suite("Device registry: upsert by local identifier, look up by alias, address or id")
struct DeviceRegistryTests {
    @Test("upsert keeps fields the update does not give, and lookups find the device")
    func upsertAndLookup() throws {
        let tmp = try TempStore()
        let first = try tmp.store.upsertDevice(DeviceRecord(
            device: Device(name: "Polar H10", manufacturer: "Polar", localIdentifier: "ble:AA"),
            kind: .ble, address: "AA:BB:CC:DD:EE:FF", addressType: "public", alias: "strap", battery: 90,
            sensorLocation: .chest))
        #expect(first.id != nil)
        let second = try tmp.store.upsertDevice(DeviceRecord(
            device: Device(firmwareVersion: "3.1", localIdentifier: "ble:AA"), kind: .ble, battery: 80))
        #expect(second.id == first.id)
        #expect(second.device.name == "Polar H10" && second.device.firmwareVersion == "3.1")
        #expect(second.battery == 80 && second.alias == "strap" && second.sensorLocation == .chest)
        #expect(try tmp.store.device(alias: "strap")?.id == first.id)
        #expect(try tmp.store.device(address: "aa:bb:cc:dd:ee:ff")?.id == first.id)
        #expect(try tmp.store.device(matching: "ble:AA")?.id == first.id)
        try tmp.store.markDeviceSeen(localIdentifier: "ble:AA", at: t(5), battery: 70)
        let seen = try #require(try tmp.store.device(localIdentifier: "ble:AA"))
        #expect(seen.lastSeen == t(5) && seen.battery == 70)
    }

    @Test("samples from a registered device share its row")
    func samplesUseRegistryRow() throws {
        let tmp = try TempStore()
        let rec = try tmp.store.upsertDevice(DeviceRecord(
            device: Device(name: "Pedometer", localIdentifier: "serial:1"), kind: .serial, address: "/dev/ttyUSB0"))
        try tmp.store.save([try sample(.stepCount, 5, from: 0, to: 10, device: Device(name: "Pedometer", localIdentifier: "serial:1"))])
        #expect(try tmp.store.devices().count == 1)
        #expect(try tmp.store.devices(kind: .serial).first?.id == rec.id)
        #expect(try tmp.store.samples(SampleQuery(device: "/dev/ttyUSB0")).count == 0)   // address is not a sample filter
        try tmp.store.setAlias("pedo", forLocalIdentifier: "serial:1")
        #expect(try tmp.store.samples(SampleQuery(device: "pedo")).count == 1)
    }

    @Test("a registry device needs a local identifier")
    func needsLocalIdentifier() throws {
        let tmp = try TempStore()
        #expect(throws: StoreError.self) { try tmp.store.upsertDevice(DeviceRecord(device: Device(name: "x"))) }
    }
}
