import CBlueZ
#if canImport(Glibc)
import Glibc
import Platform
#endif

/// LE scanning on a raw HCI socket: active scan, duplicate filtering off (so every advertisement
/// arrives with a fresh RSSI), advertising reports parsed into ``AdvertisingReport``s.
///
/// The controller's scan state is saved and restored: if another user (the kernel's background
/// scan, bluetoothd's discovery) had scanning enabled when we started — detected because the
/// controller refuses new scan parameters while scanning (Command Disallowed) — a passive scan
/// with the kernel's default parameters is re-enabled on ``stop()``; otherwise scanning is left
/// off. ``stop()`` runs on every exit path of ``scan(for:until:onReport:)``.
///
/// Thread rules: one thread drives a scanner; the ``StopSignal`` may be raised from any thread.
package final class HCIScanner {
    /// Which HCI command set the controller accepted.
    package enum CommandSet: String, Sendable {
        /// LE Set Scan Parameters / Enable (Bluetooth 4.x, and 5.x controllers used that way).
        case legacy
        /// LE Set Extended Scan Parameters / Enable (controllers the kernel drives with 5.x commands).
        case extended
    }

    /// The adapter scanned on.
    package let adapter: Adapter
    /// The command set in use once scanning started.
    package private(set) var commandSet: CommandSet = .legacy
    /// Whether scanning was already on (by someone else) before we started.
    package private(set) var wasScanningBefore = false
    private var dd: Int32
    private var scanning = false

    /// Opens a raw HCI socket on `adapter`.
    /// - Throws: ``BluetoothError`` (permissions, no adapter).
    package init(adapter: Adapter) throws {
        self.adapter = adapter
        dd = hci_open_dev(adapter.id)
        guard dd >= 0 else { throw BluetoothError(errno: errno, during: .open(adapter: adapter.name)) }
    }

    deinit {
        stop()
        if dd >= 0 { hci_close_dev(dd) }
    }

    /// Starts an active scan with duplicate filtering off.
    /// - Parameters: interval and window in units of 0.625 ms (default 10 ms / 10 ms: continuous).
    package func start(interval: UInt16 = 0x0010, window: UInt16 = 0x0010) throws {
        // 1. Legacy parameters. Command Disallowed means scanning is on, or the controller is in
        //    extended mode (it refuses legacy commands once extended ones were used).
        var status = try setParameters(.legacy, active: true, interval: interval, window: window)
        if status == 0x0C {
            _ = try setEnable(.legacy, false, filterDuplicates: false)
            status = try setParameters(.legacy, active: true, interval: interval, window: window)
            if status == 0 { wasScanningBefore = true }
        }
        if status == 0 {
            commandSet = .legacy
        } else if status == 0x0C || status == 0x01 {
            commandSet = .extended
            status = try setParameters(.extended, active: true, interval: interval, window: window)
            if status == 0x0C {
                _ = try setEnable(.extended, false, filterDuplicates: false)
                status = try setParameters(.extended, active: true, interval: interval, window: window)
                if status == 0 { wasScanningBefore = true }
            }
            guard status == 0 else { throw BluetoothError.controller(status: status, command: "LE Set Extended Scan Parameters", adapter: adapter.name) }
        } else {
            throw BluetoothError.controller(status: status, command: "LE Set Scan Parameters", adapter: adapter.name)
        }
        let s = try setEnable(commandSet, true, filterDuplicates: false)
        guard s == 0 else { throw BluetoothError.controller(status: s, command: "LE Set Scan Enable", adapter: adapter.name) }
        scanning = true

        // Only LE Meta events from here on.
        var filter = hci_filter()
        hci_filter_clear(&filter)
        hci_filter_set_ptype(Int32(HCI_EVENT_PKT), &filter)
        hci_filter_set_event(Int32(EVT_LE_META_EVENT), &filter)
        guard setsockopt(dd, Int32(SOL_HCI), HCI_FILTER, &filter, socklen_t(MemoryLayout<hci_filter>.size)) == 0 else {
            let e = errno
            stop()
            throw BluetoothError(errno: e, during: .hciCommand("setting the HCI event filter", adapter: adapter.name))
        }
    }

    /// Stops our scan and restores the scan state found at ``start()``. Idempotent; errors are
    /// ignored (this runs on exit paths, where the adapter may already be gone).
    package func stop() {
        guard scanning else { return }
        scanning = false
        _ = try? setEnable(commandSet, false, filterDuplicates: false)
        if wasScanningBefore {
            // The kernel's passive background scan: 60 ms interval, 30 ms window, duplicates filtered.
            _ = try? setParameters(commandSet, active: false, interval: 0x0060, window: 0x0030)
            _ = try? setEnable(commandSet, true, filterDuplicates: true)
        }
    }

    /// Waits up to `timeout` seconds (or until `stop` fires) for the next advertising reports.
    /// - Returns: the reports of one HCI event (possibly empty), or `nil` when the time is up or
    ///   `stop` fired.
    package func next(timeout: Double, stop: StopSignal? = nil) throws -> [AdvertisingReport]? {
        var fds = [pollfd(fd: dd, events: Int16(POLLIN), revents: 0)]
        if let stop { fds.append(pollfd(fd: stop.fd, events: Int16(POLLIN), revents: 0)) }
        let n = SystemCall.poll(&fds, timeout: min(timeout, 3600))
        if n < 0 {
            throw BluetoothError(errno: errno, during: .hciCommand("reading advertising reports", adapter: adapter.name))
        }
        if n == 0 { return nil }
        if fds.count > 1, fds[1].revents != 0 { return nil }
        if fds[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && fds[0].revents & Int16(POLLIN) == 0 {
            throw BluetoothError(.adapterDown, BluetoothError.adapterDownMessage(adapter.name), errno: ENETDOWN)
        }
        var buf = [UInt8](repeating: 0, count: Int(HCI_MAX_EVENT_SIZE) + 1)
        let r = SystemCall.retrying { read(dd, &buf, buf.count) }
        if r < 0 {
            if errno == EAGAIN { return [] }
            throw BluetoothError(errno: errno, during: .hciCommand("reading advertising reports", adapter: adapter.name))
        }
        // A malformed event is skipped: one bad report must not end the scan.
        return (try? HCIEventParser.reports(fromPacket: Array(buf[0..<r]))) ?? []
    }

    /// Scans for `seconds` (or until `stop` fires), calling `onReport` for every report, then
    /// restores the scan state — also when `onReport` or the socket throws.
    package func scan(for seconds: Double, until stop: StopSignal? = nil,
                     onReport: (AdvertisingReport) throws -> Void) throws {
        try start()
        defer { self.stop() }
        let end = SystemCall.monotonicSeconds() + seconds
        while true {
            let left = end - SystemCall.monotonicSeconds()
            if left <= 0 { break }
            guard let reports = try next(timeout: left, stop: stop) else { break }
            for r in reports { try onReport(r) }
        }
    }

    // MARK: HCI commands

    private func setParameters(_ set: CommandSet, active: Bool, interval: UInt16, window: UInt16) throws -> UInt8 {
        let type: UInt8 = active ? 1 : 0
        switch set {
        case .legacy:
            // type, interval, window, own address type (public), filter policy (accept all)
            let p: [UInt8] = [type, UInt8(interval & 0xFF), UInt8(interval >> 8), UInt8(window & 0xFF), UInt8(window >> 8), 0, 0]
            return try command(ocf: UInt16(OCF_LE_SET_SCAN_PARAMETERS), p, name: "LE Set Scan Parameters")
        case .extended:
            // own address type, filter policy, PHYs (LE 1M), then per PHY: type, interval, window
            let p: [UInt8] = [0, 0, 0x01, type, UInt8(interval & 0xFF), UInt8(interval >> 8), UInt8(window & 0xFF), UInt8(window >> 8)]
            return try command(ocf: 0x0041, p, name: "LE Set Extended Scan Parameters")
        }
    }

    private func setEnable(_ set: CommandSet, _ enable: Bool, filterDuplicates: Bool) throws -> UInt8 {
        switch set {
        case .legacy:
            return try command(ocf: UInt16(OCF_LE_SET_SCAN_ENABLE), [enable ? 1 : 0, filterDuplicates ? 1 : 0], name: "LE Set Scan Enable")
        case .extended:
            // enable, filter duplicates, duration 0 (until disabled), period 0
            return try command(ocf: 0x0042, [enable ? 1 : 0, filterDuplicates ? 1 : 0, 0, 0, 0, 0], name: "LE Set Extended Scan Enable")
        }
    }

    /// Sends one LE controller command and returns its Command Complete status.
    private func command(ocf: UInt16, _ params: [UInt8], name: String) throws -> UInt8 {
        var cparams = params
        var status: UInt8 = 0xFF
        let rc = cparams.withUnsafeMutableBytes { cp in
            withUnsafeMutableBytes(of: &status) { rp in
                var rq = hci_request()
                rq.ogf = UInt16(OGF_LE_CTL)
                rq.ocf = ocf
                rq.cparam = cp.baseAddress
                rq.clen = Int32(cp.count)
                rq.rparam = rp.baseAddress
                rq.rlen = 1
                return hci_send_req(dd, &rq, 2000)
            }
        }
        guard rc >= 0 else { throw BluetoothError(errno: errno, during: .hciCommand(name, adapter: adapter.name)) }
        return status
    }
}

