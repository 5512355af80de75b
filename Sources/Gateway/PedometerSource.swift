import Foundation
import HealthModel
import Ingest
import SerialPedometer
import Synchronization

/// A serial pedometer as an ingest source: opens the port (termios raw, the configured speed),
/// reads it on the serial module's reader thread, frames and parses lines, turns the cumulative
/// counter into step intervals (wraps, resets, gaps handled by `StepCounter`), and pushes each
/// interval as a `stepCount` record. Rejected lines and counter events are counted, not fatal.
///
/// The serial reader thread is this ring's single producer.
public struct PedometerSource: IngestSource {
    public let name: String
    public let reconnects: Bool
    /// The tty path.
    public let path: String
    private let baud: Int
    private let deviceName: String?
    private let counters = Counters()

    /// Per-pedometer counters (any thread).
    public final class Counters: Sendable {
        /// Lines accepted.
        public let lines = Atomic<Int>(0)
        /// Lines rejected (garbage, too long, not UTF-8).
        public let rejected = Atomic<Int>(0)
        /// Step intervals pushed.
        public let intervals = Atomic<Int>(0)
        init() {}
    }

    /// The pedometer's counters.
    public var stats: Counters { counters }

    /// The source HealthGate's serial samples carry.
    public static let source = Source(name: "HealthGate serial", identifier: "org.healthgate.serial")

    /// A pedometer on `path` at `baud`.
    public init(path: String, baud: Int = 115_200, name: String? = nil, reconnects: Bool = true) {
        self.name = "pedometer \(path)"
        self.path = path
        self.baud = baud
        self.deviceName = name
        self.reconnects = reconnects
    }

    public func run(into ring: SampleRing, slots: SlotTable, stop: IngestStop) throws {
        let port = try SerialPort(path: path, options: SerialPortOptions(baud: baud))
        let deviceID = "serial:\(path)"
        let typeSlot = try slots.slot(for: .stepCount)
        let sourceSlot = try slots.slot(for: Self.source)
        let deviceSlot = try slots.slot(for: Device(name: deviceName ?? URL(fileURLWithPath: path).lastPathComponent,
                                                    localIdentifier: deviceID))
        let session = Mutex(PedometerSession(format: .auto, counter: StepCounter(configuration: try CounterConfiguration(deviceID: deviceID))))
        let counters = self.counters
        let ended = Mutex<String?>(nil)
        let reader = SerialReader(port: port) { event in
            switch event {
            case .chunk(let bytes, let at):
                let events = session.withLock { $0.feed(bytes, receivedAt: at) }
                for e in events {
                    switch e {
                    case .accepted: counters.lines.add(1, ordering: .relaxed)
                    case .rejected: counters.rejected.add(1, ordering: .relaxed)
                    case .counter: break
                    case .sample(let interval):
                        ring.push(SampleRecord(typeSlot: typeSlot, value: Double(interval.steps),
                                               start: interval.start.timeIntervalSince1970,
                                               end: interval.end.timeIntervalSince1970,
                                               sourceSlot: sourceSlot, deviceSlot: deviceSlot))
                        counters.intervals.add(1, ordering: .relaxed)
                    }
                }
            case .gone(let reason):
                ended.withLock { $0 = reason }
            case .stopped:
                break
            }
        }
        stop.onRaise { reader.stop() }
        reader.wait()
        port.close()
        if stop.isRaised { return }
        throw PedometerGone(path: path, reason: ended.withLock { $0 } ?? "closed")
    }
}

/// The pedometer's port went away (unplugged); the runner reopens it when it returns.
public struct PedometerGone: Error, CustomStringConvertible {
    /// The tty path.
    public var path: String
    /// What the kernel said.
    public var reason: String
    public var description: String { "\(path) went away (\(reason)); waiting for it to come back" }
}
