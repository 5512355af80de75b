import HealthModel
import HeartRateProfile
import Ingest

/// Turns one strap's decoded Heart Rate Measurements into ingest records, without allocating:
/// the daemon's (and replay's) counterpart of `HeartRateSampleBuilder`, which `live` uses, with
/// the same rules so `run` and `live` store the same samples from the same notifications:
///
/// - bpm > 0 becomes one `heartRate` record at the receipt time, with sensor contact, the body
///   sensor location and its RR intervals; bpm 0 (no valid reading) is skipped, and its RR
///   intervals, having no sample to ride on, make the next RR "preceded by a gap".
/// - RR values 0 and 0xFFFF are not intervals; the ones before the last such value cannot be
///   placed (beat times are reconstructed backwards from the receipt time) and are dropped, and
///   the kept ones are marked as preceded by a gap. So is the first RR after
///   ``connectionStarted()``, after a cut RR list, and after notifications without RR long
///   enough that two beats should have been reported.
/// - Energy Expended becomes `activeEnergyBurned` interval records from the previous reading to
///   this one (``EnergyExpendedStep``). The baseline survives reconnects — the strap's counter
///   keeps counting while the link is down, so the first reading after a reconnect covers the
///   outage, as `live` does.
///
/// - Gap-free RR intervals are collected until they span ``sdnnWindow`` (60 s), then one
///   `heartRateVariabilitySDNN` record (ms) spans those beats; any gap starts a new window. The
///   standard deviation is kept as a running (Welford) sum, so no interval is stored.
///
/// - A truncated payload's heart-rate record and an energy record ending at a saturated
///   reading (0xFFFF) carry flags the store writes as `live`'s metadata keys
///   (``HealthModel/Metadata/payloadTruncatedKey``, ``HealthModel/Metadata/energySaturatedKey``).
///
/// Not carried on this path (records are fixed-size): RR intervals beyond the newest
/// ``SampleRecord/maxRR`` of one notification (possible only with a raised MTU): the kept ones
/// are then marked as preceded by a gap, where `live` keeps them all.
///
/// A value type owned by the source's producer thread.
public struct HeartRateRecordMapper: Sendable {
    /// The slots records are written with.
    public struct Slots: Sendable, Equatable {
        /// heartRate.
        public var heartRate: UInt16
        /// activeEnergyBurned.
        public var energy: UInt16
        /// heartRateVariabilitySDNN.
        public var sdnn: UInt16
        /// The source.
        public var source: UInt16
        /// The strap (``SlotTable/noDevice`` for none).
        public var device: UInt16

        /// Registers the two types and `source`/`device` in `table`.
        public init(table: SlotTable, source: Source, device: Device?) throws(IngestError) {
            heartRate = try table.slot(for: .heartRate)
            energy = try table.slot(for: .activeEnergyBurned)
            sdnn = try table.slot(for: .heartRateVariabilitySDNN)
            self.source = try table.slot(for: source)
            self.device = try table.slot(for: device)
        }
    }

    /// The slots in use (set again when a reconnect learns a new device record).
    public var slots: Slots
    /// The body sensor location stored with every heart-rate record (nil: not known).
    public var sensorLocation: HeartRateSensorLocation?
    /// Notifications that made no heart-rate record (0 bpm).
    public private(set) var skipped = 0
    /// Energy readings that went down (the strap's counter was reset).
    public private(set) var energyResets = 0
    /// Seconds of gap-free RR intervals one SDNN record summarises (nil: no SDNN records).
    public var sdnnWindow: Double? = 60

    private var gapPending = true
    private var lastRRAt: Double?
    private var lastEnergy: (kJ: UInt16, at: Double)?
    // The SDNN window: start time, 1/1024 s ticks covered, and Welford's running mean and sum
    // of squared deviations of the intervals in ms.
    private var windowStart: Double?
    private var windowLast = -Double.infinity
    private var windowTicks = 0
    private var windowCount = 0
    private var windowMean = 0.0
    private var windowM2 = 0.0

    /// A mapper writing with `slots`.
    public init(slots: Slots, sensorLocation: HeartRateSensorLocation? = nil) {
        self.slots = slots
        self.sensorLocation = sensorLocation
    }

    /// Call on every (re)connection: the next RR is preceded by a gap (beats were missed);
    /// energy continues from the last reading.
    public mutating func connectionStarted() {
        gapPending = true
        lastRRAt = nil
        windowStart = nil
    }

