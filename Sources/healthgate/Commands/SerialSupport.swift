import ArgumentParser
import Configuration
import Foundation
import Gateway
import HealthModel
import HealthStore
import SerialPedometer
import Udev

// Shared plumbing of the serial pedometer commands (serial list, serial watch, decode pedometer).

extension SerialPortError: SysexitConvertible {
    package var sysexit: Sysexit {
        switch self {
        case .notFound: .unavailable
        case .permissionDenied: .noPermission
        case .busy: .tempFail
        case .notATerminal, .unsupportedBaud: .usage
        case .system: .ioError
        }
    }
}

extension SerialConfigError: SysexitConvertible {
    package var sysexit: Sysexit {
        switch self {
        case .badConfigFile: .config
        default: .usage
        }
    }
}

extension UdevError: SysexitConvertible {
    package var sysexit: Sysexit { .unavailable }
}

extension DeviceMatchError: SysexitConvertible {
    package var sysexit: Sysexit { .usage }
}

/// `--config PATH`: the configuration file the serial commands read (match rules, vendor
/// profiles): the daemon's TOML format (`[[pedometer]]`, `match = [...]`, `[profiles.NAME]`),
/// read by the daemon's reader (``GatewayConfig``).
struct SerialConfigOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The configuration file (pedometer rules, vendor profiles; the daemon's format).",
        discussion: "Defaults to $XDG_CONFIG_HOME/healthgate/serial.toml (~/.config/… when unset); a missing default file means no rules and only built-in profiles. See docs/serial-pedometers.md.",
        valueName: "path"))
    var config: String?

    /// The file that is read (given or default).
    var path: String { config ?? DefaultPaths.serialConfiguration() }

    /// Reads the file; a missing default file is an empty configuration.
    /// - Throws: ``CLIFailure`` with exit 78 naming the file, line and what is wrong.
    func load() throws -> GatewayConfig {
        do { return try GatewayConfig.loadSerial(path: config) } catch {
            throw CLIFailure("configuration error: \(error)", code: .config)
        }
    }
}
