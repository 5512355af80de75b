import BluetoothLinux
import Foundation
import HealthModel
import HealthStore

/// Why a strap a user named could not be found.
package enum StrapLookupError: Error, CustomStringConvertible, Equatable {
    /// No remembered device has that name.
    case unknownName(String)
    /// The name is a device of another kind (a pedometer).
    case notAStrap(String, kind: String)
    /// No strap is remembered, and none was named.
    case noneRemembered

    package var description: String {
        switch self {
        case .unknownName(let text):
            "No remembered device is called \"\(text)\": list them with `healthgate devices`, or give the strap's address (AA:BB:CC:DD:EE:FF, from `healthgate scan`)."
        case .notAStrap(let text, let kind):
            "\"\(text)\" is a \(kind) device, not a Bluetooth LE strap: `healthgate devices` lists the straps."
        case .noneRemembered:
            "No strap is remembered yet: pair one with `healthgate pair ADDRESS --name NAME` (find it with `healthgate scan`), or name one: `healthgate live ADDRESS`."
        }
    }
}

extension StrapTarget {
    /// The strap at `address` as the registry knows it: the address type given, else the one
    /// `pair` remembered, else a guess from the address; the alias, else the device's name.
    package static func known(_ address: BluetoothAddress, record: DeviceRecord?, addressType: AddressType? = nil,
                              name: String? = nil) -> StrapTarget {
        let type = addressType ?? record?.addressType.flatMap(AddressType.init(rawValue:)) ?? guessAddressType(address)
        return StrapTarget(address: address, addressType: type, name: name ?? record?.alias ?? record?.device.name)
    }

    /// The strap a user means by `text`: an address (remembered or not) or a remembered name.
    /// - Throws: ``StrapLookupError``, or the store's error.
    package static func resolve(_ text: String, store: HealthStore?, addressType: AddressType?) throws -> StrapTarget {
        if let address = BluetoothAddress(text) {
            return known(address, record: try store?.device(address: address.description), addressType: addressType)
        }
        guard let store, let record = try store.device(matching: text) else { throw StrapLookupError.unknownName(text) }
        guard record.kind == .ble, let a = record.address, let address = BluetoothAddress(a) else {
            throw StrapLookupError.notAStrap(text, kind: record.kind.rawValue)
        }
        return known(address, record: record, addressType: addressType)
    }

    /// ``resolve(_:store:addressType:)`` for a command that only connects (`record`,
    /// `reset-energy`): the store at `path` is opened read-only, and not at all when it does not
    /// exist (an address needs none), so looking a strap up never creates, migrates or writes a
    /// store.
    /// - Throws: ``StrapLookupError``, or the store's error (a store at an older schema: 78).
    package static func resolve(_ text: String, storeAt path: String, addressType: AddressType?) throws -> StrapTarget {
        let store = FileManager.default.fileExists(atPath: path) ? try HealthStore(path: path, mode: .readOnly) : nil
        return try resolve(text, store: store, addressType: addressType)
    }

    /// The straps a user means by `texts` (``resolve(_:store:addressType:)``, the same strap
    /// once), or every remembered one when `texts` is empty (`live` with no strap named).
    /// - Throws: ``StrapLookupError``, or the store's error.
    package static func resolve(all texts: [String], store: HealthStore, addressType: AddressType?) throws -> [StrapTarget] {
        if texts.isEmpty { return try remembered(in: store, addressType: addressType) }
        var targets: [StrapTarget] = []
        for text in texts {
            let t = try resolve(text, store: store, addressType: addressType)
            if !targets.contains(where: { $0.address == t.address }) { targets.append(t) }
        }
        return targets
    }

    /// Every strap the registry remembers (`live` with no address).
    /// - Throws: ``StrapLookupError/noneRemembered``, or the store's error.
    package static func remembered(in store: HealthStore, addressType: AddressType?) throws -> [StrapTarget] {
        let targets = try store.devices(kind: .ble).compactMap { r in
            r.address.flatMap(BluetoothAddress.init).map { known($0, record: r, addressType: addressType) }
        }
        guard !targets.isEmpty else { throw StrapLookupError.noneRemembered }
        return targets
    }
}
