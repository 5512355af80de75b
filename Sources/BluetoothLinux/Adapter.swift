import CBlueZ
#if canImport(Glibc)
import Glibc
#endif

/// A local Bluetooth adapter (`hci0`, …) as the kernel lists it.
package struct Adapter: Sendable, Hashable {
    /// The kernel's device id (0 for `hci0`).
    package let id: Int32
    /// The device name, `hci0`.
    package let name: String
    /// The adapter's public address.
    package let address: BluetoothAddress
    /// True when the adapter is powered (HCI_UP).
    package let isUp: Bool

    /// Finds an adapter and checks it is powered.
    ///
    /// - Parameter name: `hciN`, or `nil` for the first powered adapter.
    /// - Throws: ``BluetoothError`` — `.notInKernel` when the kernel has no Bluetooth,
    ///   `.noAdapter` when there is no such adapter, `.adapterDown` when it is powered off.
    package static func resolve(_ name: String?) throws -> Adapter {
        try probeKernel()
        let adapter: Adapter
        if let name {
            // Parse hciN ourselves: libbluetooth's hci_devid fails alike for "absent" and "down".
            guard name.hasPrefix("hci"), let n = Int32(name.dropFirst(3)), n >= 0 else {
                throw BluetoothError(.noAdapter, BluetoothError.noAdapterMessage(name), errno: ENODEV)
            }
            do { adapter = try info(n) } catch let e as BluetoothError where e.errno == ENODEV {
                throw BluetoothError(.noAdapter, BluetoothError.noAdapterMessage(name), errno: ENODEV)
            }
        } else {
            let id = hci_get_route(nil)
            if id >= 0 {
                adapter = try info(id)
            } else {
                // No powered adapter: tell "none at all" from "one that is off".
                guard let off = (0..<16).lazy.compactMap({ try? info(Int32($0)) }).first else {
                    throw BluetoothError(.noAdapter, BluetoothError.noAdapterMessage(nil), errno: ENODEV)
                }
                adapter = off
            }
        }
        guard adapter.isUp else {
            throw BluetoothError(.adapterDown, BluetoothError.adapterDownMessage(adapter.name), errno: ENETDOWN)
        }
        return adapter
    }

    /// Reads an adapter's name, address and power state.
    package static func info(_ id: Int32) throws -> Adapter {
        var di = hci_dev_info()
        guard hci_devinfo(id, &di) == 0 else {
            throw BluetoothError(errno: errno, during: .open(adapter: "hci\(id)"))
        }
        let name = withUnsafeBytes(of: di.name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let address = withUnsafeBytes(of: di.bdaddr) { BluetoothAddress(littleEndian: Array($0))! }
        return Adapter(id: id, name: name, address: address, isUp: di.flags & (1 << UInt32(HCI_UP)) != 0)
    }

    /// Fails with the kernel's own reason when AF_BLUETOOTH sockets cannot be made at all
    /// (no Bluetooth in the kernel, or not permitted), so every command reports it the same way.
    package static func probeKernel() throws {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { throw BluetoothError(errno: errno, during: .open(adapter: nil)) }
        close(fd)
    }
}
