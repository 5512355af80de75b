import Foundation
import HealthModel
import HeartRateProfile
import HeartRateVariability
import Simulators
import Testing
@testable import Gateway
@testable import Ingest

/// The notification → sample rules of the one strap mapper (``HeartRateRecordMapper``), case by
/// case: heart rate with contact and location, RR with gap marks, energy deltas, saturation,
/// reconnects, SDNN windows. (These were the rules of `live`'s former `HeartRateSampleBuilder`;
/// the assertions are the same, on records.)
struct MappedSample {
    var type: QuantityType
    var value: Double
    var start: Date
    var end: Date
    var device: Device?
    var source: Source?
    var rrIntervals: RRIntervals?
    var sensorContact: SensorContact?
    var location: HeartRateSensorLocation?
    var user: [String: MetadataValue]

    init(_ r: SampleRecord, _ extra: SampleAttachment?, table: SlotTable) {
        type = table.type(r.typeSlot)!
        value = r.value
        start = Date(timeIntervalSince1970: r.start)
        end = Date(timeIntervalSince1970: r.end)
        device = r.deviceSlot == SlotTable.noDevice ? nil : table.device(r.deviceSlot)
        source = table.source(r.sourceSlot)
        let ticks = extra?.rrIntervals ?? (r.rrCount > 0 ? r.rrTicks : nil)
        rrIntervals = ticks.map { RRIntervals(ticks: $0, precededByGap: r.flags.contains(.rrPrecededByGap)) }
        sensorContact = type != .heartRate ? nil : !r.flags.contains(.contactSupported) ? .notSupported
            : r.flags.contains(.contactDetected) ? .detected : .notDetected
        location = r.heartRateSensorLocation
        user = extra?.metadata.user ?? [:]
        if r.flags.contains(.payloadTruncated) { user[Metadata.payloadTruncatedKey] = .number(1) }
        if r.flags.contains(.energySaturated) { user[Metadata.energySaturatedKey] = .number(1) }
    }
}

/// What one notification produced.
struct MappedOutput {
    var heartRate: MappedSample?
    var energy: MappedSample?
    var sdnn: MappedSample?
    var rmssd: MappedSample?
    var samples: [MappedSample] { [heartRate, energy, sdnn, rmssd].compactMap { $0 } }
}

/// A mapper with its slot table, mapping to ``MappedOutput``s.
struct MapperRig {
    let table = SlotTable()
    var mapper: HeartRateRecordMapper

    init(device: Device?, sensorLocation: HeartRateSensorLocation?, sdnnWindow: Double? = 60) throws {
        mapper = HeartRateRecordMapper(slots: try HeartRateRecordMapper.Slots(table: table, source: StrapSource.source, device: device),
                                       sensorLocation: sensorLocation)
        mapper.sdnnWindow = sdnnWindow
    }

    mutating func add(_ m: HeartRateMeasurement, receivedAt: Date) -> MappedOutput {
        var out = MappedOutput()
        let table = self.table
        mapper.map(m, at: receivedAt.timeIntervalSince1970) { r, extra in
            let s = MappedSample(r, extra, table: table)
            switch s.type {
            case .heartRate: out.heartRate = s
            case .activeEnergyBurned: out.energy = s
            case .heartRateVariabilityRMSSD: out.rmssd = s
            default: out.sdnn = s
            }
        }
        return out
    }
}

