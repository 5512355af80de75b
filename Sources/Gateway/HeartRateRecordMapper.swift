import HealthModel
import HeartRateProfile
import HeartRateVariability
import Ingest

/// Turns one strap's decoded Heart Rate Measurements into ingest records, without allocating:
/// the one notification → sample mapping of every command (`run`, `live`, `demo`, `replay`):
///
/// - bpm > 0 (within heart rate's plausible range, 1–500; others are counted in
///   ``Counters/implausibleSkipped``) becomes one `heartRate` record at the receipt time, with sensor contact, the body
///   sensor location and its RR intervals; bpm 0 (no valid reading) is skipped, and its RR
///   intervals, having no sample to ride on, make the next RR "preceded by a gap".
/// - RR values 0 and 0xFFFF are not intervals; the ones before the last such value cannot be
///   placed (beat times are reconstructed backwards from the receipt time) and are dropped, and
///   the kept ones are marked as preceded by a gap. So is the first RR after
///   ``connectionStarted()``, after a cut RR list, and after notifications without RR long
///   enough that two beats should have been reported.
/// - Energy Expended becomes `activeEnergyBurned` interval records from the previous reading to
///   this one (``EnergyExpendedStep``): the delta when it grew, the new value when it went down
///   (the strap was reset), a lower bound tagged saturated when it reached 0xFFFF, then nothing
///   while it stays there (``energyNeedsReset``). The baseline survives reconnects — the strap's
///   counter keeps counting while the link is down, so the first reading after a reconnect
///   covers the outage (``connectionStarted(energyContinues:)``).
///
/// - Gap-free RR intervals are collected until they span ``sdnnWindow`` (60 s); then the
///   window's artefacts (ectopic, missed, extra and long/short beats) are corrected as
///   `healthgate hrv` corrects them (``HeartRateVariability/BeatWindow``) and one
///   `heartRateVariabilitySDNN` and one `heartRateVariabilityRMSSD` record (ms) span those beats,
///   with `hrvIntervals`/`hrvCorrected` metadata when beats were corrected; a window with more
///   than ``hrvMaxArtefacts`` of its intervals corrected gives no value and is counted
///   (``Counters/hrvWindowsRefused``). Any gap starts a new window. Nothing is allocated per
///   window once its buffer has grown to a minute of beats. A record's value is kept to 1 µs
///   (a thousandth of the 1/1024 s tick its beats are measured in) and its start (the latest
///   beats' receipt time less the window's RR sum) to 1 ms: ``storedHRV(_:)`` and
///   ``storedWindowStart(_:end:)``. Rounded, both are small integers at a decimal scale that the
///   store's series encode in two or three bytes instead of eight (docs/store.md, "Measured size").
///
/// - A truncated payload's heart-rate record and an energy record ending at a saturated
///   reading (0xFFFF) carry flags the store writes as `live`'s metadata keys
///   (``HealthModel/Metadata/payloadTruncatedKey``, ``HealthModel/Metadata/energySaturatedKey``).
///
/// - Nothing a strap sends is cut: a notification with more placeable RR intervals than fit in
///   a record (``SampleRecord/maxRR``, possible only with a raised MTU) gives its heart-rate
///   record an attachment with all of them (the pipeline's side channel; this rare path
///   allocates), and given the payload, RR beyond what the decoder keeps (``RRTicks/capacity``)
///   are read from it.
///
/// A value type owned by the source's producer thread.
package struct HeartRateRecordMapper: Sendable {
    /// The slots records are written with.
    package struct Slots: Sendable, Equatable {
        /// heartRate.
        package var heartRate: UInt16
        /// activeEnergyBurned.
        package var energy: UInt16
        /// heartRateVariabilitySDNN.
        package var sdnn: UInt16
        /// heartRateVariabilityRMSSD.
        package var rmssd: UInt16
        /// The source.
        package var source: UInt16
        /// The strap (``SlotTable/noDevice`` for none).
        package var device: UInt16

        /// Registers the four types and `source`/`device` in `table`.
        package init(table: SlotTable, source: Source, device: Device?) throws(IngestError) {
            heartRate = try table.slot(for: .heartRate)
            energy = try table.slot(for: .activeEnergyBurned)
            sdnn = try table.slot(for: .heartRateVariabilitySDNN)
            rmssd = try table.slot(for: .heartRateVariabilityRMSSD)
            self.source = try table.slot(for: source)
            self.device = try table.slot(for: device)
        }
    }

    /// Heart rate's plausible range (``HealthModel/QuantityType/plausibleRange``), kept here so
    /// the check per notification is two comparisons.
    private let plausibleBPM = QuantityType.heartRate.plausibleRange ?? 0...Double.greatestFiniteMagnitude

    /// The slots in use (set again when a reconnect learns a new device record).
    package var slots: Slots
    /// The body sensor location stored with every heart-rate record (nil: not known).
    package var sensorLocation: HeartRateSensorLocation?
    /// What the mapper made, skipped or noticed, for logs and summaries.
    package struct Counters: Sendable, Hashable {
        /// Heart-rate records made.
        package var heartRateSamples = 0
        /// Energy records made.
        package var energySamples = 0
        /// Notifications with bpm 0 (no record made).
        package var zeroBPMSkipped = 0
        /// Notifications whose bpm is outside heart rate's plausible range (no record made).
        package var implausibleSkipped = 0
        /// Notifications marked truncated by the decoder (their valid prefix was used).
        package var truncated = 0
        /// RR values dropped: invalid ones (0, 0xFFFF), older ones that could not be placed, and
        /// those of 0-bpm notifications (no record to carry them).
        package var rrDiscarded = 0
        /// Heart-rate records whose RR intervals are marked as preceded by a gap.
        package var rrGaps = 0
        /// Energy Expended went down (the strap's counter was reset).
        package var energyResets = 0
        /// Energy readings at 0xFFFF.
        package var energySaturated = 0
        /// HRV windows that gave SDNN and RMSSD records.
        package var hrvWindows = 0
        /// HRV windows refused: more than ``HeartRateRecordMapper/hrvMaxArtefacts`` of their
        /// intervals were artefacts (no records made).
        package var hrvWindowsRefused = 0
        /// Beats corrected in the HRV windows (stored ones and refused ones).
        package var hrvBeatsCorrected = 0
        /// Nothing counted yet.
        package init() {}
    }

    /// The counters so far.
    package private(set) var counters = Counters()
    /// Notifications that made no heart-rate record (0 bpm).
    package var skipped: Int { counters.zeroBPMSkipped }
    /// Energy readings that went down (the strap's counter was reset).
    package var energyResets: Int { counters.energyResets }
    /// True once Energy Expended sits at 0xFFFF: write ``HeartRateProfile/HeartRateControlPoint/resetEnergyExpended``.
    package private(set) var energyNeedsReset = false
    /// Seconds of gap-free RR intervals one SDNN (and RMSSD) record summarises (nil: no HRV records).
    package var sdnnWindow: Double? = 60
    /// The largest share of a window's intervals that may be corrected (0…1) for it to give
    /// HRV records: `healthgate hrv`'s default, 10 %.
    package var hrvMaxArtefacts = 0.10

    private var gapPending = true
    private var lastRRAt: Double?
    private var lastEnergy: (kJ: UInt16, at: Double)?
    /// An HRV window that gave no value: more than ``hrvMaxArtefacts`` of its intervals were
    /// artefacts.
    package struct RefusedWindow: Sendable, Equatable {
        /// Unix times of its first beat and of the notification that completed it.
        package var start: Double, end: Double
        /// Its RR intervals, and the beats correction found to be artefacts.
        package var intervals: Int, corrected: Int
    }
    /// The latest refused HRV window (``Counters/hrvWindowsRefused`` counts them all).
    package private(set) var lastRefusedWindow: RefusedWindow?

    // The HRV window: start time, time of its latest beats, and its beats.
    private var windowStart: Double?
    private var windowLast = -Double.infinity
    private var window = BeatWindow()

    /// A mapper writing with `slots`.
    package init(slots: Slots, sensorLocation: HeartRateSensorLocation? = nil) {
        self.slots = slots
        self.sensorLocation = sensorLocation
    }

    /// Call on every (re)connection: the next RR is preceded by a gap (beats were missed). With
    /// `energyContinues` (the default) energy continues from the last reading — the strap's
    /// counter is cumulative and keeps counting while the link is down, so the first reading
    /// after a reconnect yields one record spanning the outage (a lower value still reads as a
    /// reset); without it the next reading is a new baseline.
    package mutating func connectionStarted(energyContinues: Bool = true) {
        gapPending = true
        lastRRAt = nil
        windowStart = nil
        if !energyContinues { lastEnergy = nil }
    }

    /// The wall clock stepped by `seconds` (``Platform/ClockSteps``) since the last reading: the
    /// times kept from earlier readings move with it, so the next energy interval lasts what
    /// really passed (not a year, nor less than nothing) and the SDNN window and RR gap checks
    /// carry on across the step.
    package mutating func clockStepped(by seconds: Double) {
        if let last = lastEnergy { lastEnergy = (last.kJ, last.at + seconds) }
        lastRRAt = lastRRAt.map { $0 + seconds }
        windowStart = windowStart.map { $0 + seconds }
        if windowLast.isFinite { windowLast += seconds }
    }

    /// Adds `ticks` (one sample's RR intervals) to the HRV window; when it completes, hands its
    /// SDNN and RMSSD records to `emit` (with metadata when beats were corrected: the rare path
    /// that allocates).
    private mutating func collectHRV<C: Collection<UInt16>>(_ ticks: C, gap: Bool, at t: Double,
                                                           emit: (SampleRecord, SampleAttachment?) -> Void) {
        guard let span = sdnnWindow else { return }
        var sum = 0
        for x in ticks { sum += Int(x) }
        // A gap, or a clock stepped backwards since the last beats (the window would end before
        // it starts), begins a new window.
        if gap || windowStart == nil || t < windowLast {
            window.reset()
            windowStart = t - Double(sum) / 1024
        }
        windowLast = t
        for x in ticks { window.append(x) }
        guard Double(window.ticks) / 1024 >= span, window.intervals >= 2, let start = windowStart else { return }
        windowStart = nil
        switch window.finish(maxArtefacts: hrvMaxArtefacts) {
        case .measured(let m, let intervals, let corrected):
            counters.hrvWindows += 1
            counters.hrvBeatsCorrected += corrected
            let extra = corrected == 0 ? nil : SampleAttachment(metadata: Metadata(user: [
                HeartRateRecordMapper.hrvIntervalsKey: .number(Double(intervals)), HeartRateRecordMapper.hrvCorrectedKey: .number(Double(corrected))]))
            let from = Self.storedWindowStart(start, end: t)
            emit(SampleRecord(typeSlot: slots.sdnn, value: Self.storedHRV(m.sdnn), start: from, end: t,
                              sourceSlot: slots.source, deviceSlot: slots.device), extra)
            emit(SampleRecord(typeSlot: slots.rmssd, value: Self.storedHRV(m.rmssd), start: from, end: t,
                              sourceSlot: slots.source, deviceSlot: slots.device), extra)
        case .tooManyArtefacts(let intervals, let corrected):
            counters.hrvWindowsRefused += 1
            counters.hrvBeatsCorrected += corrected
            lastRefusedWindow = RefusedWindow(start: start, end: t, intervals: intervals, corrected: corrected)
        case .tooFewBeats:
            break
        }
    }

    /// An HRV value (ms) as a live record keeps it: to the nearest 1 µs (0.001 ms), a thousandth
    /// of the RR tick (≈ 0.977 ms) its beats are measured in.
    package static func storedHRV(_ milliseconds: Double) -> Double {
        (milliseconds * 1000).rounded() / 1000
    }

    /// An HRV window's start (seconds since 1970) as a live record keeps it: to the nearest
    /// millisecond, never after `end`. The start is estimated (receipt time less the RR sum),
    /// which BLE's connection interval already blurs by tens of milliseconds.
    package static func storedWindowStart(_ start: Double, end: Double) -> Double {
        min((start * 1000).rounded() / 1000, end)
    }

    /// Metadata key of a live HRV record: the window's RR intervals before correction (set with
    /// ``hrvCorrectedKey`` when beats were corrected; `healthgate hrv --save` uses the same keys).
    package static let hrvIntervalsKey = Metadata.hrvIntervalsKey
    /// Metadata key of a live HRV record: the beats corrected in its window (absent: none).
    package static let hrvCorrectedKey = Metadata.hrvCorrectedKey

    /// Where the placeable RR intervals of `rr` start: after the last invalid value (0 or
    /// 0xFFFF), and whether there was one.
    private static func placeable<C: BidirectionalCollection<UInt16>>(_ rr: C) -> (first: C.Index, sawInvalid: Bool) {
        var first = rr.startIndex
        var invalid = false
        var i = rr.startIndex
        while i != rr.endIndex {
            if rr[i] == 0 || rr[i] == 0xFFFF { first = rr.index(after: i); invalid = true }
            i = rr.index(after: i)
        }
        return (first, invalid)
    }

    /// Places a notification's RR intervals `rr` on its heart-rate record `r`, after dropping
    /// those before the last invalid one (0 or 0xFFFF, counted as discarded): inline when they fit,
    /// else all of them returned to ride in an attachment. With 0 bpm there is no record to carry
    /// them: they are discarded. Sets or clears the gap that the next record's RR follow.
    @inline(__always)
    private mutating func placeRR<C: RandomAccessCollection<UInt16>>(_ rr: C, bpm: UInt16, on r: inout SampleRecord) -> [UInt16]? {
        var gap = gapPending
        let (first, invalid) = Self.placeable(rr)
        if invalid { gap = true }
        counters.rrDiscarded += rr.distance(from: rr.startIndex, to: first)
        let kept = rr.distance(from: first, to: rr.endIndex)
        guard kept > 0, bpm != 0 else {
            counters.rrDiscarded += kept
            gapPending = true   // none left, or no sample to carry them
            return nil
        }
        var spilled: [UInt16]?
        if kept > SampleRecord.maxRR {
            spilled = Array(rr[first...])   // more than fit inline: all of them ride in an attachment
        } else {
            var i = first
            while i != rr.endIndex { r.appendRR(rr[i]); i = rr.index(after: i) }
        }
        if gap { r.flags = SampleRecord.Flags(rawValue: r.flags.rawValue | Bits.rrPrecededByGap) }
        gapPending = false
        return spilled
    }

    /// ``SampleRecord/Flags`` as bits. The flags are `package` in `Ingest`, and Swift's
    /// cross-module optimisation serialises only `public` declarations, so the OptionSet algebra
    /// on them from this module (`insert`, `contains`, an array literal) ran as unspecialised
    /// stdlib generics: 3 heap allocations and about 3 µs per notification on the producer
    /// (`healthgate-bench --only hot`, docs/performance.md). Integer operations on the raw value
    /// cost nothing of the kind.
    private enum Bits {
        static let contactSupported = SampleRecord.Flags.contactSupported.rawValue
        static let contactDetected = SampleRecord.Flags.contactDetected.rawValue
        static let rrPrecededByGap = SampleRecord.Flags.rrPrecededByGap.rawValue
        static let payloadTruncated = SampleRecord.Flags.payloadTruncated.rawValue
        static let energySaturated = SampleRecord.Flags.energySaturated.rawValue
    }

    /// A receipt time rounded to the millisecond (unchanged when it has no finer digits, or is
    /// not finite): `(t × 1000).rounded() / 1000`, the form the series codec stores exactly at
    /// its millisecond scale (docs/store.md, "The encoding").
    @inlinable
    package static func receiptTime(_ t: Double) -> Double {
        let ms = (t * 1000).rounded()
        return ms.isFinite ? ms / 1000 : t
    }

    /// Maps notification `m` received at `t` (Unix seconds), handing each record to `emit`: the
    /// heart-rate record (unless 0 bpm), then an energy record when energy was spent, then SDNN
    /// and RMSSD records when an HRV window completed. Returns whether a heart-rate record was emitted.
    ///
    /// The heart-rate record's time is `t` rounded to the millisecond (``receiptTime(_:)``): BLE
    /// connection intervals are at least 7.5 ms, so nothing is lost, and the store's series
    /// encode such times in 2 bytes. Energy intervals use the same rounded time; beat times
    /// (SDNN windows, rebuilt backwards from the receipt) keep `t`.
    ///
    /// `emit`'s attachment is nil except for a heart-rate record with more RR intervals than fit
    /// inline: then it carries all of them (push the record with it). `payload`, the
    /// notification's bytes, lets the mapper recover RR intervals beyond the decoder's
    /// ``RRTicks/capacity``; without it such a list is cut to the decoded ones, and the next RR
    /// is marked as preceded by a gap.
    @discardableResult
    package mutating func map(_ m: HeartRateMeasurement, at t: Double, payload: UnsafeRawBufferPointer? = nil,
                             emit: (SampleRecord, SampleAttachment?) -> Void) -> Bool {
        let bpm = m.beatsPerMinute
        var flags: UInt16 = 0
        switch m.sensorContact {
        case .notSupported: break
        case .notDetected: flags |= Bits.contactSupported
        case .detected: flags |= Bits.contactSupported | Bits.contactDetected
        }
        var overflowed = false
        if case .rrOverflow? = m.malformation { overflowed = true }
        // The rare path (a raised MTU): every interval, from the payload when the decoder cut them.
        let all: [UInt16]? = overflowed ? payload.map { HeartRateMeasurement.allRRIntervals(in: $0) } : nil
        // Recovered from the payload, an overflowing RR list is whole: nothing was truncated.
        if m.truncated && all == nil {
            flags |= Bits.payloadTruncated
            counters.truncated += 1
        }
        let receipt = Self.receiptTime(t)
        var r = SampleRecord(typeSlot: slots.heartRate, value: Double(bpm), start: receipt, end: receipt,
                             sourceSlot: slots.source, deviceSlot: slots.device, flags: SampleRecord.Flags(rawValue: flags))
        r.heartRateSensorLocation = sensorLocation

        var spilled: [UInt16]?
        var hadRR = false
        if let all, !all.isEmpty {
            hadRR = true
            spilled = placeRR(all, bpm: bpm, on: &r)
        } else if !m.rrIntervals.isEmpty {
            hadRR = true
            spilled = placeRR(m.rrIntervals, bpm: bpm, on: &r)
        } else if bpm > 0, let since = lastRRAt, (t - since) * Double(bpm) / 60 >= 2 {
            gapPending = true
        }
        if hadRR { lastRRAt = t }
        switch m.malformation {
        case .oddTrailingByte?: gapPending = true
        case .rrOverflow? where all == nil: gapPending = true   // intervals were cut: beats are missing
        default: break
        }

        var emitted = false
        if bpm == 0 {
            counters.zeroBPMSkipped += 1
        } else if !plausibleBPM.contains(Double(bpm)) {
            counters.implausibleSkipped += 1   // a 16-bit value no heart beats at: counted, not stored
        } else {
            if (r.flags.rawValue & Bits.rrPrecededByGap != 0) { counters.rrGaps += 1 }
            counters.heartRateSamples += 1
            emit(r, spilled.map { SampleAttachment(rrIntervals: $0) })
            emitted = true
        }

        if let kj = m.energyExpendedKJ {
            if kj == 0xFFFF { counters.energySaturated += 1 }
            if let last = lastEnergy {
                let step = EnergyExpendedStep(from: last.kJ, to: kj)
                if step.wasReset { counters.energyResets += 1 }
                if step.kilojoules > 0 {
                    counters.energySamples += 1
                    // A clock stepped backwards (NTP after a Pi booted without an RTC) would make
                    // the interval end before it starts: it becomes zero-length at the new time.
                    emit(SampleRecord(typeSlot: slots.energy, value: Double(step.kilojoules), start: min(last.at, receipt), end: receipt,
                                      sourceSlot: slots.source, deviceSlot: slots.device,
                                      flags: SampleRecord.Flags(rawValue: kj == 0xFFFF ? Bits.energySaturated : 0)), nil)
                }
            }
            lastEnergy = (kj, receipt)
            energyNeedsReset = kj == 0xFFFF
        }
        // The HRV window takes the beats (its records follow the energy record).
        if bpm > 0 {
            let gap = r.flags.rawValue & Bits.rrPrecededByGap != 0
            if let spilled {
                collectHRV(spilled, gap: gap, at: t, emit: emit)
            } else if r.rrCount > 0 {
                let rr = r.rr, n = Int(r.rrCount)
                withUnsafeBytes(of: rr) { raw in collectHRV(raw.bindMemory(to: UInt16.self).prefix(n), gap: gap, at: t, emit: emit) }
            }
        }
        return emitted
    }
}
