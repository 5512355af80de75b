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

    @Test("forgetDevice: a device without samples loses its row; with samples the row stays for them, unlisted; state keys go")
    func forget() throws {
        let tmp = try TempStore()
        let strap = Device(name: "Strap", localIdentifier: "ble:AA")
        try tmp.store.upsertDevice(DeviceRecord(device: strap, kind: .ble, address: "AA:BB:CC:DD:EE:FF", alias: "chest"))
        let pedo = Device(name: "Pedometer", localIdentifier: "serial:1")
        try tmp.store.upsertDevice(DeviceRecord(device: pedo, kind: .serial, address: "/dev/ttyUSB0", battery: 50))
        try tmp.store.save([try sample(.stepCount, 5, from: 0, to: 10, device: pedo)],
                           state: ["serial.counter.1": Data("x".utf8), "serial.counter.2": Data("y".utf8)])

        let a = try tmp.store.forgetDevice(localIdentifier: "ble:AA")
        #expect(a.rowDeleted && a.samples == 0 && a.record.alias == "chest")
        #expect(try tmp.store.device(localIdentifier: "ble:AA") == nil)
        #expect(try scalar(tmp.store, "SELECT count(*) FROM devices WHERE local_identifier = 'ble:AA'") == 0)

        let b = try tmp.store.forgetDevice(localIdentifier: "serial:1", stateKeys: ["serial.counter.1", "serial.counter.9"])
        #expect(!b.rowDeleted && b.samples == 1 && b.removedStateKeys == ["serial.counter.1"])
        #expect(try tmp.store.state("serial.counter.1") == nil && tmp.store.state("serial.counter.2") != nil)
        #expect(try tmp.store.devices().filter { $0.kind != .other }.isEmpty)
        let kept = try #require(try tmp.store.device(localIdentifier: "serial:1"))
        #expect(kept.kind == .other && kept.address == nil && kept.battery == nil && kept.device.name == "Pedometer")
        #expect(try tmp.store.samples(SampleQuery(type: .stepCount)).first?.device?.name == "Pedometer")
        // Forgotten twice: not found. Seen again: registered afresh (the cache forgot the rows).
        #expect(throws: StoreError.self) { try tmp.store.forgetDevice(localIdentifier: "serial:1") }
        try tmp.store.save([try sample(.heartRate, 70, from: 20, device: strap)])
        try tmp.store.upsertDevice(DeviceRecord(device: strap, kind: .ble, address: "AA:BB:CC:DD:EE:FF"))
        #expect(try tmp.store.device(localIdentifier: "ble:AA")?.kind == .ble)
    }
}