@Suite struct SampleMappingTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let device = Device(name: "Polar H7", manufacturer: "Polar Electro Oy", localIdentifier: "ble-0123456789abcdef")

    func builder() throws -> MapperRig {
        var b = try MapperRig(device: Self.device, sensorLocation: .chest)
        b.mapper.connectionStarted()
        return b
    }

    func add(_ b: inout MapperRig, _ hex: String, at seconds: Double) throws -> MappedOutput {
        b.add(try HeartRateMeasurement.decode(bytes: try #require(hexBytes(hex))), receivedAt: Self.t0.addingTimeInterval(seconds))
    }

    func hexBytes(_ s: String) -> [UInt8]? {
        var out: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex {
            let j = s.index(i, offsetBy: 2)
            guard let b = UInt8(s[i..<j], radix: 16) else { return nil }
            out.append(b)
            i = j
        }
        return out
    }

    @Test func notificationBecomesAStampedHeartRateSample() throws {
        var b = try builder()
        let out = try add(&b, "164e1b031203", at: 0)
        let s = try #require(out.heartRate)
        #expect(s.type == .heartRate && s.value == 78)
        #expect(s.start == Self.t0 && s.end == Self.t0)
        #expect(s.device == Self.device && s.source == StrapSource.source)
        #expect(s.location == .chest && s.sensorContact == .detected)
        #expect(s.rrIntervals == RRIntervals(ticks: [795, 786], precededByGap: true))  // first after connect
        let next = try #require(try add(&b, "164f0203", at: 1).heartRate)
        #expect(next.rrIntervals == RRIntervals(ticks: [770], precededByGap: false))
        #expect(out.energy == nil && b.mapper.counters.heartRateSamples == 2)
    }

    @Test func zeroBPMMakesNoSample() throws {
        var b = try builder()
        #expect(try add(&b, "1000ffff", at: 0).heartRate == nil)
        #expect(try add(&b, "0000", at: 1).samples.isEmpty)
        #expect(b.mapper.counters.zeroBPMSkipped == 2)
        // RR after a no-reading frame is marked as following a gap.
        #expect(try add(&b, "10480004", at: 2).heartRate?.rrIntervals?.precededByGap == true)
    }

    @Test("a 16-bit heart rate outside the plausible range (600 bpm) makes no sample and is counted, not thrown")
    func implausibleBPMMakesNoSample() throws {
        var b = try builder()
        #expect(try add(&b, "015802", at: 0).heartRate == nil)   // 0x0258 = 600
        #expect(b.mapper.counters.implausibleSkipped == 1)
        #expect(try add(&b, "01f401", at: 1).heartRate?.value == 500)   // the range's end
        #expect(try add(&b, "004e", at: 2).heartRate != nil && b.mapper.counters.heartRateSamples == 2)
    }

    @Test func invalidRRKeepsOnlyThePlaceableSuffix() throws {
        var b = try builder()
        _ = try add(&b, "10480004", at: 0)
        let s = try #require(try add(&b, "1048f401ffff00040000f801", at: 1).heartRate)
        #expect(s.rrIntervals == RRIntervals(ticks: [504], precededByGap: true))
        #expect(b.mapper.counters.rrDiscarded == 4)  // 500 (unplaceable), 0xFFFF, 1024 (unplaceable), 0
        let all = try #require(try add(&b, "1048ffff", at: 2).heartRate)
        #expect(all.rrIntervals == nil)
        #expect(try add(&b, "10480004", at: 3).heartRate?.rrIntervals?.precededByGap == true)
    }

    @Test func cutRRListMarksTheNextAsAfterAGap() throws {
        var b = try builder()
        _ = try add(&b, "10480004", at: 0)
        let cut = try #require(try add(&b, "1048000401", at: 1).heartRate)
        #expect(cut.rrIntervals == RRIntervals(ticks: [1024], precededByGap: false))
        #expect(cut.user[Metadata.payloadTruncatedKey] == .number(1))
        #expect(try add(&b, "10480004", at: 2).heartRate?.rrIntervals?.precededByGap == true)
        #expect(b.mapper.counters.truncated == 1)
    }

    @Test func missingRRForSeveralBeatsMarksAGap() throws {
        var b = try builder()
        _ = try add(&b, "10480004", at: 0)
        _ = try add(&b, "0048", at: 1)  // 1 s at 72 bpm: 1.2 beats due, one may still be pending
        #expect(try add(&b, "10480004", at: 1.5).heartRate?.rrIntervals?.precededByGap == false)
        _ = try add(&b, "0048", at: 2.5)
        _ = try add(&b, "0048", at: 3.5)  // 2 s since RR at 72 bpm: 2.4 beats went unreported
        #expect(try add(&b, "10480004", at: 4).heartRate?.rrIntervals?.precededByGap == true)
    }

    @Test func energyBecomesIntervalDeltas() throws {
        var b = try builder()
        #expect(try add(&b, "08486400", at: 0).energy == nil)  // baseline 100
        let e = try #require(try add(&b, "08486e00", at: 10).energy)  // 110
        #expect(e.type == .activeEnergyBurned && e.value == 10)
        #expect(e.start == Self.t0 && e.end == Self.t0.addingTimeInterval(10))
        #expect(try add(&b, "0048", at: 15).energy == nil)  // usually absent: no value, no sample
        #expect(try add(&b, "08486e00", at: 20).energy == nil)  // no change
        let reset = try #require(try add(&b, "08480500", at: 30).energy)  // reset, then 5 kJ
        #expect(reset.value == 5 && reset.start == Self.t0.addingTimeInterval(20))
        #expect(b.mapper.counters.energyResets == 1 && b.mapper.counters.energySamples == 2)
    }

    @Test func saturationIsALowerBoundThenSilence() throws {
        var b = try builder()
        _ = try add(&b, "0848f0ff", at: 0)  // 65520
        let last = try #require(try add(&b, "0848ffff", at: 10).energy)
        #expect(last.value == 15)
        #expect(last.user[Metadata.energySaturatedKey] == .number(1))
        #expect(b.mapper.energyNeedsReset)
        #expect(try add(&b, "0848ffff", at: 20).energy == nil)
        let after = try #require(try add(&b, "08480300", at: 30).energy)  // the strap was reset
        #expect(after.value == 3 && !b.mapper.energyNeedsReset)
        #expect(b.mapper.counters.energySaturated == 2)
    }

    @Test func reconnectStartsANewEnergyBaselineAndAnRRGap() throws {
        var b = try builder()
        _ = try add(&b, "184864000004", at: 0)
        b.mapper.connectionStarted(energyContinues: false)
        let out = try add(&b, "1848c8000004", at: 60)
        #expect(out.energy == nil)  // what happened while disconnected is unknown
        #expect(out.heartRate?.rrIntervals?.precededByGap == true)
    }
}

/// Optional SDNN and RMSSD over gap-free RR windows, artefacts corrected.
@Suite struct SDNNTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func payload(_ rr: [UInt16]) -> HeartRateMeasurement {
        HeartRateMeasurement(beatsPerMinute: 60, rrIntervals: RRTicks(rr))
    }

    @Test func windowOfGapFreeBeatsBecomesOneSDNNSample() throws {
        var b = try MapperRig(device: nil, sensorLocation: nil, sdnnWindow: 10)
        b.mapper.connectionStarted()
        // Alternating 1000 and 1048 ticks; 10 notifications of 1 RR each ≈ 10 s.
        let ticks: [UInt16] = (0..<12).map { $0.isMultiple(of: 2) ? 1000 : 1048 }
        var made: [MappedSample] = [], rmssdMade: [MappedSample] = []
        var at = 0.0
        for t in ticks {
            at += Double(t) / 1024
            let out = b.add(payload([t]), receivedAt: Self.t0.addingTimeInterval(at))
            if let s = out.sdnn { made.append(s) }
            if let s = out.rmssd { rmssdMade.append(s) }
        }
        let s = try #require(made.first)
        #expect(made.count == 1)
        #expect(s.type == .heartRateVariabilitySDNN)
        // The first 10 intervals (5 × 1000, 5 × 1048 ticks) span ≥ 10 s: exact sample SD in ms.
        let ms = ticks.prefix(10).map { Double($0) * 1000 / 1024 }
        let mean = ms.reduce(0, +) / 10
        let sd = (ms.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / 9).squareRoot()
        #expect(s.value == HeartRateRecordMapper.storedHRV(sd))   // kept to 1 µs
        #expect(abs(s.start.timeIntervalSince(Self.t0)) < 0.0005 + 1e-6)  // the first beat's interval began at t0 (kept to 1 ms)
        #expect(s.user.isEmpty, "nothing corrected: no metadata")
        // RMSSD over the same beats: every successive difference is 48 ticks = 46.875 ms.
        let rmssd = try #require(b.mapper.counters.hrvWindows == 1 ? rmssdMade.first : nil)
        #expect(rmssd.type == .heartRateVariabilityRMSSD && rmssd.start == s.start && rmssd.end == s.end)
        #expect(abs(rmssd.value - 46.875) < 1e-9)
    }

    /// A minute of resting beats (≈ 781 ms with a breathing rhythm), in ticks.
    static func restingTicks(_ n: Int) -> [UInt16] {
        (0..<n).map { i in
            let breathing: Double = 40 * sin(Double(i) * 2 * .pi / 4.5)
            let noise = Double((i * 7) % 11) - 5
            return UInt16(800 + breathing + noise)
        }
    }

    /// Feeds `ticks` one RR a notification, each received at its beat; returns the HRV records.
    func feed(_ b: inout MapperRig, _ ticks: [UInt16]) -> [MappedSample] {
        var made: [MappedSample] = []
        var at = 0.0
        for t in ticks {
            at += Double(t) / 1024
            let out = b.add(payload([t]), receivedAt: Self.t0.addingTimeInterval(at))
            made += [out.sdnn, out.rmssd].compactMap { $0 }
        }
        return made
    }

    @Test("a missed beat is corrected before SDNN and RMSSD are taken, as healthgate hrv corrects it, and the count is kept")
    func missedBeatIsCorrected() throws {
        var ticks = Self.restingTicks(90)
        ticks[40] += ticks.remove(at: 41)   // the strap missed a beat: one interval twice as long
        var b = try MapperRig(device: nil, sensorLocation: nil, sdnnWindow: 60)
        b.mapper.connectionStarted()
        let made = feed(&b, ticks)
        let sdnn = try #require(made.first { $0.type == .heartRateVariabilitySDNN })
        let rmssd = try #require(made.first { $0.type == .heartRateVariabilityRMSSD })
        // The window: the intervals up to the one that reached 60 s.
        var sum = 0, n = 0
        while Double(sum) / 1024 < 60 { sum += Int(ticks[n]); n += 1 }
        let beats = ticks.prefix(n).reduce(into: [Int64(0)]) { $0.append($0.last! + Int64($1)) }
        let fixed = ArtefactCorrection.correct(beats)
        #expect(fixed.corrected.missed.count == 1)
        let expected = try #require(TimeDomain(runs: [zip(fixed.beats, fixed.beats.dropFirst()).map { Double($1 - $0) * 1000 / 1024 }]))
        let raw = try #require(TimeDomain(runs: [ticks.prefix(n).map { Double($0) * 1000 / 1024 }]))
        #expect(sdnn.value == HeartRateRecordMapper.storedHRV(expected.sdnn) && rmssd.value == HeartRateRecordMapper.storedHRV(expected.rmssd),
                "live \(sdnn.value)/\(rmssd.value), hrv's correction \(expected.sdnn)/\(expected.rmssd)")
        #expect(raw.sdnn > expected.sdnn * 1.5, "the uncorrected SDNN (\(raw.sdnn)) should be far off")
        let corrected = fixed.corrected.count
        #expect(sdnn.user == [HeartRateRecordMapper.hrvIntervalsKey: .number(Double(n)), HeartRateRecordMapper.hrvCorrectedKey: .number(Double(corrected))])
        #expect(rmssd.user == sdnn.user)
        #expect(b.mapper.counters.hrvBeatsCorrected == corrected && b.mapper.counters.hrvWindowsRefused == 0)
    }

    @Test("a window with more than the allowed share of its beats corrected gives no value and is counted")
    func tooManyArtefactsRefused() throws {
        var ticks = Self.restingTicks(90)
        ticks[40] += ticks.remove(at: 41)   // one missed beat: its corrections are 2–3 % of the window's intervals
        var b = try MapperRig(device: nil, sensorLocation: nil, sdnnWindow: 60)
        b.mapper.hrvMaxArtefacts = 0.01
        b.mapper.connectionStarted()
        let made = feed(&b, ticks)
        #expect(made.isEmpty, "\(made.map(\.value))")
        #expect(b.mapper.counters.hrvWindowsRefused == 1 && b.mapper.counters.hrvWindows == 0)
        #expect(b.mapper.counters.hrvBeatsCorrected > 0)
        // A clean window after a gap gives values again.
        b.mapper.connectionStarted()
        let next = feed(&b, Self.restingTicks(90))
        #expect(next.count == 2 && b.mapper.counters.hrvWindows == 1 && next.allSatisfy { $0.user.isEmpty })
    }

    /// A minute of resting beats with eight missed ones (an interval twice as long every ninth
    /// beat): more than 10 % of the window's intervals are corrected.
    static func ticksWithMissedBeats() -> [UInt16] {
        var ticks = restingTicks(100)
        for k in stride(from: 72, through: 9, by: -9) { ticks[k] += ticks.remove(at: k + 1) }
        return ticks
    }

    @Test("with healthgate hrv's default (10 %), a minute with eight missed beats gives no value")
    func defaultLimitRefusesAnArtefactRiddenMinute() throws {
        var b = try MapperRig(device: nil, sensorLocation: nil, sdnnWindow: 60)
        b.mapper.connectionStarted()
        let made = feed(&b, Self.ticksWithMissedBeats())
        #expect(made.isEmpty, "\(made.map(\.user))")
        let refused = try #require(b.mapper.lastRefusedWindow)
        #expect(b.mapper.counters.hrvWindowsRefused == 1 && Double(refused.corrected) > 0.10 * Double(refused.intervals), "\(refused)")
    }

    @Test func aGapRestartsTheWindow() throws {
        var b = try MapperRig(device: nil, sensorLocation: nil, sdnnWindow: 3)
        b.mapper.connectionStarted()
        #expect(b.add(payload([1024, 1024]), receivedAt: Self.t0.addingTimeInterval(2)).sdnn == nil)
        b.mapper.connectionStarted()  // reconnect: beats missing
        #expect(b.add(payload([1024, 1024]), receivedAt: Self.t0.addingTimeInterval(60)).sdnn == nil)
        #expect(b.add(payload([1024]), receivedAt: Self.t0.addingTimeInterval(61)).sdnn != nil)
        b.mapper.sdnnWindow = nil
        #expect(b.add(payload([1024, 1024, 1024, 1024]), receivedAt: Self.t0.addingTimeInterval(65)).sdnn == nil)
    }
}