    /// Adds `r`'s RR intervals to the SDNN window; returns the SDNN record when it completes.
    private mutating func collectSDNN(_ r: SampleRecord, at t: Double) -> SampleRecord? {
        guard let span = sdnnWindow else { return nil }
        var ticks = 0
        withUnsafeBytes(of: r.rr) { raw in
            for i in 0..<Int(r.rrCount) { ticks += Int(raw.load(fromByteOffset: i * 2, as: UInt16.self)) }
        }
        // A gap, or a clock stepped backwards since the last beats (the window would end before
        // it starts), begins a new window.
        if r.flags.contains(.rrPrecededByGap) || windowStart == nil || t < windowLast {
            windowTicks = 0; windowCount = 0; windowMean = 0; windowM2 = 0
            windowStart = t - Double(ticks) / 1024
        }
        windowLast = t
        withUnsafeBytes(of: r.rr) { raw in
            for i in 0..<Int(r.rrCount) {
                let ms = Double(raw.load(fromByteOffset: i * 2, as: UInt16.self)) * 1000 / 1024
                windowCount += 1
                let delta = ms - windowMean
                windowMean += delta / Double(windowCount)
                windowM2 += delta * (ms - windowMean)
            }
        }
        windowTicks += ticks
        guard Double(windowTicks) / 1024 >= span, windowCount >= 2, let start = windowStart else { return nil }
        let sd = (windowM2 / Double(windowCount - 1)).squareRoot()
        windowStart = nil
        return SampleRecord(typeSlot: slots.sdnn, value: sd, start: start, end: t, sourceSlot: slots.source, deviceSlot: slots.device)
    }

    /// Maps notification `m` received at `t` (Unix seconds), handing each record to `emit`: the
    /// heart-rate record (unless 0 bpm), then an energy record when energy was spent, then an
    /// SDNN record when a window completed. Returns whether a heart-rate record was emitted.
    @discardableResult
    public mutating func map(_ m: HeartRateMeasurement, at t: Double, emit: (SampleRecord) -> Void) -> Bool {
        let bpm = m.beatsPerMinute
        var flags: SampleRecord.Flags = []
        switch m.sensorContact {
        case .notSupported: break
        case .notDetected: flags.insert(.contactSupported)
        case .detected: flags.formUnion([.contactSupported, .contactDetected])
        }
        if m.truncated { flags.insert(.payloadTruncated) }
        var r = SampleRecord(typeSlot: slots.heartRate, value: Double(bpm), start: t, end: t,
                             sourceSlot: slots.source, deviceSlot: slots.device, flags: flags)
        r.heartRateSensorLocation = sensorLocation

        let rr = m.rrIntervals
        if !rr.isEmpty {
            // Only the intervals after the last invalid one can be placed.
            var first = rr.startIndex
            var gap = gapPending
            for i in rr.indices where rr[i] == 0 || rr[i] == 0xFFFF {
                first = rr.index(after: i)
                gap = true
            }
            if first < rr.endIndex {
                if bpm == 0 {
                    gapPending = true   // no sample to carry them
                } else {
                    // More than fit inline (only with a raised MTU): keep the newest — the ones
                    // that can be placed back from the receipt time — and mark the gap before them.
                    if rr.distance(from: first, to: rr.endIndex) > SampleRecord.maxRR {
                        first = rr.index(rr.endIndex, offsetBy: -SampleRecord.maxRR)
                        gap = true
                    }
                    for i in first..<rr.endIndex { r.appendRR(rr[i]) }
                    if gap { r.flags.insert(.rrPrecededByGap) }
                    gapPending = false
                }
            } else {
                gapPending = true
            }
            lastRRAt = t
        } else if bpm > 0, let since = lastRRAt, (t - since) * Double(bpm) / 60 >= 2 {
            gapPending = true
        }
        switch m.malformation {
        case .oddTrailingByte?, .rrOverflow?: gapPending = true
        default: break
        }

        if bpm > 0 { emit(r) } else { skipped += 1 }
        let sdnn = r.rrCount > 0 && bpm > 0 ? collectSDNN(r, at: t) : nil

        if let kj = m.energyExpendedKJ {
            if let last = lastEnergy {
                let step = EnergyExpendedStep(from: last.kJ, to: kj)
                if step.wasReset { energyResets += 1 }
                if step.kilojoules > 0 {
                    // A clock stepped backwards (NTP after a Pi booted without an RTC) would make
                    // the interval end before it starts: it becomes zero-length at the new time.
                    emit(SampleRecord(typeSlot: slots.energy, value: Double(step.kilojoules), start: min(last.at, t), end: t,
                                      sourceSlot: slots.source, deviceSlot: slots.device,
                                      flags: kj == 0xFFFF ? .energySaturated : []))
                }
            }
            lastEnergy = (kj, t)
        }
        if let sdnn { emit(sdnn) }
        return bpm > 0
    }
}
