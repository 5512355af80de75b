import Platform
import Foundation
import HealthModel
import Ingest
import SerialPedometer
import Synchronization
import Locking

/// A serial pedometer as an ingest source: opens the port (termios raw, the configured speed),
/// reads it on the serial module's reader thread, frames and parses lines, turns the cumulative
/// counter into step intervals (wraps, resets, gaps handled by `StepCounter`), and pushes each
/// interval as a `stepCount` record. Rejected lines and counter events are counted, not fatal.
///
/// Like `serial watch`, each step sample carries its sync identifier (version 1), and the
/// counter state after it is persisted in the sample's transaction under
/// `serial.counter.<device id>` (the same key, so `serial watch` and `run` continue each other's
/// counts). Both travel on the pipeline's side channel (``SampleRing/push(_:attachment:)``),
/// never in the ring's records. On start the counter resumes from that state; at the end of the
/// stream (unplug, stop) the session is finished: a last unterminated line is read and a
/// reading held back as a possible glitch is settled, and the final state is persisted.
///
/// The serial reader thread is this ring's single producer. Front-ends (`serial watch`) see what
/// happens through an observer (``PedometerEvent``): the raw-event tap; what was stored they see
/// from the pipeline's committed-batch observers.
package struct PedometerSource: IngestSource {
    package let name: String
    package let reconnects: Bool
    /// The tty path.
    package let path: String
    /// The device id: it keys the persisted counter state and is part of every sync identifier.
    package let deviceID: String
    /// How the port is opened, lines parsed and the counter interpreted.
    package let options: Options
    private let deviceName: String?
    private let device: Device?
    private let counters = Counters()
    private let observer: (@Sendable (PedometerEvent) -> Void)?
    /// Whether the observer logs a port that cannot be opened (the watcher does): the failure
    /// is then thrown as ``PedometerOpenFailed``, which the runner does not log again.
    package var observerLogsOpenFailures = false

    /// The serial options `serial watch` takes, as the `[[pedometer]]` table gives them.
    package struct Options: Sendable, Equatable {
        /// Line speed (8N1).
        package var baud: Int
        /// Flow control.
        package var flowControl: FlowControl
        /// The line format (`auto`, `json`, `kv`, `int` or a vendor profile).
        package var format: LineFormat
        /// The counter's width (16, 24 or 32) when known: a decrease that fits is a wrap.
        package var counterBits: Int?
        /// Use the line's `t` for timestamps (`serial watch --device-time trust`).
        package var trustDeviceTime: Bool

        /// Options with `serial watch`'s defaults.
        package init(baud: Int = 115_200, flowControl: FlowControl = .none, format: LineFormat = .auto,
                    counterBits: Int? = nil, trustDeviceTime: Bool = false) {
            self.baud = baud
            self.flowControl = flowControl
            self.format = format
            self.counterBits = counterBits
            self.trustDeviceTime = trustDeviceTime
        }
    }

    /// Per-pedometer counters (any thread).
    package final class Counters: Sendable {
        /// Lines accepted.
        package let lines = Atomic<Int>(0)
        /// Lines rejected (garbage, too long, not UTF-8).
        package let rejected = Atomic<Int>(0)
        /// Step intervals pushed.
        package let intervals = Atomic<Int>(0)
        /// Times the session was finished at the end of a stream (unplug or stop).
        package let finished = Atomic<Int>(0)
        init() {}
    }

    /// The pedometer's counters.
    package var stats: Counters { counters }

    /// The source HealthGate's serial samples carry.
    package static let source = Source(name: "HealthGate serial", identifier: "org.healthgate.serial")

    /// How often, at most, the counter state of a pedometer whose count does not change is
    /// persisted (only the last reading's time, sequence number and tallies moved). After a
    /// crash the counter resumes from a state at most this old with the same count: no steps
    /// are lost or counted twice; the first interval after the restart may start up to this
    /// much earlier than the last reading before the crash.
    package static let idleStateInterval: Duration = .seconds(30)

    /// A pedometer on `path`.
    /// - Parameters:
    ///   - id: the device id (as `serial watch --id`); default: the path.
    ///   - options: port, line format and counter options.
    ///   - device: the device its samples carry (default: `name`, or the tty's name, with the
    ///     local identifier `serial:<id>`).
    ///   - observer: called on the reader thread with every event (``PedometerEvent``).
    package init(path: String, id: String? = nil, options: Options = Options(), name: String? = nil,
                device: Device? = nil, reconnects: Bool = true, observer: (@Sendable (PedometerEvent) -> Void)? = nil) {
        self.name = "pedometer \(path)"
        self.path = path
        self.deviceID = id ?? path
        self.options = options
        self.deviceName = name
        self.device = device
        self.reconnects = reconnects
        self.observer = observer
    }

    /// A pedometer on `path` at `baud` with the default options.
    package init(path: String, baud: Int, name: String? = nil, reconnects: Bool = true) {
        self.init(path: path, options: Options(baud: baud), name: name, reconnects: reconnects)
    }

    /// The state-table key of this pedometer's counter (`serial.counter.<device id>`).
    package var stateKey: String { Self.stateKey(deviceID: deviceID) }

    /// The state-table key of a pedometer's counter: `serial.counter.<device id>`.
    package static func stateKey(deviceID: String) -> String { "serial.counter.\(deviceID)" }

    /// The persisted state keys of the registry's device with this local identifier (a
    /// pedometer's, `serial:<id>`: its counter state; none for other devices), which `devices
    /// forget` removes with it.
    package static func stateKeys(localIdentifier: String) -> [String] {
        guard localIdentifier.hasPrefix("serial:") else { return [] }
        return [stateKey(deviceID: String(localIdentifier.dropFirst("serial:".count)))]
    }

    package func run(into ring: SampleRing, slots: SlotTable, stop: StopSignal) throws {
        let key = stateKey
        // The newest state still on its way to the store (a quick re-plug), else the stored one.
        // Unreadable state is treated as never seen, as `serial watch` does.
        let resume = try ring.resumeState(forKey: key).flatMap { try? JSONDecoder().decode(CounterState.self, from: $0) }
        let counterConfig = try CounterConfiguration(deviceID: deviceID, counterBits: options.counterBits,
                                                     trustDeviceTime: options.trustDeviceTime)
        let typeSlot = try slots.slot(for: .stepCount)
        let sourceSlot = try slots.slot(for: Self.source)
        let device = self.device ?? Device(name: deviceName ?? URL(fileURLWithPath: path).lastPathComponent,
                                           localIdentifier: "serial:\(deviceID)")
        let deviceSlot = try slots.slot(for: device)
        let port: SerialPort
        do {
            port = try SerialPort(path: path, options: SerialPortOptions(baud: options.baud, flowControl: options.flowControl))
        } catch {
            observer?(.openFailed(error))
            if observerLogsOpenFailures { throw PedometerOpenFailed(underlying: error) }
            throw error
        }
        let initial = resume ?? CounterState()
        observer?(.opened(device: device, state: initial))
        var stream = PedometerStream(
            session: PedometerSession(format: options.format, counter: StepCounter(configuration: counterConfig, state: initial)),
            ring: ring, key: key, counters: counters, device: device,
            slots: (typeSlot, sourceSlot, deviceSlot), observer: observer)
        stream.clock = ClockSteps.system.cursor()
        let feeder = Lock(stream)
        let ended = Lock<String?>(nil)
        let reader = SerialReader(port: port) { event in
            switch event {
            case .chunk(let bytes, let at):
                feeder.withLock { $0.feed(bytes, at: at) }
            case .gone(let reason):
                let state = feeder.withLock { $0.finish(at: Date()) }
                ended.withLock { $0 = reason }
                observer?(.ended(gone: reason, state: state))
            case .stopped:
                let state = feeder.withLock { $0.finish(at: Date()) }
                observer?(.ended(gone: nil, state: state))
            }
        }
        let hook = stop.onRaise { reader.stop() }
        defer { hook.cancel() }
        reader.wait()
        port.close()
        if stop.isRaised { return }
        throw PedometerGone(path: path, reason: ended.withLock { $0 } ?? "closed")
    }
}

/// What a ``PedometerSource`` reports to its observer, in order, on the thread that runs it.
package enum PedometerEvent: Sendable {
    /// The port could not be opened (the source then ends with this error).
    case openFailed(any Error)
    /// The port is open; the counter starts from `state` (the persisted one, or empty).
    case opened(device: Device, state: CounterState)
    /// A line, reading, counter event or step sample (the sample is pushed after this event).
    case session(SessionEvent)
    /// The stream ended: `gone` says why the device went away, nil when the source was stopped.
    /// The session was finished (held readings settled) and the final state queued first.
    case ended(gone: String?, state: CounterState)
}

/// A port that could not be opened, already logged by the source's observer (``LoggedBySource``).
package struct PedometerOpenFailed: Error, LoggedBySource, CustomStringConvertible {
    /// What opening the port threw (a ``SerialPortError``).
    package var underlying: any Error
    package var description: String { "\(underlying)" }
}

/// The pedometer's port went away (unplugged); the runner reopens it when it returns.
package struct PedometerGone: Error, CustomStringConvertible {
    /// The tty path.
    package var path: String
    /// What the kernel said.
    package var reason: String
    package var description: String { "\(path) went away (\(reason)); waiting for it to come back" }
}
