import ArgumentParser
import HealthGateConfiguration
import Foundation
import Gateway
import HealthModel
import HealthStore
import SerialPedometer
import Udev

// Shared plumbing of the serial pedometer commands (serial list, serial watch, decode pedometer).

/// The pedometer rules of `serial list` and `serial watch`: the configuration file's
/// (`--config`) and `--match RULE` (repeatable) in addition.
struct PedometerRuleOptions: ParsableArguments {
    @Option(name: .customLong("match"), help: ArgumentHelp(
        "A pedometer match rule, in addition to the configuration file's (repeatable; serial watch: with --auto).",
        valueName: "vid:pid|serial:S|tag:T|by-id:PATH"))
    var matches: [String] = []

    @OptionGroup var file: SerialConfigOption

    /// The rules: `device` alone when given (with `overrides`), else the file's and `--match`'s.
    /// - Throws: ``CLIFailure`` (78) for a bad file; a bad `--match` is a usage error.
    func rules(device: String? = nil, overrides: PedometerOverrides = PedometerOverrides()) throws -> [GatewayConfig.Pedometer] {
        try file.load().pedometerRules(device: device, matches: matches, overrides: overrides)
    }
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
    /// - Throws: ``ConfigError`` (exit 78) naming the file, line and what is wrong.
    func load() throws -> GatewayConfig { try GatewayConfig.loadSerial(path: config) }
}
