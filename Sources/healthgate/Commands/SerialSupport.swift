import ArgumentParser
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

    /// The default path: `$XDG_CONFIG_HOME/healthgate/serial.toml` (`~/.config/…` when unset).
    static var defaultPath: String {
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((env["HOME"] ?? NSHomeDirectory()) + "/.config")
        return base + "/healthgate/serial.toml"
    }

    /// The file that is read (given or default).
    var path: String { config ?? Self.defaultPath }

    /// Reads the file; a missing default file is an empty configuration.
    /// - Throws: ``CLIFailure`` with exit 78 naming the file, line and what is wrong.
    func load() throws -> GatewayConfig {
        if config == nil && !FileManager.default.fileExists(atPath: path) { return GatewayConfig(file: path) }
        do { return try GatewayConfig.load(path: path) } catch {
            throw CLIFailure("configuration error: \(error)", code: .config)
        }
    }
}

/// Prints a pedometer's events as human lines or JSON objects (one per line, flushed).
struct LinkPrinter: Sendable {
    let json: Bool
    let device: String

    func gone(_ why: String) {
        if json { JSONOutput.emit(["event": "unplugged", "device": device, "reason": why]) }
        else { emit("unplugged  \(device): \(why)") }
    }

    func stopped() {
        if json { JSONOutput.emit(["event": "stopped", "device": device]) }
    }
    func printSession(_ e: SessionEvent) {
        switch e {
        case .accepted(let line, let r):
            if json { JSONOutput.emit(["event": "line", "device": device, "line": line, "reading": r.jsonObject]) }
            else { emit("line    \(line)") }
        case .rejected(let line, let why):
            if json {
                var o: [String: any Sendable] = ["event": "reject", "device": device, "reason": why.code, "detail": why.description]
                if let line { o["line"] = line }
                JSONOutput.emit(o)
            } else {
                emit("reject  \(line.map { "\"\($0.prefix(60))\"" } ?? "(line)"): \(why)")
            }
        case .counter(let c):
            if json { JSONOutput.emit(["event": "counter", "device": device, "kind": c.code, "detail": c.description]) }
            else { emit("note    \(c)") }
        case .sample(let s):
            if json {
                JSONOutput.emit(["event": "sample", "device": device, "type": "stepCount", "steps": s.steps,
                                 "start": ISO8601.string(s.start), "end": ISO8601.string(s.end),
                                 "syncIdentifier": s.syncIdentifier, "timingUncertain": s.timingUncertain])
            } else {
                emit("sample  +\(s.steps) steps  \(ISO8601.string(s.start)) … \(ISO8601.string(s.end))"
                     + (s.timingUncertain ? "  (timing uncertain)" : ""))
            }
        }
    }

    private func emit(_ s: String) {
        Swift.print(TerminalText.visible(s))
        fflush(nil)
    }
}
