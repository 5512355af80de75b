import ArgumentParser
import Dispatch
import Foundation
import Gateway
import HealthModel
import HealthStore
import Ingest
import Logging
import SerialPedometer
import Synchronization
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

    @Option(name: .customLong("match"), help: ArgumentHelp(
        "With --auto: a match rule, in addition to the configuration file's (repeatable).",
        valueName: "vid:pid|serial:S|tag:T|by-id:PATH"))
    var matches: [String] = []

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
    @OptionGroup var serialConfig: SerialConfigOption

    func validate() throws {
        if auto == (device != nil) { throw ValidationError("name a DEVICE or pass --auto (not both)") }
        if !matches.isEmpty && !auto { throw ValidationError("--match goes with --auto") }
        if let b = counterBits, ![16, 24, 32].contains(b) { throw ValidationError("--counter-bits must be 16, 24 or 32") }
        if let f = flowControl, FlowControl(rawValue: f) == nil { throw ValidationError("--flow-control must be none, rtscts or xonxoff") }
        if let b = baud, !(50...4_000_000).contains(b) { throw ValidationError("--baud must be between 50 and 4000000") }
    }

    /// `rule` with the options given on the command line.
    func applyFlags(to rule: GatewayConfig.Pedometer, profiles: [String: VendorProfile]) throws -> GatewayConfig.Pedometer {
        var r = rule
        if let baud { r.baud = baud }
        if let flowControl { r.flowControl = FlowControl(rawValue: flowControl) ?? .none }
        if let format { r.format = try LineFormat(parsing: format, profiles: profiles) }
        if let counterBits { r.counterBits = counterBits }
        if let deviceTime { r.trustDeviceTime = deviceTime == .trust }
        if let id, !auto { r.id = id }
        return r
    }

    func run() throws {
        try reporting {
            let config = try serialConfig.load()
            if auto {
                let rules = try (config.pedometers + matches.map { GatewayConfig.Pedometer(try DeviceMatch(parsing: $0)) })
                    .map { try applyFlags(to: $0, profiles: config.allProfiles) }
                guard !rules.isEmpty else {
                    throw CLIFailure("--auto needs at least one pedometer rule (--match vid:pid|serial:S|tag:T, or match = [...] in \(serialConfig.path)): HealthGate never reads every tty", code: .config)
                }
                try SerialWatchFrontEnd(command: self).runAuto(rules: rules)
            } else if let device {
                let rule = try applyFlags(to: GatewayConfig.Pedometer(path: device), profiles: config.allProfiles)
                try SerialWatchFrontEnd(command: self).runOne(rule: rule)
            }
        }
    }
}

/// The running part of `serial watch`: a one-source (or watcher-fed) ingest pipeline, as `run`
/// builds it, with the source's events printed as they happen (the raw-event tap) and what was
/// stored printed from the pipeline's committed batches. `--no-store` is a null sink.
private final class SerialWatchFrontEnd: @unchecked Sendable {
    // @unchecked: immutable after init except the mutexes.
    let command: SerialWatchCommand
    let store: HealthStore?
    let pipeline: IngestPipeline
    let runner: SourceRunner
    let logger: Logger
    let storeFailed = Mutex(false)
    let done = DispatchSemaphore(value: 0)

    init(command: SerialWatchCommand) throws {
        self.command = command
        let store = command.noStore ? nil : try openHealthStore(command.store)
        self.store = store
        let sink: any SampleSink = try store.map { try StoreSink(store: $0) } ?? DiscardingSink()
        pipeline = try IngestPipeline(sink: sink, configuration: IngestConfiguration(flushInterval: .milliseconds(250)))
        var logger = Logger(label: "healthgate") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .critical   // everything worth saying is printed by the tap
        self.logger = logger
        runner = SourceRunner(pipeline: pipeline, logger: logger)
        let json = command.json
        // What was stored: per device, from the committed batches.
        pipeline.addObserver { [self] batch in
            var perDevice: [UInt16: Int] = [:]
            for r in batch.records { perDevice[r.deviceSlot, default: 0] += 1 }
            for (slot, n) in perDevice.sorted(by: { $0.key < $1.key }) {
                let id = batch.slots.device(slot)?.localIdentifier.map { $0.hasPrefix("serial:") ? String($0.dropFirst(7)) : $0 } ?? "?"
                if json {
                    JSONOutput.emit(["event": "stored", "device": id, "samples": n])
                } else if store != nil {
                    print("stored  \(n) sample(s) of \(id)"); fflush(nil)
                }
            }
            storeFailed.withLock { $0 = false }
        }
        pipeline.onStallChange { [self] reason in
            guard let reason else { return }
            storeFailed.withLock { $0 = true }
            if json { JSONOutput.emit(["event": "store-error", "message": reason]) }
            Console.error("could not store step samples and the counter state: \(reason); they stay pending and are retried")
        }
    }

