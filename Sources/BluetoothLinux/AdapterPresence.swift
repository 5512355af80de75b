import CBlueZ
#if canImport(Glibc)
import Glibc
#endif

/// Whether an adapter a connection needs is there and powered: what tells "the strap is out
/// of reach" from "the adapter was powered off or unplugged" when the kernel says only "no
/// route to host" or "connection reset".
package enum AdapterPresence: Sendable, Equatable {
    /// Present and powered.
    case up
    /// Present, powered off (or blocked by rfkill): its name, `hci0`.
    case poweredOff(String)
    /// Not there: never plugged in, unplugged, or unregistered by its driver during a reset.
    case absent
}

extension Adapter {
    /// Whether any adapter is powered (the kernel's route for a connect without an adapter):
    /// one socket and one ioctl, cheap enough to poll while waiting for an adapter.
    package static var anyPowered: Bool { hci_get_route(nil) >= 0 }

    /// Whether adapter `id` is there and powered; with `nil`, whether any adapter is (up when
    /// one is powered, else powered off when one exists, else absent). Asks the kernel
    /// (`HCIGETDEVINFO`, up to 16 adapters): call it on error paths, not per packet.
    package static func presence(_ id: Int32?) -> AdapterPresence {
        if let id {
            guard let adapter = try? info(id) else { return .absent }
            return adapter.isUp ? .up : .poweredOff(adapter.name)
        }
        let all = (0..<16).compactMap { try? info(Int32($0)) }
        if all.contains(where: \.isUp) { return .up }
        return all.first.map { .poweredOff($0.name) } ?? .absent
    }
}

extension BluetoothError {
    /// This error reread in the light of the adapter, for the two errors an adapter that went
    /// away looks like: a connect with no route to the device (the kernel finds no powered
    /// adapter) becomes `.adapterDown` / `.noAdapter` with their messages, and a link that
    /// ended (`.linkLost`) keeps its kind but names the adapter as the cause instead of the
    /// strap's range. Other errors, and any error while the adapter is up, are returned as
    /// they are. `presence` is asked only for those two errors.
    package func blamingAdapter(_ presence: () -> AdapterPresence) -> BluetoothError {
        switch kind {
        case .deviceNotFound, .linkLost: break
        default: return self
        }
        let state = presence()
        switch (kind, state) {
        case (_, .up):
            return self
        case (.deviceNotFound, .poweredOff(let name)):
            return BluetoothError(.adapterDown, Self.adapterDownMessage(name), errno: ENETDOWN)
        case (.deviceNotFound, _):
            return BluetoothError(.noAdapter, Self.noAdapterMessage(nil), errno: ENODEV)
        case (_, .poweredOff(let name)):
            return BluetoothError(.linkLost, "The link ended because Bluetooth adapter \(name) was powered off: power it on again with `bluetoothctl power on` (or `btmgmt --index \(name.replacingPrefix("hci")) power on`).", errno: errno)
        case (_, .absent):
            return BluetoothError(.linkLost, "The link ended because the Bluetooth adapter went away (unplugged, or reset by its driver): plug it in again, or check `dmesg` for why it was removed.", errno: errno)
        }
    }
}
