import Platform
import BluetoothLinux
import Foundation
import GATT
import HealthModel
import HealthStore

/// What `pair` learned and remembered.
package struct PairResult: Sendable {
    /// The strap.
    package var target: StrapTarget
    /// What it said about itself.
    package var info: StrapInfo
    /// The device record as stored (HKDevice fields, keyed by address).
    package var device: Device
    /// The friendly name it is remembered under.
    package var alias: String?
    /// The link's security level and key size when the bearer is the kernel's (nil otherwise).
    package var security: (level: UInt8, keySize: UInt8)?
}

/// `pair`'s engine: connect (the one strap setup, ``StrapConnection``), read location / Device
/// Information / battery / name, and remember the strap in the store's device registry under a
/// friendly name.
package enum Pairing {
    /// Pairs with `target`.
    /// - Parameters:
    ///   - alias: the friendly name (`--name`); `nil` keeps an existing one.
    ///   - store: the registry to remember the strap in; `nil` only reads.
    /// - Throws: ``BluetoothLinux/BluetoothError`` (connect, permissions, not a strap),
    ///   ``GATT/GATTError`` (link lost during discovery), ``HealthStore/StoreError``.
    package static func pair(_ target: StrapTarget, connector: @escaping StrapConnector, alias: String?, store: HealthStore?,
                            stop: StopSignal = StopSignal(), transactionTimeout: Duration = .seconds(30),
                            now: Date = Date()) async throws -> PairResult {
        let connection = try await StrapConnection.connect(target, connector: connector, stop: stop,
                                                          transactionTimeout: transactionTimeout)
        defer { connection.close() }
        let security = (connection.client.bearer as? L2CAPSocket).flatMap { try? $0.security() }
        let info = try await connection.readInfo()
        let device = info.device(localIdentifier: target.localIdentifier, fallbackName: target.name)
        if let store {
            try store.upsertDevice(DeviceRecord(
                device: device, kind: .ble, address: target.address.description, addressType: target.addressType.rawValue,
                alias: alias, lastSeen: now, battery: info.battery, sensorLocation: info.sensorLocation))
        }
        return PairResult(target: target, info: info, device: device, alias: alias, security: security)
    }
}