    /// A tap printing one device's events and its summary at the end of each stream.
    func tap(path: String, id: String, rule: GatewayConfig.Pedometer?, onOpen: (@Sendable (Result<Void, any Error>) -> Void)? = nil)
        -> @Sendable (PedometerEvent) -> Void {
        let printer = LinkPrinter(json: command.json, device: id)
        let tally = Mutex((accepted: 0, rejected: [String: Int](), samples: 0, steps: UInt64(0)))
        let (json, auto, stored, formatText, baud) = (command.json, command.auto, store != nil, "\(rule?.format ?? .auto)", rule?.baud ?? 115_200)
        let reopen = command.reopen
        return { event in
            switch event {
            case .openFailed(let error):
                onOpen?(.failure(error))
                if auto { Console.error("cannot open \(path): \(error)") }
            case .opened:
                tally.withLock { $0 = (0, [:], 0, 0) }
                if auto {
                    if json { JSONOutput.emit(["event": "plugged", "device": id, "path": path, "matchedBy": rule?.summary ?? path]) }
                    else { Console.note("plugged: \(path) as \(id) (matched \(rule?.summary ?? path))") }
                } else if !json {
                    Console.note("reading \(path) as \(id) (\(formatText), \(baud) baud)\(stored ? "" : ", not storing")")
                }
                onOpen?(.success(()))
            case .session(let e):
                tally.withLock { t in
                    switch e {
                    case .accepted: t.accepted += 1
                    case .rejected(_, let why): t.rejected[why.code, default: 0] += 1
                    case .sample(let s): t.samples += 1; t.steps += s.steps
                    case .counter: break
                    }
                }
                printer.printSession(e)
            case .ended(let gone, _):
                if let gone { printer.gone(gone) } else { printer.stopped() }
                let t = tally.withLock { $0 }
                let rej = t.rejected.isEmpty ? "none" : t.rejected.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
                if json {
                    JSONOutput.emit(["event": "summary", "device": id, "acceptedLines": t.accepted, "rejectedLines": t.rejected,
                                     "samples": t.samples, "steps": t.steps])
                } else {
                    Console.note("\(id): \(t.accepted) line(s) accepted, rejected: \(rej); \(t.samples) sample(s), \(t.steps) step(s)\(stored ? " stored" : " (not stored)")")
                }
                if reopen, gone != nil, !json { Console.note("waiting for \(path) to come back (Ctrl-C to stop)") }
            }
        }
    }

    /// `serial watch DEVICE`: until the device goes away (or, with --reopen, until Ctrl-C).
    func runOne(rule: GatewayConfig.Pedometer) throws {
        let path = rule.path ?? ""
        let identity = PedometerIdentity.resolve(path: path, given: rule.id)
        if let store, let old = try PedometerStateMigration.carryOver(in: store, identity: identity), !command.json {
            Console.note("counter state of \(path) carried over from its old id \(old) to \(identity.id)")
        }
        let firstOpen = Mutex<Result<Void, any Error>?>(nil)
        let opened = DispatchSemaphore(value: 0)
        let onOpen: @Sendable (Result<Void, any Error>) -> Void = { result in
            let first = firstOpen.withLock { r -> Bool in
                defer { if r == nil { r = result } }
                return r == nil
            }
            if first { opened.signal() }
        }
        let trap = SerialSignalTrap { [done] in done.signal() }
        defer { withExtendedLifetime(trap) {} }
        pipeline.start()
        let watcher: PedometerWatcher?
        if command.reopen {
            // The one hot-plug watcher, on this path: it opens the device again when it returns.
            var pinned = rule
            pinned.id = identity.id
            let r = pinned
            let w = PedometerWatcher(rules: [r], runner: runner, logger: logger, store: store) { [self] _, p, _ in
                tap(path: p, id: identity.id, rule: r, onOpen: onOpen)
            }
            watcher = w
            // The device must be there at the start: a missing path is an error, as without
            // --reopen (one that is no tty fails its first open, which ends the command too).
            guard FileManager.default.fileExists(atPath: path) else {
                _ = pipeline.stop()
                throw SerialPortError.notFound(path)
            }
            w.start(interval: .milliseconds(200))
        } else {
            watcher = nil
            let registry = PedometerWatcher.registry(store: store, path: path, identity: identity, logger: logger)
            let front = tap(path: path, id: identity.id, rule: rule, onOpen: onOpen)
            let source = PedometerSource(path: path, id: identity.id, options: rule.sourceOptions, name: rule.name,
                                         device: PedometerWatcher.device(identity: identity, name: rule.name, path: path),
                                         reconnects: false) { event in
                registry(event)
                front(event)
            }
            try runner.start(source)
            Thread.detachNewThread { [runner, done] in
                runner.waitForAll()
                done.signal()
            }
        }
        opened.wait()
        if case .failure(let error) = firstOpen.withLock({ $0 }) ?? .success(()) {
            runner.stopAll()
            _ = pipeline.stop()
            throw error
        }
        _ = watcher
        done.wait()
        try finish()
    }

    /// `serial watch --auto`: every matching device while it is plugged in, until Ctrl-C.
    func runAuto(rules: [GatewayConfig.Pedometer]) throws {
        let trap = SerialSignalTrap { [done] in done.signal() }
        defer { withExtendedLifetime(trap) {} }
        pipeline.start()
        let watcher = PedometerWatcher(rules: rules, runner: runner, logger: logger, store: store) { [self] rule, path, identity in
            tap(path: path, id: identity.id, rule: rule)
        }
        let source = watcher.start(interval: .seconds(2))
        let names = rules.map(\.summary)
        if command.json {
            JSONOutput.emit(["event": "monitor", "source": source?.rawValue ?? "scan", "rules": names])
        } else {
            let log = switch source {
            case .udev: "udev daemon running: device events from udev"
            case .kernel: "no udev daemon: device events from the kernel, USB ids from sysfs (tag rules cannot match)"
            case nil: "no device events: looking for devices every 2 s"
            }
            Console.note("\(log); waiting for pedometers matching \(names.joined(separator: ", "))")
        }
        done.wait()
        try finish()
    }

    /// Stops the sources (each stream is finished and its state queued), drains and commits.
    func finish() throws {
        runner.stopAll()
        let final = pipeline.stop()
        if final.abandoned > 0 || final.rejected > 0 || storeFailed.withLock({ $0 }) {
            throw CLIFailure("some step samples could not be stored (see the messages above): check that \(command.store.path) is writable and the disk is not full, then run again; the device's counter resumes from the last stored state", code: .ioError)
        }
    }
}
