import Foundation

/// How a device's counter is interpreted. Values other than ``deviceID`` have sensible defaults.
package struct CounterConfiguration: Sendable, Hashable, Codable {
    /// A stable id for the device (its USB serial number, or a name the user gave). It keys the
    /// persisted state and is part of every sync identifier.
    package var deviceID: String
    /// The counter's width when known (16, 24 or 32): a decrease that fits is then a wrap.
    package var counterBits: Int?
    /// Use the line's `t` (device Unix time) for timestamps and the rate check. Off by default:
    /// receipt time is used. `t` is used for ordering within a boot either way.
    package var trustDeviceTime: Bool
    /// Above this rate a reading is implausible (a corrupt line or a wrong profile): re-baseline.
    package var maxStepsPerSecond: Double
    /// Receipt-time spans shorter than this count as this long in the rate check, so lines that
    /// arrive together in one read are not mistaken for a burst of steps.
    package var minimumRateWindow: TimeInterval
    /// A span longer than this is a gap: its steps are stored as one sample flagged
    /// `HGTimingUncertain` (their timing inside the span is unknown).
    package var longGap: TimeInterval
    /// A `seq` that goes back by at most this many lines is a late or repeated line (dropped);
    /// further back, the device's line counter restarted (a reset).
    package var reorderWindowLines: UInt64
    /// A device time that goes back by at most this many seconds is a late line (dropped);
    /// further back, the device's clock restarted.
    package var reorderWindowSeconds: Double

    /// Creates a configuration.
    /// - Throws: ``SerialConfigError/badCounterBits(_:)`` for a width other than 16, 24 or 32.
    package init(deviceID: String, counterBits: Int? = nil, trustDeviceTime: Bool = false,
                maxStepsPerSecond: Double = 5, minimumRateWindow: TimeInterval = 10,
                longGap: TimeInterval = 3600, reorderWindowLines: UInt64 = 16,
                reorderWindowSeconds: Double = 60) throws {
        if let b = counterBits, ![16, 24, 32].contains(b) { throw SerialConfigError.badCounterBits(b) }
        self.deviceID = deviceID
        self.counterBits = counterBits
        self.trustDeviceTime = trustDeviceTime
        self.maxStepsPerSecond = maxStepsPerSecond
        self.minimumRateWindow = minimumRateWindow
        self.longGap = longGap
        self.reorderWindowLines = reorderWindowLines
        self.reorderWindowSeconds = reorderWindowSeconds
    }
}

/// The counter's memory between readings. It is `Codable` so it can be persisted (the store's
/// state table) and restored after a gateway restart: totals stay exact across the restart.
package struct CounterState: Sendable, Hashable, Codable {
    /// The last accepted reading of the cumulative counter.
    package struct Baseline: Sendable, Hashable, Codable {
        package var count: UInt64
        package var receivedAt: Double
        package var deviceTime: Double?
        package var seq: UInt64?
        package var boot: String?
    }

    /// Running totals, for logs and `serial watch` summaries.
    package struct Tally: Sendable, Hashable, Codable {
        package var steps: UInt64 = 0
        package var samples = 0
        package var duplicates = 0
        package var outOfOrder = 0
        package var seqGaps = 0
        package var missingLines: UInt64 = 0
        package var wraps = 0
        package var resets = 0
        package var implausible = 0
        package var longGaps = 0
        package var glitches = 0
    }

    /// A reading held back for one more reading because it may be a glitch (a corrupt number):
    /// an unexplained decrease (``Kind/reset``) or an implausible jump (``Kind/jump``).
    package struct Suspect: Sendable, Hashable, Codable {
        package enum Kind: String, Sendable, Hashable, Codable { case reset, jump }
        package var kind: Kind
        package var reading: Baseline
    }

    /// The cumulative counter's baseline, nil before the first reading.
    package var baseline: Baseline?
    /// The last delta reading (profiles with delta semantics), nil before the first.
    package var lastDelta: Baseline?
    /// Counts baselines taken; part of every sync identifier so identifiers never repeat, even
    /// when a device without a `boot` id restarts its counter and `seq`.
    package var segment: UInt64 = 0
    /// Running totals.
    package var tally = Tally()
    /// A reading held back until the next one tells whether it was real (see ``Suspect``).
    package var suspect: Suspect?
    /// The most recent earlier `boot` ids (newest last, at most 8): a reading from a past boot
    /// is a stale resend, dropped as out of order rather than taken for a new reset.
    package var pastBoots: [String] = []

    /// A fresh state (no baseline).
    package init() {}
}

