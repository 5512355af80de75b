import Foundation

/// The one rule naming a pedometer for its persisted counter state and sync identifiers, used by
/// `run`, `serial watch` and `replay` alike:
///
/// 1. the id given by hand (`--id`, `id = …` in a `[[pedometer]]` table), else
/// 2. the adapter's USB serial number (as udev writes it in `ID_SERIAL_SHORT`), else
/// 3. the physical USB port it is plugged into (udev's `/dev/serial/by-path/` name,
///    `pci-0000:00:14.0-usb-0:1.2:1.0-port0`), so two identical adapters without serial numbers
///    (CH340, many PL2303) keep their counts however the kernel numbers them, else
/// 4. the device node, links resolved (`/dev/ttyS0`; a built-in UART or a pty).
///
/// Everything comes from sysfs, so the id is the same with or without a udev daemon.
package struct PedometerIdentity: Sendable, Hashable {
    /// Which rule gave the id.
    package enum Basis: String, Sendable, Hashable, Codable {
        /// Given by hand.
        case given
        /// The USB serial number.
        case usbSerial = "usb-serial"
        /// The physical USB port.
        case usbPort = "usb-port"
        /// The device node (no USB parent).
        case node
    }

    /// The id.
    package var id: String
    /// Which rule gave it.
    package var basis: Basis
    /// The ids earlier versions of HealthGate kept this device's counter state under, newest rule
    /// first (`serial watch` used the by-id link name or the kernel name, `run` the device path):
    /// their state is carried over to ``id`` once (docs/serial-pedometers.md, "The pedometer id").
    package var legacyIDs: [String]
    /// The USB device, when there is one.
    package var usb: USBPort?

    /// Creates an identity by hand.
    package init(id: String, basis: Basis, legacyIDs: [String] = [], usb: USBPort? = nil) {
        self.id = id
        self.basis = basis
        self.legacyIDs = legacyIDs
        self.usb = usb
    }

    /// The identity of the tty at `path` (a node or a link to one).
    /// - Parameters:
    ///   - given: an id given by hand; it wins, and nothing is migrated to it.
    ///   - sysfs: where to read the device tree.
    ///   - byIDDirectory: where udev's by-id links live (an old `serial watch` id was a link's name).
    package static func resolve(path: String, given: String? = nil, sysfs: Sysfs = .system,
                               byIDDirectory: String = "/dev/serial/by-id") -> PedometerIdentity {
        let tty = sysfs.tty(node: path)
        if let given, !given.isEmpty { return PedometerIdentity(id: given, basis: .given, usb: tty?.usb) }
        let node = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let name = tty?.name ?? (node as NSString).lastPathComponent
        var legacy: [String] = []
        func addLegacy(_ s: String?) { if let s, !s.isEmpty, !legacy.contains(s) { legacy.append(s) } }
        let identity = choose(serial: tty?.usb?.serial, usbPort: tty?.usb?.path, node: node)
        switch identity.basis {
        case .usbSerial:
            // Both commands used the serial number already; only a raw one udev would rewrite differs.
            addLegacy(tty?.usb?.serial)
        case .usbPort:
            addLegacy(byIDLinkName(for: node, in: byIDDirectory))   // serial watch with udevd
            addLegacy(name)                                        // serial watch: ttyUSB0
            addLegacy("/dev/" + name)                              // run: /dev/ttyUSB0
            addLegacy(node)
            addLegacy(path)                                        // the path as given
        case .node, .given:
            addLegacy(name)
            addLegacy(path)
        }
        var out = identity
        out.usb = tty?.usb
        out.legacyIDs = legacy.filter { $0 != identity.id }
        return out
    }

    /// The rule itself, on what is known of a device (see the type's documentation).
    package static func choose(serial: String?, usbPort: String?, node: String) -> PedometerIdentity {
        if let serial, !udevSafe(serial).isEmpty { return PedometerIdentity(id: udevSafe(serial), basis: .usbSerial) }
        if let usbPort, !usbPort.isEmpty { return PedometerIdentity(id: usbPort, basis: .usbPort) }
        return PedometerIdentity(id: node, basis: .node)
    }

    /// A serial number as udev writes it in `ID_SERIAL_SHORT`: whitespace trimmed, runs of it
    /// made one `_`, and anything but letters, digits and `#+-.:=@_` replaced by `_`.
    package static func udevSafe(_ s: String) -> String {
        var out = ""
        var pendingSpace = false
        for ch in s.trimmingCharacters(in: .whitespacesAndNewlines) {
            if ch.isWhitespace { pendingSpace = true; continue }
            if pendingSpace { out.append("_"); pendingSpace = false }
            let allowed = (ch.isASCII && (ch.isLetter || ch.isNumber)) || "#+-.:=@_".contains(ch) || (!ch.isASCII && ch.isLetter)
            out.append(allowed ? ch : "_")
        }
        return out
    }

    /// The name of the `/dev/serial/by-id/` link pointing at `node`, if udev made one.
    static func byIDLinkName(for node: String, in directory: String) -> String? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().first { URL(fileURLWithPath: "\(directory)/\($0)").resolvingSymlinksInPath().path == node }
    }
}
