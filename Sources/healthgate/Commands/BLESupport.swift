import ArgumentParser
import BluetoothLinux
import Dispatch
import Capture
import Foundation
import Gateway
import GATT
import HealthStore

// Shared plumbing of the Bluetooth LE commands (scan, pair, devices, live, reset-energy, record).

/// `--adapter hciN`.
struct AdapterOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The local Bluetooth adapter to use.",
        discussion: "Defaults to the first powered adapter. `btmgmt info` or `ls /sys/class/bluetooth` lists them.",
        valueName: "hciN"))
    var adapter: String?

    /// The adapter, checked to exist and be powered.
    func resolve() throws -> Adapter { try Adapter.resolve(adapter) }
}

/// True when stdout is a terminal (live-updating tables are drawn only then).
var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

/// Writes to stdout immediately (tables redraw in place; pipes see lines at once).
func emitLine(_ s: String) {
    print(s)
    fflush(nil)
}
