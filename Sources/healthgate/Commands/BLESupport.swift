import ArgumentParser
import BluetoothLinux
import Dispatch
import Capture
import Foundation
import Gateway
import GATT
import HealthStore

// Shared plumbing of the Bluetooth LE commands (scan, pair, devices, live, reset-energy, record).

extension BluetoothError: SysexitConvertible {
    /// The agreed sysexits code: 69 unavailable, 75 try again, 74 link lost, 77 permissions.
    package var sysexit: Sysexit { Sysexit(rawValue: exitCode) ?? .unavailable }
}

extension GATTError: SysexitConvertible {
    /// A transaction timeout is worth retrying (75); a lost link is an I/O failure (74); a
    /// refusal or a protocol violation means the device cannot do it (69).
    package var sysexit: Sysexit {
        switch self {
        case .timeout: return .tempFail
        case .disconnected: return .ioError
        default: return .unavailable
        }
    }
}

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

extension CaptureFileError: SysexitConvertible {
    package var sysexit: Sysexit {
        switch self {
        case .exists: return .usage
        case .cannotCreate, .writeFailed: return .ioError
        }
    }
}

/// Opens the health store for writing (its errors become sentences with sysexits codes through
/// ``SysexitConvertible``). Checkpointed when the command ends (``WritingStores``).
func openHealthStore(_ location: StoreLocation) throws -> HealthStore {
    WritingStores.opened(try HealthStore(path: location.path))
}

/// True when stdout is a terminal (live-updating tables are drawn only then).
var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

/// Pads or cuts `s` to `width` columns.
func column(_ raw: String, _ width: Int) -> String {
    let s = TerminalText.visible(raw)
    return s.count >= width ? String(s.prefix(width - 1)) + " " : s.padding(toLength: width, withPad: " ", startingAt: 0)
}

/// Writes to stdout immediately (tables redraw in place; pipes see lines at once).
func emitLine(_ s: String) {
    print(s)
    fflush(nil)
}
