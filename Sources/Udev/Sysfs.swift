import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Where the kernel's device tree is mounted (`/sys`), read directly: it works with or without a
/// udev daemon, and a test (or a chroot) can point it at a tree of its own.
package struct Sysfs: Sendable, Hashable {
    /// The mount point (`/sys`).
    package var root: String

    /// The environment variable that moves ``system`` elsewhere (tests and chroots only).
    package static let rootVariable = "HEALTHGATE_SYSFS_ROOT"

    /// A tree at `root`.
    package init(root: String = "/sys") { self.root = root }

    /// The environment variable that moves ``systemDeviceDirectory`` elsewhere (tests and containers
    /// only: a tree of fake ttys whose nodes are links to ptys).
    package static let deviceDirectoryVariable = "HEALTHGATE_DEV_DIR"

    /// `/sys`, or `$HEALTHGATE_SYSFS_ROOT` when set.
    package static var system: Sysfs { Sysfs(root: environment(rootVariable) ?? "/sys") }

    /// Where the nodes of sysfs's ttys are: `/dev`, or `$HEALTHGATE_DEV_DIR` when set.
    package static var systemDeviceDirectory: String { environment(deviceDirectoryVariable) ?? "/dev" }

    /// An environment variable's value; an empty one counts as unset.
    private static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The tty behind a device node or a link to one (`/dev/ttyUSB0`, `/dev/serial/by-id/…`), found
    /// by its device number as libudev does (`/sys/dev/char/MAJOR:MINOR`), else by its kernel
    /// name (`/sys/class/tty/NAME`). Nil when the path is no character device sysfs knows.
    package func tty(node path: String) -> SysfsTTY? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFCHR else { return nil }
        let dev = UInt64(st.st_rdev)
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~UInt64(0xfff))
        let minor = (dev & 0xff) | ((dev >> 12) & ~UInt64(0xff))
        let byNumber = "\(root)/dev/char/\(major):\(minor)"
        if FileManager.default.fileExists(atPath: byNumber) {
            return SysfsTTY(classDirectory: Self.resolve(byNumber), sysfs: self)
        }
        let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().lastPathComponent
        return tty(name: real)
    }

    /// The tty named `name` (`ttyUSB0`) in `/sys/class/tty`, if present.
    package func tty(name: String) -> SysfsTTY? {
        let dir = "\(root)/class/tty/\(name)"
        guard FileManager.default.fileExists(atPath: dir) else { return nil }
        return SysfsTTY(classDirectory: Self.resolve(dir), sysfs: self)
    }

    /// Every tty in `/sys/class/tty`, sorted by name.
    package func ttys() -> [SysfsTTY] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "\(root)/class/tty")) ?? []
        return names.sorted { $0.localizedStandardCompare($1) == .orderedAscending }.compactMap { tty(name: $0) }
    }

    static func resolve(_ path: String) -> String { URL(fileURLWithPath: path).resolvingSymlinksInPath().path }
}

/// One tty's entry in sysfs, and the USB device above it when there is one.
package struct SysfsTTY: Sendable, Hashable {
    /// The tty's class directory (`/sys/devices/…/ttyUSB0/tty/ttyUSB0`, links resolved).
    package var classDirectory: String
    /// The kernel name (`ttyUSB0`).
    package var name: String { (classDirectory as NSString).lastPathComponent }
    /// The USB port and device the tty belongs to; nil for a tty with no USB parent (a built-in
    /// UART, a virtual console, a pty).
    package var usb: USBPort?

    init(classDirectory: String, sysfs: Sysfs) {
        self.classDirectory = classDirectory
        self.usb = USBPort(ttyClassDirectory: classDirectory, sysfs: sysfs)
    }
}

