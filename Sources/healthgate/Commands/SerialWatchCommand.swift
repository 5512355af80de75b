import ArgumentParser
import Dispatch
import Foundation
import Gateway
import HealthModel
import HealthStore
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

            Samples are stored in batches, each together with the device's counter state, so a \
            restart neither loses nor double-counts steps (the state is keyed by --id, by default the \
            USB serial number, else the device path).

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

    @Option(help: "Baud rate (8N1).")
    var baud = 115_200

    @Option(name: .customLong("flow-control"), help: "Flow control: none, rtscts or xonxoff.")
    var flowControl = "none"

    @Option(help: ArgumentHelp("Line format: auto, json, kv, int or profile:NAME.", valueName: "format"))
    var format = "auto"

    @Option(name: .customLong("counter-bits"), help: "The device counter's width (16, 24 or 32): a decrease that fits is a wrap.")
    var counterBits: Int?

    @Option(name: .customLong("device-time"), help: "trust: use the line's t for timestamps; ignore: use receipt time.")
    var deviceTime: DeviceTimeMode = .ignore

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
        if FlowControl(rawValue: flowControl) == nil { throw ValidationError("--flow-control must be none, rtscts or xonxoff") }
    }

    func run() throws {
        try reporting {
            let config = try serialConfig.load()
            let lineFormat = try LineFormat(parsing: format, profiles: config.allProfiles)
            let healthStore = noStore ? nil : try openHealthStore(store)
            let portOptions = SerialPortOptions(baud: baud, flowControl: FlowControl(rawValue: flowControl) ?? .none)
            let watcher = Watcher(command: self, format: lineFormat, port: portOptions, store: healthStore)
            if auto {
                let rules = try config.match + matches.map(DeviceMatch.init(parsing:))
                guard !rules.isEmpty else {
                    throw CLIFailure("--auto needs at least one match rule (--match vid:pid|serial:S|tag:T, or match = [...] in \(config.file ?? SerialConfiguration.defaultPath)): HealthGate never reads every tty", code: .config)
                }
                try watcher.runAuto(rules: rules)
            } else if let device {
                try watcher.runOne(path: device)
            }
        }
    }
}

/// The running part of `serial watch`.
private final class Watcher: @unchecked Sendable {
    // @unchecked: the immutable configuration is shared; mutable state is behind `links`/`failed`.
    let command: SerialWatchCommand
    let format: LineFormat
    let port: SerialPortOptions
    let store: HealthStore?
    let links = Mutex<[String: PedometerLink]>([:])
    let opening = Mutex<Set<String>>([])
    let storeFailed = Mutex(false)
    /// With --no-store, each device's counter state survives a re-plug in memory.
    let remembered = Mutex<[String: CounterState]>([:])

    init(command: SerialWatchCommand, format: LineFormat, port: SerialPortOptions, store: HealthStore?) {
        self.command = command
        self.format = format
        self.port = port
        self.store = store
    }

    func options(id: String) throws -> LinkOptions {
        LinkOptions(port: port, format: format,
                    counter: try CounterConfiguration(deviceID: id, counterBits: command.counterBits,
                                                      trustDeviceTime: command.deviceTime == .trust))
    }

    /// Opens a link for `path`, resuming the device's persisted state.
    func open(path: String, identity: PedometerIdentity, tty: TTYDevice?, state: CounterState?, onEnd: @escaping @Sendable (LinkEvent) -> Void) throws -> PedometerLink {
        let id = identity.id
        var recorder: PedometerRecorder?
        var resume = state
        if let store {
            if let old = try PedometerStateMigration.carryOver(in: store, identity: identity), !command.json {
                Console.note("counter state of \(path) carried over from its old id \(old) to \(id)")
            }
            let device = Device(name: tty?.product ?? (path as NSString).lastPathComponent, manufacturer: tty?.manufacturer,
                                model: tty.flatMap { t in t.vendorID.map { "\($0):\(t.modelID ?? "")" } },
                                localIdentifier: "serial:\(id)")
            let r = PedometerRecorder(store: store, deviceID: id, device: device)
            if resume == nil { resume = try r.loadState() }
            _ = try? store.upsertDevice(DeviceRecord(device: device, kind: .serial, address: path, lastSeen: Date()))
            recorder = r
        }
        let printer = LinkPrinter(json: command.json, device: id)
        return try PedometerLink(path: path, options: try options(id: id), state: resume, recorder: recorder) { [self] event in
            printer.print(event)
            switch event {
            case .storeFailed: storeFailed.withLock { $0 = true }
            case .stored: storeFailed.withLock { $0 = false }
            case .gone, .stopped: onEnd(event)
            default: break
            }
        }
    }