/// Why the counter took a new baseline instead of emitting steps.
package enum BaselineReason: String, Sendable, Hashable, Codable {
    /// The first reading this device was ever seen with.
    case first
    /// The reading was implausible (see ``CounterEvent/implausible(steps:seconds:)``).
    case implausible
}

/// Something the counter noticed. Each is logged; none is fatal.
package enum CounterEvent: Sendable, Hashable, CustomStringConvertible {
    /// A new baseline was taken; nothing was emitted.
    case baseline(BaselineReason, count: UInt64)
    /// The same reading again (same `seq`, or same device time): dropped.
    case duplicate
    /// A reading older than the baseline (by `seq` or device time): dropped.
    case outOfOrder
    /// Lines were lost between two readings (`seq` jumped by more than one).
    case seqGap(missing: UInt64)
    /// The counter wrapped at 2^bits.
    case wrap(bits: Int)
    /// The counter restarted; `certain` when `boot` changed (else inferred from a decrease or
    /// a restarted `seq`).
    case reset(certain: Bool)
    /// More steps than the rate cap allows in the span: re-baselined, nothing emitted.
    case implausible(steps: UInt64, seconds: Double)
    /// The span since the baseline was longer than ``CounterConfiguration/longGap``.
    case longGap(seconds: Double)
    /// The clock went backwards (receipt time, or a trusted device clock): the sample was
    /// emitted with zero length at the new time and flagged.
    case clockWentBack(seconds: Double)
    /// A reading was held back (an unexplained decrease, or an implausible jump) until the next
    /// reading shows whether it was real.
    case held(count: UInt64, reason: String)
    /// A held reading was a glitch (the next reading continued from the baseline): dropped.
    case glitch(count: UInt64)

    /// A short machine-readable code.
    package var code: String {
        switch self {
        case .baseline: "baseline"
        case .duplicate: "duplicate"
        case .outOfOrder: "out-of-order"
        case .seqGap: "seq-gap"
        case .wrap: "wrap"
        case .reset: "reset"
        case .implausible: "implausible"
        case .longGap: "long-gap"
        case .clockWentBack: "clock-went-back"
        case .held: "held"
        case .glitch: "glitch"
        }
    }

    package var description: String {
        switch self {
        case .baseline(let r, let c): "baseline at \(c) (\(r.rawValue))"
        case .duplicate: "duplicate reading dropped"
        case .outOfOrder: "out-of-order reading dropped"
        case .seqGap(let n): "\(n) line(s) missing (seq gap)"
        case .wrap(let b): "counter wrapped at 2^\(b)"
        case .reset(let certain): certain ? "counter reset (boot changed)" : "counter reset (inferred)"
        case .implausible(let s, let sec): "implausible: \(s) steps in \(String(format: "%.3g", sec)) s; re-baselined"
        case .longGap(let s): "gap of \(String(format: "%.9g", s)) s: one sample, timing uncertain"
        case .clockWentBack(let s): "clock went back \(String(format: "%.3g", s)) s"
        case .held(let c, let why): "holding \(c) (\(why)) until the next reading confirms it"
        case .glitch(let c): "\(c) was a glitch (the next reading continued the count): dropped"
        }
    }
}

/// One emitted step interval: `steps` steps in [`start`, `end`], with its sync identifier.
package struct StepInterval: Sendable, Hashable {
    package var steps: UInt64
    package var start: Date
    package var end: Date
    /// Deterministic for the same readings; a resend replaces instead of adding.
    package var syncIdentifier: String
    /// True when the steps' timing inside the interval is unknown (a long gap, a clock jump).
    package var timingUncertain: Bool
}