/// The USB device and physical port behind a USB-serial tty, from sysfs.
package struct USBPort: Sendable, Hashable {
    /// USB vendor id, four lowercase hex digits (`idVendor`).
    package var vendorID: String
    /// USB product id (`idProduct`).
    package var productID: String
    /// The USB serial number (`serial`), trimmed; nil when the device has none (CH340, many PL2303).
    package var serial: String?
    /// The physical port, named as udev names it in `/dev/serial/by-path/`
    /// (`pci-0000:00:14.0-usb-0:1.2:1.0-port0`): the host controller, the hub ports down to the
    /// device, the configuration and interface, and the adapter's port number when it has several.
    /// The same socket gives the same path whatever ttyUSB number the kernel hands out.
    package var path: String

    /// Reads the USB device above the tty whose class directory is `dir`.
    init?(ttyClassDirectory dir: String, sysfs: Sysfs) {
        let fm = FileManager.default
        // The tty's parent device: the usb-serial port (ttyUSB*) or the USB interface (ttyACM*).
        let deviceLink = "\(dir)/device"
        guard (try? fm.destinationOfSymbolicLink(atPath: deviceLink)) != nil || fm.fileExists(atPath: deviceLink) else { return nil }
        var node = URL(fileURLWithPath: Sysfs.resolve(deviceLink))
        let top = Sysfs.resolve(sysfs.root)
        func read(_ dir: URL, _ attribute: String) -> String? {
            (try? String(contentsOf: dir.appendingPathComponent(attribute), encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let portNumber = read(node, "port_number")
        // Up to the USB interface (`1-1.2:1.0`: bus-ports:configuration.interface).
        var interface: URL?
        for _ in 0..<4 {
            if Self.isInterfaceName(node.lastPathComponent) { interface = node; break }
            node.deleteLastPathComponent()
        }
        guard let interface else { return nil }
        let device = interface.deletingLastPathComponent()
        guard let vendor = read(device, "idVendor"), let product = read(device, "idProduct") else { return nil }
        vendorID = vendor.lowercased()
        productID = product.lowercased()
        serial = read(device, "serial").flatMap { $0.isEmpty ? nil : $0 }
        // udev's path_id: "usb-0:" + the interface name after the bus number, then the host
        // controller and its parents ("pci-0000:00:14.0", "platform-3f980000.usb").
        let name = interface.lastPathComponent
        var parts = ["usb-0:" + name[name.index(after: name.firstIndex(of: "-")!)...]]
        var up = device
        while up.path.count > top.count, !up.lastPathComponent.hasPrefix("usb") || Int(up.lastPathComponent.dropFirst(3)) == nil {
            up.deleteLastPathComponent()   // past hubs, to the root hub (`usb1`)
        }
        up.deleteLastPathComponent()
        var skipping: String?
        while up.path.count > top.count, up.lastPathComponent != "devices" {
            let subsystem = Self.subsystem(of: up)
            if let subsystem, subsystem == skipping {
                up.deleteLastPathComponent()
                continue
            }
            skipping = nil
            if subsystem == "pci" || subsystem == "platform" {
                parts.insert("\(subsystem!)-\(up.lastPathComponent)", at: 0)
                skipping = subsystem
            }
            up.deleteLastPathComponent()
        }
        path = parts.joined(separator: "-") + (portNumber.map { "-port\($0)" } ?? "")
    }

    /// `1-1.2:1.0`: a bus number, a dash, hub ports joined by dots, a colon, configuration.interface.
    static func isInterfaceName(_ s: String) -> Bool {
        let halves = s.split(separator: ":", omittingEmptySubsequences: false)
        guard halves.count == 2, let dash = halves[0].firstIndex(of: "-") else { return false }
        let bus = halves[0][..<dash], ports = halves[0][halves[0].index(after: dash)...]
        let ci = halves[1].split(separator: ".", omittingEmptySubsequences: false)
        return !bus.isEmpty && bus.allSatisfy(\.isNumber) && !ports.isEmpty
            && ports.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
            && ci.count == 2 && ci.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }

    /// The device's subsystem (the name its `subsystem` link points at), or, in a tree without
    /// those links, `pci` for a name shaped like a PCI address (`0000:00:14.0`).
    static func subsystem(of dir: URL) -> String? {
        if let link = try? FileManager.default.destinationOfSymbolicLink(atPath: dir.appendingPathComponent("subsystem").path) {
            return (link as NSString).lastPathComponent
        }
        let n = dir.lastPathComponent
        let pci = n.split(separator: ":")
        if pci.count == 3, pci[0].count == 4, pci[1].count == 2, pci[2].contains(".") { return "pci" }
        return nil
    }
}