@Suite("Energy across a reconnect")
struct EnergyAcrossReconnectTests {
    @Test func energyContinuesKeepsTheBaselineAcrossTheOutage() throws {
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        var b = try MapperRig(device: nil, sensorLocation: nil)
        b.mapper.connectionStarted(energyContinues: true)
        _ = b.add(HeartRateMeasurement(beatsPerMinute: 70, energyExpendedKJ: 96), receivedAt: t0)
        b.mapper.connectionStarted(energyContinues: true)  // link lost and back 12 s later
        let out = b.add(HeartRateMeasurement(beatsPerMinute: 71, energyExpendedKJ: 108), receivedAt: t0.addingTimeInterval(12))
        let e = try #require(out.energy)
        #expect(e.value == 12)
        #expect(e.start == t0 && e.end == t0.addingTimeInterval(12))
        #expect(out.heartRate?.rrIntervals == nil)
    }

    @Test func withoutItTheBaselineRestarts() throws {
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        var b = try MapperRig(device: nil, sensorLocation: nil)
        _ = b.add(HeartRateMeasurement(beatsPerMinute: 70, energyExpendedKJ: 96), receivedAt: t0)
        b.mapper.connectionStarted(energyContinues: false)
        let out = b.add(HeartRateMeasurement(beatsPerMinute: 71, energyExpendedKJ: 108), receivedAt: t0.addingTimeInterval(12))
        #expect(out.energy == nil)
    }
}
