import ArgumentParser
import BluetoothLinux
import Foundation
import Gateway
import HealthModel
import HealthStore
import Platform

/// `healthgate scan`: heart-rate straps nearby, live.
struct ScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Find Bluetooth LE heart-rate straps nearby (address, type, name, signal).",
        discussion: """
            Scans actively on a raw HCI socket with duplicate filtering off, so the signal strength \
            (RSSI) updates live. A strap is a device advertising the Heart Rate service (0x180D) in \
            either service list, or whose name looks like one (Polar H…, …HRM…, TICKR). Wear the \
            strap: most only advertise with skin contact.

            The table redraws in place on a terminal. With --json, one JSON object per device is \
            printed when the scan ends: address, addressType, name, rssi, services (16-bit UUIDs \
            as hex), heartRate (bool), connectable, txPower, manufacturer, reports.

            Needs CAP_NET_RAW and CAP_NET_ADMIN (root, or `setcap cap_net_raw,cap_net_admin+eip`). \
            Exits 0 when a device was found, 69 when none was (or there is no usable adapter), \
            77 without the capabilities. Ctrl-C ends the scan early and restores the adapter.

            Straps already remembered (`healthgate pair`) get their "last seen" time updated.

            Example:
              healthgate scan --timeout 5
              healthgate scan --adapter hci1 --all --json
            """)

    @OptionGroup var adapterOption: AdapterOption

    @Option(help: ArgumentHelp("How long to scan, in seconds.", valueName: "seconds"))
    var timeout: Double = 10

    @Flag(help: "List every advertising device, not only heart-rate straps.")
    var all = false

    @Flag(help: "Print one JSON object per device (one per line) when the scan ends.")
    var json = false

    @OptionGroup var store: StoreLocation

    func validate() throws {
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be more than 0 and at most 3600 seconds (got \(timeout)).") }
    }

    func run() throws {
        let adapter = try adapterOption.resolve()
        let stop = StopSignal()
        let trap = SignalTrap(raising: stop)
        defer { trap.cancel() }
        let scanner = try HCIScanner(adapter: adapter)
        var table = ScanResults()
        let live = !json && stdoutIsTerminal
        var drawnLines = 0
        var lastDraw = 0.0
        try scanner.scan(for: timeout, until: stop) { report in
            guard let change = table.add(report, at: Date()) else { return }
            let device = table.devices[change.index]
            guard all || device.data.isHeartRateSensor() else { return }
            if json { return }
            if live {
                let now = SystemCall.monotonicSeconds()
                guard change.isNew || now - lastDraw > 0.25 else { return }
                lastDraw = now
                drawnLines = redraw(table.rows(all: all), over: drawnLines)
            } else if change.becameVisible(all: all) {
                emitLine(ScanTable.line(device))
            }
        }
        let rows = table.rows(all: all)
        StrapRegistry.markSeen(rows.map { ($0.address.description, $0.lastSeen) }, storeAt: store.path)
        if json {
            for d in rows { try JSONOutput.emit(d.jsonObject) }
        } else if live {
            _ = redraw(rows, over: drawnLines)
        }
        if rows.isEmpty {
            let what = all ? "No Bluetooth LE device" : "No heart-rate strap"
            throw CLIFailure("\(what) was heard on \(adapter.name) within \(stop.isRaised ? "the scan" : "\(TerminalText.seconds(timeout))"): wear the strap (most advertise only with skin contact), bring it closer, disconnect it from phones and watches, or scan longer with --timeout.", code: .unavailable)
        }
    }

    private func redraw(_ rows: [ScannedDevice], over lines: Int) -> Int {
        var out = lines > 0 ? "\u{1B}[\(lines)A" : ""
        out += "\u{1B}[2K" + ScanTable.header + "\n"
        for d in rows { out += "\u{1B}[2K" + ScanTable.line(d) + "\n" }
        print(out, terminator: "")
        fflush(nil)
        return rows.count + 1
    }
}


/// The scan's table for people.
enum ScanTable {
    static let header = TerminalText.column("ADDRESS", 19) + TerminalText.column("TYPE", 8) + TerminalText.column("RSSI", 6) + TerminalText.column("HR", 4) + "NAME"

    static func line(_ d: ScannedDevice) -> String {
        TerminalText.column(d.address.description, 19) + TerminalText.column(d.addressType?.rawValue ?? "-", 8)
            + TerminalText.column(d.rssi.map { "\($0)" } ?? "-", 6) + TerminalText.column(d.data.isHeartRateSensor() ? "yes" : "-", 4)
            + (d.data.localName ?? "(no name)")
    }
}

