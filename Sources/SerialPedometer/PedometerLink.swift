import Foundation
import HealthStore
import Logging
import Synchronization

/// What a ``PedometerLink`` reports, in order, on its reader thread.
public enum LinkEvent: Sendable {
    /// A line, reading, counter event or sample from the session.
    case session(SessionEvent)
    /// A batch (samples and counter state, one transaction) was written.
    case stored(samples: Int, summary: SaveSummary)
    /// A batch could not be written; its samples stay pending and are retried at the next flush.
    case storeFailed(String)
    /// The device went away (unplug). The link has stopped and flushed; this is the last event.
    case gone(reason: String)
    /// ``PedometerLink/stop()`` was called. The link has flushed; this is the last event.
    case stopped
}

/// Everything a link needs besides the path.
public struct LinkOptions: Sendable {
    /// How to open the port.
    public var port: SerialPortOptions
    /// How to parse lines.
    public var format: LineFormat
    /// How to count.
    public var counter: CounterConfiguration
    /// Flush when this many samples are pending …
    public var batchSamples: Int
    /// … or when the oldest pending sample is this old (checked as data arrives, and at the end).
    public var batchSeconds: TimeInterval

    /// Creates options; batches default to 64 samples or 1 s.
    public init(port: SerialPortOptions = SerialPortOptions(), format: LineFormat = .auto,
                counter: CounterConfiguration, batchSamples: Int = 64, batchSeconds: TimeInterval = 1) {
        self.port = port
        self.format = format
        self.counter = counter
        self.batchSamples = batchSamples
        self.batchSeconds = batchSeconds
    }
}

/// One open pedometer: port → reader thread → session → (optionally) the store in batches.
///
/// Every event is delivered to the handler on the link's reader thread. When the device goes
/// away or the link is stopped, pending samples and the counter state are flushed before the
/// last event, so nothing accepted is lost.
public final class PedometerLink: @unchecked Sendable {
    /// The device path.
    public let path: String
    /// The counter's running totals when the link opened (subtract from ``counterState``'s to
    /// get this link's own).
    public let initialTally: CounterState.Tally
    private let port: SerialPort
    private var reader: SerialReader?
    private let box: Box

    private final class Box: @unchecked Sendable {
        // Touched only on the reader thread, except `state` (read under the mutex by anyone).
        var session: PedometerSession
        let recorder: PedometerRecorder?
        let options: LinkOptions
        var oldestPending: Date?
        let state: Mutex<(counter: CounterState, accepted: Int, rejected: [String: Int])>
        init(session: PedometerSession, recorder: PedometerRecorder?, options: LinkOptions) {
            self.session = session
            self.recorder = recorder
            self.options = options
            self.state = Mutex((session.counter.state, 0, [:]))
        }
    }

    /// Opens `path` and starts reading at once.
    /// - Parameters:
    ///   - state: the counter state to resume from (``PedometerRecorder/loadState()``), or nil.
    ///   - recorder: where to store samples; nil to only report them (`--no-store`).
    /// - Throws: ``SerialPortError`` when the port cannot be opened.
    ///   - logger: where rejected lines (notice), counter events (info) and store failures (error)
    ///     are logged, besides the handler; nil logs nothing.
    public init(path: String, options: LinkOptions, state: CounterState?, recorder: PedometerRecorder?,
                logger: Logger? = nil, handler: @escaping @Sendable (LinkEvent) -> Void) throws {
        self.path = path
        self.initialTally = state?.tally ?? CounterState.Tally()
        port = try SerialPort(path: path, options: options.port)
        let session = PedometerSession(format: options.format,
                                       counter: StepCounter(configuration: options.counter, state: state ?? CounterState()))
        let box = Box(session: session, recorder: recorder, options: options)
        self.box = box
        let handler: @Sendable (LinkEvent) -> Void = { event in
            if let logger { Self.log(event, path: path, logger: logger) }
            handler(event)
        }
        reader = SerialReader(port: port) { event in
            switch event {
            case .chunk(let bytes, let at):
                let events = box.session.feed(bytes, receivedAt: at)
                Self.handle(events, box: box, handler: handler)
                Self.flush(box: box, handler: handler, force: false)
            case .gone(let why):
                Self.handle(box.session.finish(receivedAt: Date()), box: box, handler: handler)
                Self.flush(box: box, handler: handler, force: true)
                handler(.gone(reason: why))
            case .stopped:
                Self.handle(box.session.finish(receivedAt: Date()), box: box, handler: handler)
                Self.flush(box: box, handler: handler, force: true)
                handler(.stopped)
            }
        }
    }

    deinit { port.close() }

    /// The counter state after the last reading (to carry over to a re-plug).
    public var counterState: CounterState { box.state.withLock { $0.counter } }

    /// Rejected lines by reason code, and the number of accepted lines.
    public var lineCounts: (accepted: Int, rejected: [String: Int]) {
        box.state.withLock { ($0.accepted, $0.rejected) }
    }

    /// Stops reading, flushes, and waits for the last event. Idempotent.
    public func stop() {
        reader?.stop()
        port.close()
    }

    /// Waits until the link has ended (unplug or stop).
    public func wait() {
        reader?.wait()
        port.close()
    }

    private static func log(_ event: LinkEvent, path: String, logger: Logger) {
        switch event {
        case .session(.rejected(let line, let why)):
            logger.notice("rejected line", metadata: ["device": "\(path)", "reason": "\(why.code)", "detail": "\(why)",
                                                      "line": "\(line.map { String($0.prefix(80)) } ?? "-")"])
        case .session(.counter(let e)):
            logger.info("counter: \(e)", metadata: ["device": "\(path)", "event": "\(e.code)"])
        case .storeFailed(let why):
            logger.error("\(why)", metadata: ["device": "\(path)"])
        case .gone(let why):
            logger.notice("device gone: \(why)", metadata: ["device": "\(path)"])
        default:
            break
        }
    }

    private static func handle(_ events: [SessionEvent], box: Box, handler: @Sendable (LinkEvent) -> Void) {
        for e in events {
            if case .sample(let s) = e, let recorder = box.recorder {
                do {
                    try recorder.add(s)
                    if box.oldestPending == nil { box.oldestPending = Date() }
                } catch {
                    handler(.storeFailed("step sample \(s.syncIdentifier) is invalid: \(error)"))
                }
            }
            handler(.session(e))
        }
        let snapshot = (box.session.counter.state, box.session.acceptedLines, box.session.rejects)
        box.state.withLock { $0 = snapshot }
    }

    private static func flush(box: Box, handler: @Sendable (LinkEvent) -> Void, force: Bool) {
        guard let recorder = box.recorder else { return }
        let due = recorder.pending.count >= box.options.batchSamples
            || (box.oldestPending.map { Date().timeIntervalSince($0) >= box.options.batchSeconds } ?? false)
        // A forced flush writes the state even with no samples (e.g. a new baseline).
        guard force || due else { return }
        let n = recorder.pending.count
        do {
            let summary = try recorder.flush(state: box.session.counter.state)
            box.oldestPending = nil
            handler(.stored(samples: n, summary: summary))
        } catch {
            handler(.storeFailed("could not store \(n) step sample(s) and the counter state: \(error)"))
        }
    }
}
