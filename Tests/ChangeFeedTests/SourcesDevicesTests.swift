import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

@Suite("sources lists each source's devices with counts; devices shows BLE and serial registrations")
struct SourcesDevicesTests {
    let strap = Device(name: "Polar H10", manufacturer: "Polar Electro Oy", model: "H10", localIdentifier: "ble:A0:9E:1A:00:00:01")
    let pedometer = Device(name: "Step Counter", manufacturer: "Acme", localIdentifier: "serial:usb-acme-1")

    func populate(_ db: TempDB) throws {
        let store = try db.open()
        // As `pair` (BLE) and the serial commands register them.
        try store.upsertDevice(DeviceRecord(device: strap, kind: .ble, address: "A0:9E:1A:00:00:01", alias: "chest"))
        try store.upsertDevice(DeviceRecord(device: pedometer, kind: .serial, address: "/dev/ttyUSB0"))
        let ble = Source(name: "HealthGate BLE", identifier: "org.healthgate.ble")
        let serial = Source(name: "HealthGate serial", identifier: "org.healthgate.serial")
        var samples: [QuantitySample] = []
        for k in 0..<3 {
            samples.append(try QuantitySample(type: .heartRate, quantity: Quantity(70, .countPerMinute),
                                              start: at(Double(k)), end: at(Double(k)), source: ble, device: strap))
        }
        for k in 0..<2 {
            samples.append(try QuantitySample(type: .stepCount, quantity: Quantity(10, .count), start: at(Double(k * 60)),
                                              end: at(Double(k * 60 + 60)), source: serial, device: pedometer))
        }
        samples.append(try steps(5, at: 0))   // a source without a device
        try store.save(samples)
    }

    @Test func sourcesJSONListsDevicesWithCounts() async throws {
        let db = TempDB()
        try populate(db)
        let r = try await CLI.run(["sources", "--json", "--db", db.path])
        #expect(r.status == 0, "\(r.stderr)")
        let list = try #require((try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [[String: Any]])
        func devices(_ id: String) -> [[String: Any]] {
            list.first { $0["identifier"] as? String == id }?["devices"] as? [[String: Any]] ?? []
        }
        let ble = devices("org.healthgate.ble")
        #expect(ble.count == 1)
        #expect(ble.first?["name"] as? String == "Polar H10")
        #expect(ble.first?["kind"] as? String == "ble")
        #expect(ble.first?["alias"] as? String == "chest")
        #expect(ble.first?["samples"] as? Int == 3)
        #expect(devices("org.healthgate.serial").first?["samples"] as? Int == 2)
        #expect(devices("org.healthgate.serial").first?["kind"] as? String == "serial")
        #expect(devices("com.example.watch").isEmpty)

        let typed = try await CLI.run(["sources", "--type", "stepCount", "--json", "--db", db.path])
        let tl = try #require((try? JSONSerialization.jsonObject(with: Data(typed.stdout.utf8))) as? [[String: Any]])
        #expect(Set(tl.compactMap { $0["identifier"] as? String }) == ["org.healthgate.serial", "com.example.watch"])

        let human = try await CLI.run(["sources", "--db", db.path])
        #expect(human.stdout.contains("chest (3)"))
    }

    @Test func devicesShowsBothRegistrations() async throws {
        let db = TempDB()
        try populate(db)
        let r = try await CLI.run(["devices", "--json", "--db", db.path])
        #expect(r.status == 0, "\(r.stderr)")
        let list = try #require((try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [[String: Any]])
        #expect(Set(list.compactMap { $0["localIdentifier"] as? String }) == [strap.localIdentifier!, pedometer.localIdentifier!])
        #expect(Set(list.compactMap { $0["kind"] as? String }) == ["ble", "serial"])
    }
}
