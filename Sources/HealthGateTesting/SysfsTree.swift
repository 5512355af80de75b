import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A sysfs-shaped directory tree for tests (`Sysfs(root:)`, `$HEALTHGATE_SYSFS_ROOT`): USB-serial
/// adapters plugged into ports of a host controller, laid out as the kernel lays them out, with
/// a real character device (a pty) standing in for each tty node.
///
/// ```
/// ROOT/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1.2/{idVendor,idProduct,serial}
/// ROOT/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1.2/1-1.2:1.0/ttyUSB0/port_number
/// ROOT/devices/…/1-1.2:1.0/ttyUSB0/tty/ttyUSB0/device -> ../../../ttyUSB0
/// ROOT/class/tty/ttyUSB0 -> ../../devices/…/ttyUSB0/tty/ttyUSB0
/// ROOT/dev/char/136:5 -> ../../devices/…/ttyUSB0/tty/ttyUSB0      (the pty's device number)
/// DEV/ttyUSB0 -> /dev/pts/5
/// ```
///
/// Thread rules: not thread-safe; build it from one thread.
package final class SysfsTree: @unchecked Sendable {
    /// The tree's root (what `/sys` would be).
    package let root: String
    /// A directory of device-node links (what `/dev` would hold: `ttyUSB0 -> /dev/pts/N`).
    package let dev: String
    /// The host controller's PCI address.
    package let controller: String
    private let fm = FileManager.default

    /// An empty tree under a fresh temporary directory, with one xHCI controller at `controller`.
    package init(controller: String = "0000:00:14.0") throws {
        let base = fm.temporaryDirectory.appendingPathComponent("hg-sysfs-\(UUID().uuidString)").path
        root = base + "/sys"
        dev = base + "/dev"
        self.controller = controller
        for d in ["\(root)/class/tty", "\(root)/dev/char", dev, "\(root)/bus/pci", "\(root)/bus/usb", "\(root)/bus/usb-serial"] {
            try fm.createDirectory(atPath: d, withIntermediateDirectories: true)
        }
        let pci = "\(root)/devices/pci0000:00/\(controller)"
        try fm.createDirectory(atPath: "\(pci)/usb1", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: "\(pci)/subsystem", withDestinationPath: "../../../bus/pci")
        try fm.createSymbolicLink(atPath: "\(pci)/usb1/subsystem", withDestinationPath: "../../../../bus/usb")
    }

    /// Removes the tree.
    package func remove() { try? fm.removeItem(atPath: (root as NSString).deletingLastPathComponent) }

    /// Plugs an adapter into hub port chain `port` (`"1.2"`: port 2 of the hub on root port 1) as
    /// tty `name` (`ttyUSB0`; `ttyACM*` gets no usb-serial port), backed by the character device at
    /// `node` (a pty's `/dev/pts/N`). Returns the device-node link `DEV/name`.
    @discardableResult
    package func plug(name: String, port: String, node: String, vendor: String = "1a86", product: String = "7523",
                     serial: String? = nil, interface: String = "1.0", portNumber: Int = 0) throws -> String {
        let usbDevice = "\(root)/devices/pci0000:00/\(controller)/usb1/" + hubChain(port)
        try fm.createDirectory(atPath: usbDevice, withIntermediateDirectories: true)
        try vendor.write(toFile: "\(usbDevice)/idVendor", atomically: true, encoding: .utf8)
        try product.write(toFile: "\(usbDevice)/idProduct", atomically: true, encoding: .utf8)
        if let serial { try (serial + "\n").write(toFile: "\(usbDevice)/serial", atomically: true, encoding: .utf8) }
        let iface = "\(usbDevice)/1-\(port):\(interface)"
        let isACM = name.hasPrefix("ttyACM")
        let parent = isACM ? iface : "\(iface)/\(name)"
        let classDir = "\(parent)/tty/\(name)"
        try fm.createDirectory(atPath: classDir, withIntermediateDirectories: true)
        if !isACM { try "\(portNumber)\n".write(toFile: "\(parent)/port_number", atomically: true, encoding: .utf8) }
        try fm.createSymbolicLink(atPath: "\(classDir)/device", withDestinationPath: "../..")
        let relative = String(classDir.dropFirst(root.count + 1))
        try fm.createSymbolicLink(atPath: "\(root)/class/tty/\(name)", withDestinationPath: "../../" + relative)
        try fm.createSymbolicLink(atPath: "\(root)/dev/char/\(Self.deviceNumber(node))", withDestinationPath: "../../" + relative)
        let link = "\(dev)/\(name)"
        try fm.createSymbolicLink(atPath: link, withDestinationPath: node)
        return link
    }

    /// Unplugs tty `name` (its class entry, its device-number entry and node link go; the USB
    /// device directory stays, as an empty port would look the same to the code under test).
    package func unplug(name: String) {
        let classLink = "\(root)/class/tty/\(name)"
        let target = URL(fileURLWithPath: classLink).resolvingSymlinksInPath().path
        if let numbers = try? fm.contentsOfDirectory(atPath: "\(root)/dev/char") {
            for n in numbers where URL(fileURLWithPath: "\(root)/dev/char/\(n)").resolvingSymlinksInPath().path == target {
                try? fm.removeItem(atPath: "\(root)/dev/char/\(n)")
            }
        }
        try? fm.removeItem(atPath: classLink)
        try? fm.removeItem(atPath: "\(dev)/\(name)")
        try? fm.removeItem(atPath: target)
    }

    /// `"1.2"` → `1-1/1-1.2` (each hub on the way is a directory of its own).
    private func hubChain(_ port: String) -> String {
        let parts = port.split(separator: ".")
        return (1...parts.count).map { "1-" + parts.prefix($0).joined(separator: ".") }.joined(separator: "/")
    }

    /// `MAJOR:MINOR` of the character device at `path`.
    package static func deviceNumber(_ path: String) -> String {
        var st = stat()
        precondition(stat(path, &st) == 0, "no device at \(path)")
        let dev = UInt64(st.st_rdev)
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~UInt64(0xfff))
        let minor = (dev & 0xff) | ((dev >> 12) & ~UInt64(0xff))
        return "\(major):\(minor)"
    }
}