/// What one reading produced.
package struct CounterOutput: Sendable, Hashable {
    /// Samples to store (zero or one per reading).
    package var samples: [StepInterval] = []
    /// What the counter noticed.
    package var events: [CounterEvent] = []
}

/// Turns pedometer readings into exact `stepCount` intervals (docs/serial-pedometers.md,
/// "Counter algorithm"). A pure, deterministic state machine: the same readings with the same
/// receipt times always give the same samples and events; its ``state`` can be persisted and
/// restored.
package struct StepCounter: Sendable {
    /// The configuration.
    package let configuration: CounterConfiguration
    /// The state to persist after each batch.
    package private(set) var state: CounterState

    /// Creates a counter, optionally restored from persisted state.
    package init(configuration: CounterConfiguration, state: CounterState = CounterState()) {
        self.configuration = configuration
        self.state = state
    }

    /// The gateway's wall clock stepped by `seconds` since the last reading (NTP setting a
    /// board's clock, `date -s`): the receipt times kept from earlier readings move with it, so
    /// the next interval lasts what really passed instead of the step (a year) or less than
    /// nothing. Device times are the device's own clock and do not move.
    package mutating func clockStepped(by seconds: Double) {
        state.baseline?.receivedAt += seconds
        state.lastDelta?.receivedAt += seconds
        state.suspect?.reading.receivedAt += seconds
    }

    /// Feeds one reading received at `receivedAt` (the gateway clock).
    package mutating func process(_ reading: PedometerReading, receivedAt: Date) -> CounterOutput {
        if let c = reading.steps { return processCumulative(c, reading, receivedAt.timeIntervalSince1970) }
        if let d = reading.deltaSteps { return processDelta(d, reading, receivedAt.timeIntervalSince1970) }
        return CounterOutput()
    }

    // MARK: ordering

    private enum Order { case fresh, duplicate, late, restarted }

    /// Counts and reports a repeated or late reading — the caller then drops it — and says
    /// whether it was one. The one bookkeeping rule of the cumulative and the delta path.
    private mutating func dropsStale(_ o: Order, into out: inout CounterOutput) -> Bool {
        switch o {
        case .duplicate:
            state.tally.duplicates += 1
            out.events.append(.duplicate)
            return true
        case .late:
            state.tally.outOfOrder += 1
            out.events.append(.outOfOrder)
            return true
        case .fresh, .restarted:
            return false
        }
    }

    /// Where `r` stands relative to `b`: seq decides when both have one; else device time.
    private func order(_ r: PedometerReading, count: UInt64?, after b: CounterState.Baseline) -> (Order, gap: UInt64) {
        let cfg = configuration
        if let s = r.seq, let ps = b.seq {
            if s == ps { return (.duplicate, 0) }
            // A late line of a cumulative counter cannot carry a higher count: that is a restart.
            if s < ps { return (ps - s <= cfg.reorderWindowLines && (count ?? 0) <= b.count ? .late : .restarted, 0) }
            return (.fresh, s - ps - 1)
        }
        if let t = r.deviceTime, let pt = b.deviceTime {
            if t == pt { return (count == b.count ? .duplicate : .late, 0) }
            if t < pt { return (pt - t <= cfg.reorderWindowSeconds && (count ?? 0) <= b.count ? .late : .restarted, 0) }
        }
        return (.fresh, 0)
    }

    /// The interval's ends in the time base the configuration asks for, and whether it is device time.
    private func span(from b: CounterState.Baseline, to r: PedometerReading, receivedAt: Double)
        -> (start: Double, end: Double, deviceBase: Bool)
    {
        span(from: b, deviceTime: r.deviceTime, receivedAt: receivedAt)
    }

    private func span(from b: CounterState.Baseline, deviceTime: Double?, receivedAt: Double)
        -> (start: Double, end: Double, deviceBase: Bool)
    {
        if configuration.trustDeviceTime, let t = deviceTime, let pt = b.deviceTime { return (pt, t, true) }
        if configuration.trustDeviceTime, let t = deviceTime { return (b.receivedAt, t, false) }
        return (b.receivedAt, receivedAt, false)
    }

    private func baseline(_ count: UInt64, _ r: PedometerReading, _ receivedAt: Double) -> CounterState.Baseline {
        .init(count: count, receivedAt: receivedAt, deviceTime: r.deviceTime, seq: r.seq, boot: r.boot)
    }

    private func key(_ b: CounterState.Baseline) -> String {
        if let s = b.seq { return "s\(s)" }
        if let t = b.deviceTime { return "t\(Self.milliseconds(t))" }
        return "r\(Self.milliseconds(b.receivedAt))"
    }

    /// Seconds as whole milliseconds for an identifier; a time too large for Int64 (a restored
    /// state or a reading that skipped the parser's time rule) keeps its exact double spelling
    /// instead of trapping.
    private static func milliseconds(_ t: Double) -> String {
        if let ms = Int64(exactly: (t * 1000).rounded()) { return "\(ms)" }
        return "\(t)"
    }

    // MARK: cumulative

    /// Settles a held reading at the end of a stream (unplug, stop): an unexplained decrease is
    /// taken as a reset, an implausible jump as a new baseline. Call it before persisting the
    /// state at the end of a session.
    package mutating func finish() -> CounterOutput {
        var out = CounterOutput()
        if let s = state.suspect, let b = state.baseline {
            state.suspect = nil
            confirm(s, over: b, into: &out)
        }
        return out
    }

    /// Whether `delta` steps between `b` and a reading (device time `t`, receipt `now`) is
    /// within the rate cap: device time when trusted, else receipt time over the minimum window.
    private func plausible(_ delta: UInt64, from b: CounterState.Baseline, deviceTime t: Double?, receivedAt now: Double) -> Bool {
        let (start, end, deviceBase) = span(from: b, deviceTime: t, receivedAt: now)
        let seconds = deviceBase && end > start ? end - start : max(now - b.receivedAt, configuration.minimumRateWindow)
        return Double(delta) <= configuration.maxStepsPerSecond * seconds
    }

    private func rateSeconds(from b: CounterState.Baseline, deviceTime t: Double?, receivedAt now: Double) -> Double {
        let (start, end, deviceBase) = span(from: b, deviceTime: t, receivedAt: now)
        return deviceBase && end > start ? end - start : max(now - b.receivedAt, configuration.minimumRateWindow)
    }

    /// Takes a held reading as real: a reset (its count is the steps since) or a new baseline.
    private mutating func confirm(_ s: CounterState.Suspect, over b: CounterState.Baseline, into out: inout CounterOutput) {
        let r = s.reading
        state.segment += 1
        switch s.kind {
        case .jump:
            state.tally.implausible += 1
            state.baseline = r
            out.events.append(.implausible(steps: r.count &- b.count, seconds: rateSeconds(from: b, deviceTime: r.deviceTime, receivedAt: r.receivedAt)))
            out.events.append(.baseline(.implausible, count: r.count))
        case .reset:
            state.tally.resets += 1
            out.events.append(.reset(certain: false))
            guard r.count > 0 else { state.baseline = r; return }
            guard plausible(r.count, from: b, deviceTime: r.deviceTime, receivedAt: r.receivedAt) else {
                state.tally.implausible += 1
                state.baseline = r
                out.events.append(.implausible(steps: r.count, seconds: rateSeconds(from: b, deviceTime: r.deviceTime, receivedAt: r.receivedAt)))
                out.events.append(.baseline(.implausible, count: r.count))
                return
            }
            emit(r.count, from: b, to: r, into: &out)
        }
    }

    /// The timing rule of every emitted interval: a clock that went back makes it zero-length at
    /// the new time, a span over ``CounterConfiguration/longGap`` is counted; either way the
    /// interval is marked as timing-uncertain (the returned value).
    private mutating func checkTiming(start: inout Double, end: Double, into out: inout CounterOutput) -> Bool {
        if end < start {
            out.events.append(.clockWentBack(seconds: start - end))
            start = end
            return true
        }
        if end - start > configuration.longGap {
            state.tally.longGaps += 1
            out.events.append(.longGap(seconds: end - start))
            return true
        }
        return false
    }

    /// Emits `delta` steps over [b, next] and makes `next` the baseline.
    private mutating func emit(_ delta: UInt64, from b: CounterState.Baseline, to next: CounterState.Baseline,
                               into out: inout CounterOutput) {
        let (start, end, _) = span(from: b, deviceTime: next.deviceTime, receivedAt: next.receivedAt)
        append(delta, start: start, end: end,
               id: "serial:\(configuration.deviceID):\(state.segment):\(next.boot ?? b.boot ?? "-"):\(key(b))-\(key(next)):\(b.count)-\(next.count)",
               into: &out)
        state.baseline = next
    }

    /// Appends a step interval of `steps` over [start, end] (its timing checked first) under
    /// sync identifier `id`, and counts it.
    private mutating func append(_ steps: UInt64, start: Double, end: Double, id: String, into out: inout CounterOutput) {
        var start = start
        let uncertain = checkTiming(start: &start, end: end, into: &out)
        out.samples.append(StepInterval(steps: steps, start: Date(timeIntervalSince1970: start),
                                        end: Date(timeIntervalSince1970: end), syncIdentifier: id,
                                        timingUncertain: uncertain))
        state.tally.steps += steps
        state.tally.samples += 1
    }

    private mutating func processCumulative(_ c: UInt64, _ r: PedometerReading, _ now: Double) -> CounterOutput {
        var out = CounterOutput()
        guard let b = state.baseline else {
            state.baseline = baseline(c, r, now)
            state.segment += 1
            out.events.append(.baseline(.first, count: c))
            return out
        }
        if let boot = r.boot, boot != b.boot, state.pastBoots.contains(boot) {
            state.tally.outOfOrder += 1
            out.events.append(.outOfOrder)
            return out
        }
        let bootChanged = r.boot != nil && b.boot != nil && r.boot != b.boot
        var seqRestarted = false
        var gap: UInt64 = 0
        if !bootChanged {
            let (o, g) = order(r, count: c, after: b)
            if dropsStale(o, into: &out) { return out }
            switch o {
            case .duplicate, .late:
                break   // counted and dropped above
            case .restarted:
                seqRestarted = r.seq != nil && b.seq != nil
            case .fresh:
                gap = g
            }
        }

        // A held reading is settled by this one: continuing from the baseline makes it a glitch,
        // continuing from it makes it real; a boot change or restart settles it as real first.
        if let s = state.suspect {
            state.suspect = nil
            let sr = s.reading
            if bootChanged || seqRestarted {
                confirm(s, over: b, into: &out)
                let rest = processCumulative(c, r, now)
                return CounterOutput(samples: out.samples + rest.samples, events: out.events + rest.events)
            }
            if c >= b.count, plausible(c - b.count, from: b, deviceTime: r.deviceTime, receivedAt: now) {
                state.tally.glitches += 1
                out.events.append(.glitch(count: sr.count))
            } else if c >= sr.count, plausible(c - sr.count, from: sr, deviceTime: r.deviceTime, receivedAt: now) {
                confirm(s, over: b, into: &out)
                let rest = processCumulative(c, r, now)
                return CounterOutput(samples: out.samples + rest.samples, events: out.events + rest.events)
            } else {
                state.tally.glitches += 1
                out.events.append(.glitch(count: sr.count))
            }
        }

        if bootChanged, let old = b.boot {
            state.pastBoots.append(old)
            if state.pastBoots.count > 8 { state.pastBoots.removeFirst(state.pastBoots.count - 8) }
        }
        if gap > 0 {
            state.tally.seqGaps += 1
            state.tally.missingLines += gap
            out.events.append(.seqGap(missing: gap))
        }

        let next = baseline(c, r, now)
        let certain = bootChanged || seqRestarted
        // How many steps since the baseline, and why.
        var delta: UInt64
        if certain {
            delta = c
            state.tally.resets += 1
            state.segment += 1
            out.events.append(.reset(certain: bootChanged))
        } else if c >= b.count {
            delta = c - b.count
        } else if let bits = configuration.counterBits, isWrap(from: b.count, to: c, bits: bits, baseline: b, reading: r, now: now) {
            delta = c &+ (UInt64(1) << UInt64(bits)) &- b.count
            state.tally.wraps += 1
            out.events.append(.wrap(bits: bits))
        } else {
            // An unexplained decrease: a reset, or a corrupt number. The next reading decides.
            state.suspect = CounterState.Suspect(kind: .reset, reading: next)
            out.events.append(.held(count: c, reason: "the count went down from \(b.count)"))
            return out
        }

        if delta == 0 {
            state.baseline = next  // keep the count; move the time forward
            return out
        }
        guard plausible(delta, from: b, deviceTime: r.deviceTime, receivedAt: now) else {
            let seconds = rateSeconds(from: b, deviceTime: r.deviceTime, receivedAt: now)
            if certain {
                state.tally.implausible += 1
                state.baseline = next
                state.segment += 1
                out.events.append(.implausible(steps: delta, seconds: seconds))
                out.events.append(.baseline(.implausible, count: c))
            } else {
                state.suspect = CounterState.Suspect(kind: .jump, reading: next)
                out.events.append(.held(count: c, reason: "\(delta) steps in \(String(format: "%.3g", seconds)) s is above the rate cap"))
            }
            return out
        }
        emit(delta, from: b, to: next, into: &out)
        return out
    }

    /// A decrease is a wrap when both values fit the width, the old value was in the top quarter
    /// of the range and the new one in the bottom quarter, and the wrapped delta is plausible.
    private func isWrap(from old: UInt64, to new: UInt64, bits: Int, baseline b: CounterState.Baseline,
                        reading r: PedometerReading, now: Double) -> Bool {
        let range = UInt64(1) << UInt64(bits)
        guard old < range, new < range, old >= range - range / 4, new < range / 4 else { return false }
        let delta = new + range - old
        let (start, end, deviceBase) = span(from: b, to: r, receivedAt: now)
        let seconds = deviceBase && end > start ? end - start : max(now - b.receivedAt, configuration.minimumRateWindow)
        return Double(delta) <= configuration.maxStepsPerSecond * seconds
    }

    // MARK: delta

    private mutating func processDelta(_ d: UInt64, _ r: PedometerReading, _ now: Double) -> CounterOutput {
        var out = CounterOutput()
        let next = baseline(0, r, now)
        var start = now, end = now, deviceBase = false
        let previous = state.lastDelta
        if let b = previous {
            let (o, gap) = order(r, count: nil, after: b)
            if dropsStale(o, into: &out) { return out }
            switch o {
            case .duplicate, .late:
                break   // counted and dropped above
            case .restarted:
                state.segment += 1
            case .fresh:
                if gap > 0 {
                    state.tally.seqGaps += 1
                    state.tally.missingLines += gap
                    out.events.append(.seqGap(missing: gap))
                }
            }
            (start, end, deviceBase) = span(from: b, to: r, receivedAt: now)
        } else {
            state.segment += 1
        }
        state.lastDelta = next
        if configuration.trustDeviceTime, let t0 = r.deltaStart, let t1 = r.deltaEnd, t0 <= t1 {
            (start, end, deviceBase) = (t0, t1, true)
        }
        guard d > 0 else { return out }
        let seconds = deviceBase && end > start ? end - start
            : max(now - (previous?.receivedAt ?? now), configuration.minimumRateWindow)
        if Double(d) > configuration.maxStepsPerSecond * seconds {
            state.tally.implausible += 1
            out.events.append(.implausible(steps: d, seconds: seconds))
            return out
        }
        let from = previous.map(key) ?? "-"
        append(d, start: start, end: end, id: "serial:\(configuration.deviceID):\(state.segment):\(r.boot ?? "-"):d\(from)-\(key(next)):\(d)",
               into: &out)
        return out
    }
}
