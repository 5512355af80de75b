import CUdev
import Foundation
import Synchronization
import Platform
#if canImport(Glibc)
@preconcurrency import Glibc
import Locking
#endif

/// Where device events come from.
package enum UdevEventSource: String, Sendable, Hashable, CaseIterable {
    /// Events after udevd applied its rules (permissions, symlinks, `ID_*`, tags are in place).
    case udev
    /// Raw kernel uevents: they work with no udev daemon, carry kernel properties only (the
    /// monitor adds sysfs USB ids), and may arrive before udevd has set permissions.
    case kernel
}

/// A device appearing or going away.
package struct UdevEvent: Sendable, Hashable {
    /// `add`, `remove`, `change`, `bind`, `unbind`, `move`.
    package var action: String
    /// The device; for `remove` only what the event carried (the device is gone from sysfs).
    package var device: TTYDevice
}

/// Listens for tty add/remove events on its own thread.
///
/// The source is `udev` when a udev daemon runs, else `kernel` (``source`` says which, so the
/// caller can log it). Events go to the handler on the monitor's thread, in order.
/// Thread rules: ``stop()`` may be called from any thread; the handler must not call it.
package final class UdevMonitor: @unchecked Sendable {
    /// The source in use.
    package let source: UdevEventSource
    private let udev: Udev
    private let monitor: OpaquePointer
    private let wake: WakePipe
    private let done = DispatchSemaphore(value: 0)
    private let stopped = Lock(false)

    /// Starts listening for `subsystem` events from `source` (nil: `udev` if a udev daemon runs,
    /// else `kernel`).
    /// - Throws: ``UdevError`` when the netlink socket cannot be opened.
    package init(subsystem: String = "tty", source: UdevEventSource? = nil,
                handler: @escaping @Sendable (UdevEvent) -> Void) throws {
        let udev = try Udev()
        let chosen = source ?? (udev.daemonIsRunning ? .udev : .kernel)
        guard let mon = udev_monitor_new_from_netlink(udev.handle, chosen.rawValue) else {
            throw UdevError.monitorFailed(source: chosen.rawValue, errno: errno)
        }
        udev_monitor_filter_add_match_subsystem_devtype(mon, subsystem, nil)
        guard udev_monitor_enable_receiving(mon) >= 0 else {
            let e = errno
            udev_monitor_unref(mon)
            throw UdevError.monitorFailed(source: chosen.rawValue, errno: e)
        }
        let wake: WakePipe
        do { wake = try WakePipe.make() } catch {
            udev_monitor_unref(mon)
            throw UdevError.monitorFailed(source: chosen.rawValue, errno: error.errno)
        }
        self.udev = udev
        self.monitor = mon
        self.source = chosen
        self.wake = wake
        let thread = Thread { [self] in self.loop(handler) }
        thread.name = "udev-monitor"
        thread.start()
    }

    deinit {
        stop()
        udev_monitor_unref(monitor)
    }

    /// Stops the monitor and waits for its thread to end (idempotent).
    package func stop() {
        let first = stopped.withLock { s in
            defer { s = true }
            return !s
        }
        guard first else { return }
        wake.poke()
        done.wait()
    }

    private func loop(_ handler: @Sendable (UdevEvent) -> Void) {
        defer { done.signal() }
        var fds = [pollfd(fd: udev_monitor_get_fd(monitor), events: Int16(POLLIN), revents: 0), wake.pollEntry]
        while true {
            if SystemCall.poll(&fds) < 0 { return }
            if fds[1].revents != 0 { return }
            while let dev = udev_monitor_receive_device(monitor) {
                let action = udev_device_get_action(dev).map { String(cString: $0) } ?? "change"
                var device = TTYDevice(dev)
                let syspath = device.syspath
                udev_device_unref(dev)
                // Kernel events carry no ID_*; read the ids from sysfs while the device exists.
                if source == .kernel, action != "remove", let fresh = udev.device(syspath: syspath) {
                    device = fresh
                }
                handler(UdevEvent(action: action, device: device))
            }
        }
    }
}
