import ArgumentParser
import Dispatch
import Foundation
import HealthModel
import HealthStore
import SerialPedometer
import Synchronization
import Udev

// Shared plumbing of the serial pedometer commands (serial list, serial watch, decode pedometer).

extension SerialPortError: SysexitConvertible {
    var sysexit: Sysexit {
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
    var sysexit: Sysexit {
        switch self {
        case .badConfigFile: .config
        default: .usage
        }
    }
}

extension UdevError: SysexitConvertible {
    var sysexit: Sysexit { .unavailable }
}

extension DeviceMatchError: SysexitConvertible {
    var sysexit: Sysexit { .usage }
}

/// `--config PATH`: the serial configuration file.
struct SerialConfigOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The serial pedometer configuration file (match rules, vendor profiles).",
        discussion: "Defaults to $XDG_CONFIG_HOME/healthgate/serial.toml (~/.config/… when unset); a missing default file means no rules and only built-in profiles. See docs/serial-pedometers.md.",
        valueName: "path"))
    var config: String?

    func load() throws -> SerialConfiguration { try SerialConfiguration.load(path: config) }
}

/// Calls `action` once on the first SIGINT or SIGTERM (a second one exits at once).
final class SerialSignalTrap: @unchecked Sendable {
    // @unchecked: the sources are set once in init and only cancelled in deinit.
    private var sources: [any DispatchSourceSignal] = []
    private final class Flag: Sendable { let m = Mutex(false) }
    private let fired = Flag()

    init(_ action: @escaping @Sendable () -> Void) {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [fired] in
                let again = fired.m.withLock { f in
                    defer { f = true }
                    return f
                }
                if again { _exit(130) }
                action()
            }
            source.resume()
            sources.append(source)
        }
    }

    var triggered: Bool { fired.m.withLock { $0 } }

    deinit {
        for s in sources { s.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}

/// Prints link events as human lines or JSON objects (one per line, flushed).
struct LinkPrinter: Sendable {
    let json: Bool
    let device: String

    func print(_ event: LinkEvent) {
        switch event {
        case .session(let e): printSession(e)
        case .stored(let n, let summary):
            if json {
                JSONOutput.emit(["event": "stored", "device": device, "samples": n, "inserted": summary.inserted,
                                 "replaced": summary.replaced, "ignored": summary.ignored + summary.duplicates])
            } else if n > 0 {
                emit("stored  \(n) sample(s) (\(summary))")
            }
        case .storeFailed(let why):
            if json { JSONOutput.emit(["event": "store-error", "device": device, "message": why]) }
            Console.error(why + "; the samples stay pending and are retried")
        case .gone(let why):
            if json { JSONOutput.emit(["event": "unplugged", "device": device, "reason": why]) }
            else { emit("unplugged  \(device): \(why)") }
        case .stopped:
            if json { JSONOutput.emit(["event": "stopped", "device": device]) }
        }
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
        Swift.print(s)
        fflush(nil)
    }
}
