import ArgumentParser
import Foundation
import Gateway
import HealthModel
import HealthStore
import Logging
import Systemd
import SerialPedometer
import Udev

/// Whether a line's `t` is used for timestamps.
enum DeviceTimeMode: String, ExpressibleByArgument, CaseIterable {
    case trust, ignore
}

/// `healthgate serial watch`: read pedometers live and store their steps.
struct SerialWatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Read a serial pedometer live: every accepted line, step sample and rejected line; steps are stored.",
        discussion: """
            With DEVICE, reads that port until it is unplugged (or Ctrl-C); --reopen waits for it to \
            come back instead. With --auto, waits for devices matching the rules (--match or the \
            configuration file) to appear, reads each while it is plugged in, and picks it up again \
            when it returns.

            It is a front-end over `run`'s path: the same pedometer source, ingest pipeline and \
            store, so samples are stored in batches, each together with the device's counter state, \
            and a restart neither loses nor double-counts steps. The state is keyed by --id, by \
            default the USB serial number, else the physical USB port (so `run` and `serial watch` \
            continue each other's counts; docs/serial-pedometers.md, "The pedometer id"). With \
            --auto, the options given here apply to every device; [[pedometer]] tables of the \
            configuration file keep their own unless an option is given.

            Examples:
              healthgate serial watch /dev/ttyUSB0 --counter-bits 24
              healthgate serial watch /dev/ttyACM0 --format profile:seeed-bma456 --json
              healthgate serial watch --auto --match 1d50:6120 --match tag:healthgate-pedometer
            """)

    @Argument(help: ArgumentHelp("The serial device (/dev/ttyUSB0, /dev/healthgate/pedometer-SERIAL, a by-id link).",
                                 valueName: "device"))
    var device: String?

    @Flag(help: "Wait for matching pedometers (udev) instead of naming one.")
    var auto = false

    @Option(help: "Baud rate (8N1; default 115200).")
    var baud: Int?

    @Option(name: .customLong("flow-control"), help: "Flow control: none (the default), rtscts or xonxoff.")
    var flowControl: String?

    @Option(help: ArgumentHelp("Line format: auto (the default), json, kv, int or profile:NAME.", valueName: "format"))
    var format: String?

    @Option(name: .customLong("counter-bits"), help: "The device counter's width (16, 24 or 32): a decrease that fits is a wrap.")
    var counterBits: Int?

    @Option(name: .customLong("device-time"), help: "trust: use the line's t for timestamps; ignore (the default): use receipt time.")
    var deviceTime: DeviceTimeMode?

    @Option(help: ArgumentHelp("The device's id for its persisted counter state and sync identifiers.", valueName: "id"))
    var id: String?

    @Flag(name: .customLong("no-store"), help: "Only show what would be stored.")
    var noStore = false

    @Flag(help: "After an unplug, wait for DEVICE to come back instead of exiting.")
    var reopen = false

    @Flag(help: "Print one JSON object per event.")
    var json = false

    @OptionGroup var store: StoreLocation
    @OptionGroup var pedometers: PedometerRuleOptions

    func validate() throws {
        if auto == (device != nil) { throw ValidationError("name a DEVICE or pass --auto (not both)") }
        if !pedometers.matches.isEmpty && !auto { throw ValidationError("--match goes with --auto") }
        if let b = counterBits, ![16, 24, 32].contains(b) { throw ValidationError("--counter-bits must be 16, 24 or 32") }
        if let f = flowControl, FlowControl(rawValue: f) == nil { throw ValidationError("--flow-control must be none, rtscts or xonxoff") }
        if let b = baud, !(50...4_000_000).contains(b) { throw ValidationError("--baud must be between 50 and 4000000") }
    }

    func run() throws {
        let overrides = PedometerOverrides(baud: baud, flowControl: flowControl.flatMap(FlowControl.init(rawValue:)), format: format,
                                           counterBits: counterBits, trustDeviceTime: deviceTime.map { $0 == .trust }, id: id)
        let rules = try pedometers.rules(device: auto ? nil : device ?? "", overrides: overrides)
        guard !rules.isEmpty else {
            throw CLIFailure("--auto needs at least one pedometer rule (--match vid:pid|serial:S|tag:T, or match = [...] in \(pedometers.file.path)): HealthGate never reads every tty", code: .config)
        }
        let db = noStore ? nil : try store.open()
        let logger = Logger.standardError(level: .critical)   // everything worth saying is printed from the events
        let printer = SerialWatchPrinter(json: json, auto: auto, reopen: reopen, storing: db != nil)
        let session = try PedometerWatchSession(store: db, logger: logger) { printer.show($0, rules: rules) }
        let outcome = auto ? try session.run(rules: rules) : try session.run(device: rules[0], reopen: reopen)
        if !outcome.everythingStored {
            throw CLIFailure("some step samples could not be stored (see the messages above): check that \(store.path) is writable and the disk is not full, then run again; the device's counter resumes from the last stored state", code: .ioError)
        }
    }
}

/// Prints `serial watch`'s events: their texts (``PedometerWatchSession/Event/texts(rules:auto:reopen:storing:)``),
/// or their JSON objects one a line, and then only failures on stderr.
private struct SerialWatchPrinter: Sendable {
    let json: Bool
    let auto: Bool
    let reopen: Bool
    let storing: Bool

    func show(_ event: PedometerWatchSession.Event, rules: [GatewayConfig.Pedometer]) {
        if json { event.jsonObjects(rules: rules, auto: auto).forEach { JSONOutput.event($0) } }
        for text in event.texts(rules: rules, auto: auto, reopen: reopen, storing: storing) {
            switch text {
            case .error(let s): Console.error(s)
            case .note(let s) where !json: Console.note(s)
            case .line(let s) where !json:
                print(TerminalText.visible(s))
                fflush(nil)
            default: break
            }
        }
    }
}
