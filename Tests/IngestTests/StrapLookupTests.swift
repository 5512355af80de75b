import BluetoothLinux
import Foundation
import HealthModel
import HealthStore
import Testing
@testable import Gateway

/// Which strap a user means (`live`, `record`, `pair`, `reset-energy`, and `run`'s `[[strap]]`
/// tables): an address, remembered or not, or a remembered name; the address type given, else the
/// remembered one, else a guess from the address.
@Suite struct StrapLookupTests {
    func store() throws -> HealthStore {
        let store = try HealthStore(path: tempDBPath("strap-lookup"))
        _ = try store.upsertDevice(DeviceRecord(device: Device(name: "Polar H10", localIdentifier: "A0:9E:1A:00:00:01"), kind: .ble,
                                                address: "A0:9E:1A:00:00:01", addressType: "random", alias: "chest"))
        _ = try store.upsertDevice(DeviceRecord(device: Device(name: "pedo", localIdentifier: "serial:X1"), kind: .serial,
                                                address: "/dev/ttyUSB0", alias: "walker"))
        return store
    }

    @Test("a remembered name gives its address, remembered type and alias; a given type wins")
    func byName() throws {
        let db = try store()
        let t = try StrapTarget.resolve("chest", store: db, addressType: nil)
        #expect(t.address.description == "A0:9E:1A:00:00:01" && t.addressType == .random && t.name == "chest")
        #expect(try StrapTarget.resolve("chest", store: db, addressType: .public).addressType == .public)
    }

    @Test("an address: remembered → its record; unknown → a guess from the address (public for a public-looking one), no name")
    func byAddress() throws {
        let db = try store()
        #expect(try StrapTarget.resolve("a0:9e:1a:00:00:01", store: db, addressType: nil).name == "chest")
        let unknown = try StrapTarget.resolve("00:11:22:33:44:55", store: db, addressType: nil)
        #expect(unknown.addressType == StrapTarget.guessAddressType(unknown.address) && unknown.name == nil)
        #expect(try StrapTarget.resolve("00:11:22:33:44:55", store: nil, addressType: .random).addressType == .random)
    }

    /// `record` and `reset-energy` only connect: their lookup reads the store, and a missing one
    /// stays missing.
    @Test("a lookup by path opens the store read-only, and no store at all when there is none")
    func byPathReadOnly() throws {
        let db = try store()
        let t = try StrapTarget.resolve("chest", storeAt: db.path, addressType: nil)
        #expect(t.address.description == "A0:9E:1A:00:00:01" && t.addressType == .random && t.name == "chest")
        let missing = tempDBPath("strap-lookup-missing")
        try FileManager.default.createDirectory(atPath: (missing as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(try StrapTarget.resolve("00:11:22:33:44:55", storeAt: missing, addressType: .random).addressType == .random)
        #expect(throws: StrapLookupError.unknownName("chest")) { try StrapTarget.resolve("chest", storeAt: missing, addressType: nil) }
        #expect(!FileManager.default.fileExists(atPath: missing), "a lookup created the store")
    }

    @Test("several straps: each once (a name and its address are one strap); none named: every remembered one")
    func all() throws {
        let db = try store()
        let t = try StrapTarget.resolve(all: ["chest", "A0:9E:1A:00:00:01", "00:11:22:33:44:55"], store: db, addressType: nil)
        #expect(t.map(\.address.description) == ["A0:9E:1A:00:00:01", "00:11:22:33:44:55"])
        #expect(try StrapTarget.resolve(all: [], store: db, addressType: nil).map(\.name) == ["chest"])
        let empty = try HealthStore(path: tempDBPath("strap-lookup-empty"))
        #expect(throws: StrapLookupError.noneRemembered) { try StrapTarget.resolve(all: [], store: empty, addressType: nil) }
    }

    @Test("an unknown name, a pedometer's name, a name without a store: each its own error")
    func errors() throws {
        let db = try store()
        #expect(throws: StrapLookupError.unknownName("nobody")) { try StrapTarget.resolve("nobody", store: db, addressType: nil) }
        #expect(throws: StrapLookupError.notAStrap("walker", kind: "serial")) { try StrapTarget.resolve("walker", store: db, addressType: nil) }
        #expect(throws: StrapLookupError.unknownName("chest")) { try StrapTarget.resolve("chest", store: nil, addressType: nil) }
    }

    @Test("remembered: every BLE device (not the pedometer); none is its own error")
    func remembered() throws {
        let db = try store()
        #expect(try StrapTarget.remembered(in: db, addressType: nil).map(\.address.description) == ["A0:9E:1A:00:00:01"])
        let empty = try HealthStore(path: tempDBPath("strap-lookup-empty"))
        #expect(throws: StrapLookupError.noneRemembered) { try StrapTarget.remembered(in: empty, addressType: nil) }
    }
}
