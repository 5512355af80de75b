import ArgumentParser
import Foundation
import Gateway
import SerialPedometer
import Udev

/// `healthgate serial`: serial (USB) pedometers.
struct SerialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serial",
        abstract: "List and read serial (USB) pedometers.",
        discussion: """
            Pedometers are tty devices chosen by match rules (USB vid:pid, serial number, udev tag or \
            by-id link) from --match or the serial configuration file; never every tty. \
            docs/serial-pedometers.md explains the line formats, the step-counting rules and the udev rules.
            """,
        subcommands: [SerialListCommand.self, SerialWatchCommand.self])
}

/// `healthgate serial list`: tty devices with their udev properties.
struct SerialListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List serial devices with their USB ids, serial number and by-id link, and whether they match as pedometers.",
        discussion: """
            Without a udev daemon (containers, minimal systems) the USB ids come from sysfs and there \
            are no tags or by-id links; the command says so on stderr.

            Example:
              healthgate serial list --match 1d50:6120
            """)

    @Flag(help: "Print a JSON array (every udev property included).")
    var json = false

    @Flag(help: "Include virtual terminals (tty0…tty63, console, ptmx).")
    var all = false

    @OptionGroup var pedometers: PedometerRuleOptions

    func run() throws {
        let rules = try pedometers.rules()
        let udev = try Udev()
        if !udev.daemonIsRunning {
            Console.note("note: no udev daemon runs: USB ids are read from sysfs; tags and by-id links are unavailable")
        }
        let devices = try udev.ttyDevices().filter { all || $0.hasHardware }
        if json {
            try JSONOutput.emit(devices.map { $0.jsonObject(matchedBy: rules.firstMatch($0)?.summary) })
            return
        }
        if devices.isEmpty {
            print("No serial devices\(all ? "" : " (add --all to include virtual terminals)").")
            return
        }
        print(TerminalText.column("DEVICE", 16) + TerminalText.column("VID:PID", 11) + TerminalText.column("SERIAL", 18) + TerminalText.column("DRIVER", 12)
              + TerminalText.column("PEDOMETER", 26) + "BY-ID")
        for d in devices {
            let ids = d.vendorID.map { "\($0):\(d.modelID ?? "????")" } ?? "-"
            let matched = rules.firstMatch(d).map { "yes (\($0.summary))" } ?? "no"
            print(TerminalText.column(d.devnode ?? d.sysname, 16) + TerminalText.column(ids, 11) + TerminalText.column(d.serialShort ?? "-", 18)
                  + TerminalText.column(d.driver ?? "-", 12) + TerminalText.column(matched, 26) + (d.byIDPath ?? "-"))
        }
        if rules.isEmpty {
            Console.note("note: no pedometer rules (--match, or match = [...] / [[pedometer]] in \(pedometers.file.path)): no device counts as a pedometer")
        }
    }
}
