import CUdev
import Foundation

/// Errors from libudev. Each says what failed and what to do.
package enum UdevError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `udev_new` failed (out of memory, or /sys is not mounted).
    case unavailable
    /// A monitor could not be created or enabled (netlink refused, e.g. in a restricted sandbox).
    case monitorFailed(source: String, errno: Int32)
    /// No such device in sysfs.
    case noDevice(String)

    package var description: String {
        switch self {
        case .unavailable:
            "libudev could not start (is /sys mounted?): serial devices cannot be listed"
        case .monitorFailed(let s, let e):
            "could not listen for \(s) device events: \(String(cString: strerror(e))) (errno \(e)); plug-in detection is unavailable, name the device path instead"
        case .noDevice(let p):
            "\(p) is not a tty device known to sysfs: check the path with `healthgate serial list`"
        }
    }
}

/// A libudev context. Thread rules: a context and the handles made from it are used by one
/// thread at a time; make one context per thread that needs one (they are cheap).
package final class Udev: @unchecked Sendable {
    let handle: OpaquePointer

    /// Creates a context.
    /// - Throws: ``UdevError/unavailable``.
    package init() throws {
        guard let u = udev_new() else { throw UdevError.unavailable }
        handle = u
    }

    deinit { udev_unref(handle) }

    /// True when a udev daemon (systemd-udevd) is running: its database then holds `ID_*`
    /// properties, tags and symlinks, and the `udev` event source works.
    package var daemonIsRunning: Bool {
        guard let q = udev_queue_new(handle) else { return false }
        defer { udev_queue_unref(q) }
        return udev_queue_get_udev_is_active(q) != 0
    }

    /// Every device in the `tty` subsystem, sorted by kernel name.
    ///
    /// Without a udev daemon, devices carry kernel properties only; the USB ids then come from
    /// sysfs (``TTYDevice/idsFromSysfs``), and there are no tags or by-id links.
    package func ttyDevices() throws -> [TTYDevice] {
        guard let e = udev_enumerate_new(handle) else { throw UdevError.unavailable }
        defer { udev_enumerate_unref(e) }
        udev_enumerate_add_match_subsystem(e, "tty")
        udev_enumerate_scan_devices(e)
        var out: [TTYDevice] = []
        var entry = udev_enumerate_get_list_entry(e)
        while let en = entry {
            if let path = udev_list_entry_get_name(en), let dev = udev_device_new_from_syspath(handle, path) {
                out.append(TTYDevice(dev))
                udev_device_unref(dev)
            }
            entry = udev_list_entry_get_next(en)
        }
        return out.sorted { $0.sysname.localizedStandardCompare($1.sysname) == .orderedAscending }
    }

    /// The tty device behind a device node or symlink (`/dev/ttyUSB0`,
    /// `/dev/healthgate/pedometer-PED0001`, `/dev/serial/by-id/…`).
    /// - Throws: ``UdevError/noDevice(_:)`` when it is not a character device known to sysfs.
    package func device(node path: String) throws -> TTYDevice {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFCHR,
              let dev = udev_device_new_from_devnum(handle, CChar(UInt8(ascii: "c")), st.st_rdev)
        else { throw UdevError.noDevice(path) }
        defer { udev_device_unref(dev) }
        return TTYDevice(dev)
    }

    /// The device at a sysfs path, if it still exists.
    package func device(syspath: String) -> TTYDevice? {
        guard let dev = udev_device_new_from_syspath(handle, syspath) else { return nil }
        defer { udev_device_unref(dev) }
        return TTYDevice(dev)
    }
}
