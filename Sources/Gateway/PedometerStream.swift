import Foundation
import HealthModel
import Ingest
import Platform
import SerialPedometer
import Synchronization

/// Bytes → lines → session, one line at a time so every sample carries the counter state
/// right after it (a batch boundary between two samples then never persists a state that is
/// ahead of the committed samples).
///
/// One per open pedometer (``PedometerSource``) or per pedometer in a capture (``ReplaySource``):
/// the same framing, parsing, counter, sync identifiers and side-channel state for both.
struct PedometerStream: @unchecked Sendable {
    // @unchecked: only the producing thread touches it (the reader thread under the source's
    // mutex, or the replay's thread).
    var session: PedometerSession
    var framer = LineFramer()
    let ring: SampleRing
    /// The counter state's key, or nil to persist no state (a replay).
    let key: String?
    let counters: PedometerSource.Counters
    /// Called before each push (a replay waits there for room instead of spilling).
    let beforePush: (@Sendable () -> Void)?
    /// Sees every session event (the front-ends' tap).
    let observer: (@Sendable (PedometerEvent) -> Void)?
    let device: Device
    let slots: (type: UInt16, source: UInt16, device: UInt16)
    /// The newest state handed to the ring for persisting, and when.
    var persisted: CounterState?
    var persistedAt = ContinuousClock.now
    let encoder = JSONEncoder()
    /// Steps of the wall clock the receipt times follow (a live pedometer's: the system clock;
    /// nil for a replay, whose times come from the capture).
    var clock: ClockSteps.Cursor?

    init(session: PedometerSession, ring: SampleRing, key: String?, counters: PedometerSource.Counters, device: Device,
         slots: (UInt16, UInt16, UInt16), beforePush: (@Sendable () -> Void)? = nil,
         observer: (@Sendable (PedometerEvent) -> Void)? = nil) {
        self.beforePush = beforePush
        self.observer = observer
        self.session = session
        self.ring = ring
        self.key = key
        self.counters = counters
        self.device = device
        self.slots = slots
        self.persisted = session.counter.state
    }

    mutating func feed(_ bytes: [UInt8], at: Date) {
        for framed in framer.feed(bytes) { line(framed, at: at) }
    }

    /// The end of the stream: a last unterminated line, then the counter settles what it
    /// held back; the final state is persisted.
    /// Returns the final counter state.
    @discardableResult
    mutating func finish(at: Date) -> CounterState {
        if let framed = framer.finish() { line(framed, at: at) }
        emit(session.finish(receivedAt: at), final: true)
        counters.finished.add(1, ordering: .relaxed)
        return session.counter.state
    }

    /// Feeds one line already framed (a capture's); the session trims it as the framer would.
    mutating func feedLine(_ text: String, at: Date) {
        line(.line(text), at: at)
    }

    private mutating func line(_ framed: FramedLine, at: Date) {
        switch framed {
        case .rejected(let why):
            counters.rejected.add(1, ordering: .relaxed)
            observer?(.session(.rejected(line: nil, reason: why)))
        case .line(let text):
            if let stepped = clock?.take(), stepped != 0 { session.clockStepped(by: stepped) }
            emit(session.feedLine(text, receivedAt: at))
        }
    }

    private mutating func emit(_ events: [SessionEvent], final: Bool = false) {
        var intervals: [StepInterval] = []
        for e in events {
            observer?(.session(e))
            switch e {
            case .accepted: counters.lines.add(1, ordering: .relaxed)
            case .rejected: counters.rejected.add(1, ordering: .relaxed)
            case .counter: break
            case .sample(let interval): intervals.append(interval)
            }
        }
        let state = session.counter.state
        // Persisted with its samples, at the end, or at once when it changes how the next
        // reading is counted (count, boot, a held-back reading). An idle pedometer repeating
        // its count only moves the last reading's time, sequence number and tallies: that
        // is persisted at most every `PedometerSource.idleStateInterval`, not once per flush
        // window (a small transaction and fsync a second, for months, on an SD card).
        let due = state != persisted
            && (!intervals.isEmpty || final || Self.countsDifferently(state, persisted)
                || persistedAt.duration(to: .now) >= PedometerSource.idleStateInterval)
        let encoded = due && key != nil ? try? encoder.encode(state) : nil
        if encoded != nil {
            persisted = state
            persistedAt = .now
        }
        guard !intervals.isEmpty else {
            if let encoded, let key { ring.setState(encoded, forKey: key) }
            return
        }
        for (k, interval) in intervals.enumerated() {
            let metadata = (try? interval.quantitySample(source: PedometerSource.source, device: device).metadata)
                ?? Metadata(syncIdentifier: interval.syncIdentifier, syncVersion: 1)
            // The state after this reading goes with its last sample.
            let last = k == intervals.count - 1
            beforePush?()
            ring.push(SampleRecord(typeSlot: slots.type, value: Double(interval.steps),
                                   start: interval.start.timeIntervalSince1970,
                                   end: interval.end.timeIntervalSince1970,
                                   sourceSlot: slots.source, deviceSlot: slots.device),
                      attachment: SampleAttachment(metadata: metadata, stateKey: key, state: last ? encoded : nil))
            counters.intervals.add(1, ordering: .relaxed)
        }
    }

    /// Whether `a` and `b` count the next reading differently: another baseline count or
    /// boot, or another held-back reading.
    private static func countsDifferently(_ a: CounterState, _ b: CounterState?) -> Bool {
        guard let b else { return true }
        return a.baseline?.count != b.baseline?.count || a.baseline?.boot != b.baseline?.boot || a.suspect != b.suspect
    }
}
