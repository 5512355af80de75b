import Foundation
import HealthModel
import HeartRateProfile
import HeartRateVariability

// A reference model for the differential tests of the one strap mapper: `live`'s former
// `HeartRateSampleBuilder` (QuantitySamples, arrays, SDNN over the window's beats corrected by the
// one-shot `ArtefactCorrection.correct`, where the mapper uses its allocation-free workspace), kept only here as an
// independent, obviously-correct statement of the same rules. The product maps with
// `HeartRateRecordMapper` alone.

/// Turns one strap's Heart Rate Measurement notifications into samples.
///
/// - Each notification with bpm > 0 becomes one `heartRate` sample (count/min), instantaneous
///   at its receipt time, with the device, the body sensor location and the sensor-contact
///   status as metadata, and its RR intervals (``RRIntervals``, exact ticks).
/// - bpm 0 means "no valid reading": no heart-rate sample (counted in ``Counters/zeroBPMSkipped``).
///   Its RR intervals have no sample to ride on: they are dropped (counted) and the next RR
///   is marked as preceded by a gap.
/// - RR values 0 and 0xFFFF are not intervals. Because beat times are reconstructed backwards
///   from the receipt time, intervals *older* than an invalid one cannot be placed: only the
///   ones after the last invalid value are kept, with `precededByGap`, and the rest counted
///   in ``Counters/rrDiscarded``.
/// - `precededByGap` is also set on the first RR after ``connectionStarted()``, after a
///   notification whose RR list was cut (odd trailing byte, overflow), and after notifications
///   without RR long enough that at least two beats should have been reported.
/// - Energy Expended (cumulative kJ since the strap's last reset, saturating at 0xFFFF)
///   becomes `activeEnergyBurned` interval samples from the previous energy reading's receipt
///   time to this one's: the delta when the value grew; the new value when it went down (the
///   strap was reset, so that much was spent since the reset); nothing while it stays at
///   0xFFFF (saturated: ``energyNeedsReset`` asks for a Control Point reset). The first
///   reading of a connection only sets the baseline. If the clock went backwards in between
///   (an NTP step), the interval is zero-length at the new receipt time.
/// - Optionally (``sdnnWindow``), consecutive gap-free RR intervals are collected until they
///   span the window (60 s by default), then one `heartRateVariabilitySDNN` sample (ms, the
///   sample standard deviation of the intervals) spanning those beats is produced. Any gap
///   starts a new window: SDNN over a series with missing beats would be wrong.
///
/// A value type: one builder per strap connection sequence, used from one task at a time.
struct HeartRateSampleBuilder: Sendable {
    /// What the builder skipped or noticed, for logs and summaries.
    struct Counters: Sendable, Hashable {
        var heartRateSamples = 0
        var energySamples = 0
        /// Notifications with bpm 0 (no sample made).
        var zeroBPMSkipped = 0
        /// Notifications whose bpm is outside heart rate's plausible range (no sample made).
        var implausibleSkipped = 0
        /// Notifications marked truncated by the decoder (their valid prefix was used).
        var truncated = 0
        /// RR values dropped: invalid ones (0, 0xFFFF) and older ones that could not be placed.
        var rrDiscarded = 0
        /// Times `precededByGap` was set.
        var rrGaps = 0
        /// Energy Expended went down (the strap's counter was reset).
        var energyResets = 0
        /// Energy readings at 0xFFFF.
        var energySaturated = 0
        init() {}
    }

    /// The samples one notification produced.
    struct Output: Sendable {
        /// The heart-rate sample (nil for bpm 0).
        var heartRate: QuantitySample?
        /// An energy sample when Energy Expended advanced.
        var energy: QuantitySample?
        /// An SDNN sample when a gap-free window of RR intervals completed.
        var sdnn: QuantitySample?
        /// All of them, in order, without nils.
        var samples: [QuantitySample] { [heartRate, energy, sdnn].compactMap { $0 } }
    }

    /// The source HealthGate's BLE path writes as.
    static let bleSource = Source(name: "HealthGate BLE", identifier: "org.healthgate.ble")
    /// Metadata key set to 1 on samples from a truncated payload (``Metadata/payloadTruncatedKey``).
    static let truncatedKey = Metadata.payloadTruncatedKey
    /// Metadata key set to 1 on an energy sample whose end reading was saturated (0xFFFF): the
    /// true value may be larger (``Metadata/energySaturatedKey``).
    static let energySaturatedKey = Metadata.energySaturatedKey

    var source: Source
    var device: Device?
    var sensorLocation: HeartRateSensorLocation?
    /// The RR span after which an SDNN sample is made; nil turns SDNN off.
    var sdnnWindow: Duration? = .seconds(60)
    private(set) var counters = Counters()
    /// True once Energy Expended sits at 0xFFFF: write ``HeartRateControlPoint/resetEnergyExpended``.
    private(set) var energyNeedsReset = false

    private var lastEnergy: (kJ: UInt16, at: Date)?
    private var gapPending = true
    private var lastRRAt: Date?
    private var window: [UInt16] = []
    private var windowTicks = 0
    private var windowStart: Date?
    private var windowLast: Date?

    /// A builder for one strap.
    init(source: Source = HeartRateSampleBuilder.bleSource, device: Device?, sensorLocation: HeartRateSensorLocation?) {
        self.source = source
        self.device = device
        self.sensorLocation = sensorLocation
    }

    /// Call on every (re)connection: the next RR is preceded by a gap and energy starts a new
    /// baseline (what happened while disconnected is unknown).
    mutating func connectionStarted() {
        connectionStarted(energyContinues: false)
    }

