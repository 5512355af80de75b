import Foundation
import HealthModel

/// What happened to a stretch of input, in order.
package enum SessionEvent: Sendable, Hashable {
    /// A line parsed as a pedometer reading.
    case accepted(line: String, reading: PedometerReading)
    /// A line was rejected (counted and logged, never fatal); `line` is nil when it was never text.
    case rejected(line: String?, reason: LineRejection)
    /// The counter noticed something (duplicate, gap, wrap, reset, …).
    case counter(CounterEvent)
    /// A step interval to store.
    case sample(StepInterval)
}

/// One device's input pipeline: bytes → lines (``LineFramer``) → readings (``LineParser``) →
/// step intervals (``StepCounter``). A value type with no I/O; the reader and the store sit outside.
package struct PedometerSession: Sendable {
    /// The line format.
    package let format: LineFormat
    /// The counter (its ``StepCounter/state`` is what to persist).
    package private(set) var counter: StepCounter
    /// Rejected lines by reason code (`too-long`, `invalid-utf8`, `not-pedometer`, `bad-time`).
    package private(set) var rejects: [String: Int] = [:]
    /// Lines accepted.
    package private(set) var acceptedLines = 0
    private var framer: LineFramer

    /// Creates a session for a device.
    package init(format: LineFormat, counter: StepCounter, maxLineBytes: Int = LineFramer.defaultMaxLineBytes) {
        self.format = format
        self.counter = counter
        self.framer = LineFramer(maxLineBytes: maxLineBytes)
    }

    /// The gateway's wall clock stepped by `seconds` (``StepCounter/clockStepped(by:)``).
    package mutating func clockStepped(by seconds: Double) {
        counter.clockStepped(by: seconds)
    }

    /// Feeds the bytes of one read, received at `receivedAt`.
    package mutating func feed(_ bytes: [UInt8], receivedAt: Date) -> [SessionEvent] {
        var out: [SessionEvent] = []
        for framed in framer.feed(bytes) { handle(framed, receivedAt: receivedAt, into: &out) }
        return out
    }

    /// Ends the stream (the device went away, or reading stopped): flushes a final unterminated
    /// line and settles a reading the counter was holding back (``StepCounter/finish()``).
    package mutating func finish(receivedAt: Date) -> [SessionEvent] {
        var out: [SessionEvent] = []
        if let framed = framer.finish() { handle(framed, receivedAt: receivedAt, into: &out) }
        let settled = counter.finish()
        out += settled.events.map(SessionEvent.counter)
        out += settled.samples.map(SessionEvent.sample)
        return out
    }

    /// Feeds one already-framed line (used by `decode pedometer` and replay).
    package mutating func feedLine(_ line: String, receivedAt: Date) -> [SessionEvent] {
        var out: [SessionEvent] = []
        handle(.line(LineFramer.trim(line)), receivedAt: receivedAt, into: &out)
        return out
    }

    private mutating func handle(_ framed: FramedLine, receivedAt: Date, into out: inout [SessionEvent]) {
        switch framed {
        case .rejected(let why):
            rejects[why.code, default: 0] += 1
            out.append(.rejected(line: nil, reason: why))
        case .line(let text):
            switch LineParser.parse(text, format: format, receivedAt: receivedAt) {
            case .failure(let why):
                rejects[why.code, default: 0] += 1
                out.append(.rejected(line: text, reason: why))
            case .success(let reading):
                acceptedLines += 1
                out.append(.accepted(line: text, reading: reading))
                let result = counter.process(reading, receivedAt: receivedAt)
                out += result.events.map(SessionEvent.counter)
                out += result.samples.map(SessionEvent.sample)
            }
        }
    }
}

extension StepInterval {
    /// The metadata key flagging a sample whose steps' timing inside the interval is unknown.
    package static let timingUncertainKey = "HGTimingUncertain"

    /// The interval as a `stepCount` sample with its sync identifier (version 1).
    package func quantitySample(source: Source, device: Device?) throws -> QuantitySample {
        var user: [String: MetadataValue] = [:]
        if timingUncertain { user[Self.timingUncertainKey] = .number(1) }
        return try QuantitySample(type: .stepCount, quantity: Quantity(Double(steps), .count),
                                  start: start, end: end, source: source, device: device,
                                  metadata: Metadata(syncIdentifier: syncIdentifier, syncVersion: 1, user: user))
    }
}

extension SessionEvent {
    /// One `serial watch --json` line for device `device`: `event` is line (with the parsed
    /// `reading`), reject (`reason` code, `detail`, the `line` when it was text), counter
    /// (`kind`, `detail`) or sample (`steps`, `start`, `end`, `syncIdentifier`, `timingUncertain`).
    package func jsonObject(device: String) -> [String: any Sendable] {
        switch self {
        case .accepted(let line, let r):
            return ["event": "line", "device": device, "line": line, "reading": r.jsonObject]
        case .rejected(let line, let why):
            var o: [String: any Sendable] = ["event": "reject", "device": device, "reason": why.code, "detail": why.description]
            if let line { o["line"] = line }
            return o
        case .counter(let c):
            return ["event": "counter", "device": device, "kind": c.code, "detail": c.description]
        case .sample(let s):
            return ["event": "sample", "device": device, "type": "stepCount", "steps": s.steps,
                    "start": ISO8601.string(s.start), "end": ISO8601.string(s.end),
                    "syncIdentifier": s.syncIdentifier, "timingUncertain": s.timingUncertain]
        }
    }
}
