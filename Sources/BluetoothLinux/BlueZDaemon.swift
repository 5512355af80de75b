import Foundation

/// Debian's `bluetoothd` (BlueZ), which runs on every Raspberry Pi OS and Debian install. It
/// answers the kernel's pairing requests (mgmt User Confirmation Request) and keeps bonds in
/// `/var/lib/bluetooth`; HealthGate talks to the kernel beside it (docs/operations.md,
/// "bluetoothd").
package enum BlueZDaemon {
    /// Whether a process named `bluetoothd` runs (any `/proc/PID/comm`). Read on error paths
    /// only, to say what to do.
    package static var isRunning: Bool {
        guard let pids = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return false }
        return pids.contains { pid in
            pid.first?.isNumber == true
                && (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == "bluetoothd"
        }
    }
}

extension BluetoothError {
    /// Pairing (`pair --bond`) did not reach encryption in time. The usual reason is that nobody
    /// confirmed the kernel's Just Works request: bluetoothd answers it, and with no pairing
    /// agent registered with it, it refuses ("No agent available"); without bluetoothd nobody
    /// answers at all.
    package static func pairingTimedOutMessage(_ address: BluetoothAddress, seconds: Int, bluetoothdRunning: Bool) -> String {
        if bluetoothdRunning {
            return "Pairing with \(address) did not complete within \(seconds) s: bluetoothd is running and answers the kernel's pairing requests, and with no pairing agent registered it refuses Just Works. Register one while you pair: in another terminal run `bluetoothctl`, type `agent NoInputNoOutput` and `default-agent`, leave it open, run this command again and answer `yes` when bluetoothctl asks to accept the pairing (docs/operations.md, \"bluetoothd\")."
        }
        return "Pairing with \(address) did not complete within \(seconds) s: nothing confirmed the kernel's Just Works pairing request. Start bluetoothd with a pairing agent (`bluetoothctl`, then `agent NoInputNoOutput` and `default-agent`, left open; answer `yes` when it asks to accept the pairing), make sure the strap is in pairing mode, and try again."
    }
}

extension BluetoothError {
    /// A connect refused with "busy" beside bluetoothd: the usual cause there is that bluetoothd
    /// holds a link to the strap — it keeps the link `pair --bond` made (its GATT client attaches
    /// to it) — and the kernel gives a link's ATT channel to one socket only (`EBUSY` from
    /// `l2cap_chan_connect`; the real-stack `bluetoothd` scenario). The message says how to free it.
    package func blamingBluetoothd(_ address: BluetoothAddress, running: () -> Bool = { BlueZDaemon.isRunning }) -> BluetoothError {
        guard kind == .busy, running() else { return self }
        return BluetoothError(.busy, "\(address) is busy: bluetoothd holds a link to it (it keeps the link of a strap it bonded with, and the kernel gives the strap's GATT channel to one program only). Free it with `bluetoothctl disconnect \(address)`; HealthGate connects as soon as it is free.", errno: errno)
    }
}