    func runOne(path: String) throws {
        let tty = try? Udev().device(node: path)
        let identity = PedometerIdentity.resolve(path: path, given: command.id)
        let id = identity.id
        let done = DispatchSemaphore(value: 0)
        let current = Mutex<PedometerLink?>(nil)
        let trap = SerialSignalTrap {
            current.withLock { $0 }?.stop()
            done.signal()
        }
        var state: CounterState?
        var first = true
        while !trap.triggered {
            let link: PedometerLink
            do {
                link = try open(path: path, identity: identity, tty: tty, state: state) { _ in }
            } catch let e as SerialPortError where !first && command.reopen {
                if case .notFound = e {} else if case .permissionDenied = e {} else { throw e }
                if done.wait(timeout: .now() + 0.2) == .success { break }
                continue
            }
            first = false
            current.withLock { $0 = link }
            if trap.triggered { link.stop() }
            if !command.json { Console.note("reading \(path) as \(id) (\(format), \(port.baud) baud)\(store == nil ? ", not storing" : "")") }
            link.wait()
            state = link.counterState
            current.withLock { $0 = nil }
            summarize(link, id: id)
            if !command.reopen || trap.triggered { break }
            if !command.json { Console.note("waiting for \(path) to come back (Ctrl-C to stop)") }
        }
        if storeFailed.withLock({ $0 }) {
            throw CLIFailure("some step samples could not be stored (see the messages above): check that \(command.store.path) is writable and the disk is not full, then run again; the device's counter resumes from the last stored state", code: .ioError)
        }
    }

    func summarize(_ link: PedometerLink, id: String) {
        let (accepted, rejected) = link.lineCounts
        let now = link.counterState.tally, then = link.initialTally
        let steps = now.steps - min(now.steps, then.steps), samples = now.samples - min(now.samples, then.samples)
        let rej = rejected.isEmpty ? "none" : rejected.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        if command.json {
            JSONOutput.emit(["event": "summary", "device": id, "acceptedLines": accepted, "rejectedLines": rejected,
                             "samples": samples, "steps": steps])
        } else {
            Console.note("\(id): \(accepted) line(s) accepted, rejected: \(rej); \(samples) sample(s), \(steps) step(s)\(store == nil ? " (not stored)" : " stored")")
        }
    }

    func runAuto(rules: [DeviceMatch]) throws {
        let udev = try Udev()
        let done = DispatchSemaphore(value: 0)
        let monitor = try UdevMonitor { [self] event in
            guard event.action == "add" || event.action == "bind" else { return }
            start(event.device, rules: rules, retry: true)
        }
        let log = monitor.source == .udev ? "udev daemon running: device events from udev"
            : "no udev daemon: device events from the kernel, USB ids from sysfs (tag and by-id rules cannot match)"
        if command.json { JSONOutput.emit(["event": "monitor", "source": monitor.source.rawValue, "rules": rules.map(\.description)]) }
        else { Console.note("\(log); waiting for pedometers matching \(rules.map(\.description).joined(separator: ", "))") }
        let trap = SerialSignalTrap { done.signal() }
        for d in try udev.ttyDevices() { start(d, rules: rules, retry: false) }
        done.wait()
        _ = trap
        monitor.stop()
        let all = links.withLock { Array($0.values) }
        for l in all { l.stop() }
        if storeFailed.withLock({ $0 }) {
            throw CLIFailure("some step samples could not be stored (see the messages above): check that \(command.store.path) is writable and the disk is not full", code: .ioError)
        }
    }

    /// Opens a matching device unless it is already open. Kernel events can precede the node's
    /// permissions (no udevd, or udevd still running rules), so a new device is retried briefly.
    func start(_ tty: TTYDevice, rules: [DeviceMatch], retry: Bool) {
        guard let node = tty.devnode, let rule = rules.firstMatch(tty) else { return }
        let claimed = opening.withLock { o in o.insert(node).inserted }
        guard claimed else { return }
        let already = links.withLock { $0[node] != nil }
        if already { opening.withLock { _ = $0.remove(node) }; return }
        let identity = PedometerIdentity.resolve(path: node)
        let id = identity.id
        var lastError: (any Error)?
        for attempt in 0..<(retry ? 25 : 1) {
            if attempt > 0 { usleep(200_000) }
            do {
                let carried = store == nil ? remembered.withLock { $0[id] } : nil
                let link = try open(path: node, identity: identity, tty: tty, state: carried) { [self] event in
                    if case .gone = event {
                        let ended = links.withLock { $0.removeValue(forKey: node) }
                        if let ended {
                            let state = ended.counterState
                            remembered.withLock { $0[id] = state }
                            summarize(ended, id: id)
                        }
                    }
                }
                links.withLock { $0[node] = link }
                if command.json { JSONOutput.emit(["event": "plugged", "device": id, "path": node, "matchedBy": rule.description]) }
                else { Console.note("plugged: \(node) as \(id) (matched \(rule))") }
                lastError = nil
                break
            } catch {
                lastError = error
            }
        }
        opening.withLock { _ = $0.remove(node) }
        if let lastError { Console.error("cannot open \(node): \(lastError)") }
    }
}