    /// Call on every (re)connection. With `energyContinues`, the energy baseline of the previous
    /// connection is kept: the strap's counter is cumulative since its last reset and keeps
    /// counting while the link is down, so the first reading after a reconnect yields one
    /// `activeEnergyBurned` sample spanning the outage (a lower value still reads as a reset).
    /// `live` uses it so a link loss loses no energy; RR still gets its gap mark.
    mutating func connectionStarted(energyContinues: Bool) {
        gapPending = true
        windowStart = nil
        if !energyContinues { lastEnergy = nil }
        lastRRAt = nil
    }

    private mutating func collectSDNN(_ rr: RRIntervals, receivedAt: Date, span: Duration) throws -> QuantitySample? {
        let ticks = rr.ticks.reduce(0) { $0 + Int($1) }
        // A gap, or a clock stepped backwards since the last beats (the window would end before
        // it starts), begins a new window.
        if rr.precededByGap || windowStart == nil || windowLast.map({ receivedAt < $0 }) ?? false {
            window.removeAll(keepingCapacity: true)
            windowTicks = 0
            windowStart = receivedAt.addingTimeInterval(-Double(ticks) / 1024)
        }
        windowLast = receivedAt
        window += rr.ticks
        windowTicks += ticks
        let needed = Double(span.components.seconds) + Double(span.components.attoseconds) / 1e18
        guard Double(windowTicks) / 1024 >= needed, window.count >= 2, let start = windowStart else { return nil }
        // The window's beats, corrected one-shot (`hrv`'s path), measured over the corrected ones;
        // refused with more than 10 % of the intervals corrected.
        let beats = window.reduce(into: [Int64(0)]) { $0.append($0.last! + Int64($1)) }
        let intervals = window.count
        window.removeAll(keepingCapacity: true)
        windowTicks = 0
        windowStart = nil
        let fixed = ArtefactCorrection.correct(beats)
        guard Double(fixed.corrected.count) <= 0.10 * Double(intervals),
              let m = TimeDomain(runs: [zip(fixed.beats, fixed.beats.dropFirst()).map { Double($1 - $0) * 1000 / 1024 }]) else { return nil }
        return try QuantitySample(type: .heartRateVariabilitySDNN, quantity: Quantity(m.sdnn, .millisecond),
                                  start: start, end: receivedAt, source: source, device: device)
    }

    /// Maps one decoded notification received at `receivedAt`.
    /// - Throws: ``HealthModelError`` only if a sample fails validation (not expected for
    ///   decoded values).
    mutating func add(_ m: HeartRateMeasurement, receivedAt: Date) throws -> Output {
        var out = Output()
        if m.truncated { counters.truncated += 1 }

        // RR: keep the placeable suffix of valid intervals.
        var rr: RRIntervals?
        if !m.rrIntervals.isEmpty {
            var ticks: [UInt16] = []
            ticks.reserveCapacity(m.rrIntervals.count)
            var gap = gapPending
            for t in m.rrIntervals {
                if t == 0 || t == 0xFFFF {
                    counters.rrDiscarded += ticks.count + 1
                    ticks.removeAll(keepingCapacity: true)
                    gap = true
                } else {
                    ticks.append(t)
                }
            }
            if !ticks.isEmpty {
                if m.beatsPerMinute == 0 {
                    counters.rrDiscarded += ticks.count  // no sample to carry them
                    gapPending = true
                } else {
                    rr = RRIntervals(ticks: ticks, precededByGap: gap)
                    if gap { counters.rrGaps += 1 }
                    gapPending = false
                }
            } else {
                gapPending = true
            }
            lastRRAt = receivedAt
        } else if m.beatsPerMinute > 0, let since = lastRRAt,
                  receivedAt.timeIntervalSince(since) * Double(m.beatsPerMinute) / 60 >= 2 {
            gapPending = true
        }
        switch m.malformation {
        case .oddTrailingByte, .rrOverflow: gapPending = true
        default: break
        }

        var metadata = Metadata(heartRateSensorLocation: sensorLocation, sensorContact: m.sensorContact)
        if m.truncated { metadata.user[Self.truncatedKey] = .number(1) }

        if m.beatsPerMinute == 0 {
            counters.zeroBPMSkipped += 1
        } else if !QuantityType.heartRate.isPlausible(Double(m.beatsPerMinute)) {
            counters.implausibleSkipped += 1
        } else {
            out.heartRate = try QuantitySample(
                type: .heartRate, quantity: Quantity(Double(m.beatsPerMinute), .countPerMinute),
                start: receivedAt, end: receivedAt, source: source, device: device, metadata: metadata, rrIntervals: rr)
            counters.heartRateSamples += 1
        }

        if let rr, let span = sdnnWindow {
            out.sdnn = try collectSDNN(rr, receivedAt: receivedAt, span: span)
        }

        if let kj = m.energyExpendedKJ {
            if kj == 0xFFFF { counters.energySaturated += 1 }
            if let last = lastEnergy {
                let step = EnergyExpendedStep(from: last.kJ, to: kj)
                if step.wasReset { counters.energyResets += 1 }
                let delta = step.kilojoules
                if delta > 0 {
                    var em = Metadata()
                    if kj == 0xFFFF { em.user[Self.energySaturatedKey] = .number(1) }
                    out.energy = try QuantitySample(
                        type: .activeEnergyBurned, quantity: Quantity(Double(delta), .kilojoule),
                        start: min(last.at, receivedAt), end: receivedAt, source: source, device: device, metadata: em)
                    counters.energySamples += 1
                }
            }
            lastEnergy = (kj, receivedAt)
            energyNeedsReset = kj == 0xFFFF
        }
        return out
    }
}
