import Foundation
import HealthModel
import HeartRateProfile
import Testing

/// Notifications → heartRate and activeEnergyBurned samples, RR with gap flags.
@Suite struct SampleMappingTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let device = Device(name: "Polar H7", manufacturer: "Polar Electro Oy", localIdentifier: "ble-0123456789abcdef")

    func builder() -> HeartRateSampleBuilder {
        var b = HeartRateSampleBuilder(device: Self.device, sensorLocation: .chest)
        b.connectionStarted()
        return b
    }

    func add(_ b: inout HeartRateSampleBuilder, _ hex: String, at seconds: Double) throws -> HeartRateSampleBuilder.Output {
        try b.add(decode(hex), receivedAt: Self.t0.addingTimeInterval(seconds))
    }

    @Test func notificationBecomesAStampedHeartRateSample() throws {
        var b = builder()
        let out = try add(&b, "164e1b031203", at: 0)
        let s = try #require(out.heartRate)
        #expect(s.type == .heartRate && s.quantity == Quantity(78, .countPerMinute))
        #expect(s.startDate == Self.t0 && s.endDate == Self.t0)
        #expect(s.device == Self.device && s.source == HeartRateSampleBuilder.bleSource)
        #expect(s.metadata.heartRateSensorLocation == .chest && s.metadata.sensorContact == .detected)
        #expect(s.rrIntervals == RRIntervals(ticks: [795, 786], precededByGap: true))  // first after connect
        let next = try #require(try add(&b, "164f0203", at: 1).heartRate)
        #expect(next.rrIntervals == RRIntervals(ticks: [770], precededByGap: false))
        #expect(out.energy == nil && b.counters.heartRateSamples == 2)
    }

    @Test func zeroBPMMakesNoSample() throws {
        var b = builder()
        #expect(try add(&b, "1000ffff", at: 0).heartRate == nil)
        #expect(try add(&b, "0000", at: 1).samples.isEmpty)
        #expect(b.counters.zeroBPMSkipped == 2)
        // RR after a no-reading frame is marked as following a gap.
        #expect(try add(&b, "10480004", at: 2).heartRate?.rrIntervals?.precededByGap == true)
    }

    @Test("a 16-bit heart rate outside the plausible range (600 bpm) makes no sample and is counted, not thrown")
    func implausibleBPMMakesNoSample() throws {
        var b = builder()
        #expect(try add(&b, "015802", at: 0).heartRate == nil)   // 0x0258 = 600
        #expect(b.counters.implausibleSkipped == 1)
        #expect(try add(&b, "01f401", at: 1).heartRate?.quantity == Quantity(500, .countPerMinute))   // the range's end
        #expect(try add(&b, "004e", at: 2).heartRate != nil && b.counters.heartRateSamples == 2)
    }

    @Test func invalidRRKeepsOnlyThePlaceableSuffix() throws {
        var b = builder()
        _ = try add(&b, "10480004", at: 0)
        let s = try #require(try add(&b, "1048f401ffff00040000f801", at: 1).heartRate)
        #expect(s.rrIntervals == RRIntervals(ticks: [504], precededByGap: true))
        #expect(b.counters.rrDiscarded == 4)  // 500 (unplaceable), 0xFFFF, 1024 (unplaceable), 0
        let all = try #require(try add(&b, "1048ffff", at: 2).heartRate)
        #expect(all.rrIntervals == nil)
        #expect(try add(&b, "10480004", at: 3).heartRate?.rrIntervals?.precededByGap == true)
    }

    @Test func cutRRListMarksTheNextAsAfterAGap() throws {
        var b = builder()
        _ = try add(&b, "10480004", at: 0)
        let cut = try #require(try add(&b, "1048000401", at: 1).heartRate)
        #expect(cut.rrIntervals == RRIntervals(ticks: [1024], precededByGap: false))
        #expect(cut.metadata.user[HeartRateSampleBuilder.truncatedKey] == .number(1))
        #expect(try add(&b, "10480004", at: 2).heartRate?.rrIntervals?.precededByGap == true)
        #expect(b.counters.truncated == 1)
    }

    @Test func missingRRForSeveralBeatsMarksAGap() throws {
        var b = builder()
        _ = try add(&b, "10480004", at: 0)
        _ = try add(&b, "0048", at: 1)  // 1 s at 72 bpm: 1.2 beats due, one may still be pending
        #expect(try add(&b, "10480004", at: 1.5).heartRate?.rrIntervals?.precededByGap == false)
        _ = try add(&b, "0048", at: 2.5)
        _ = try add(&b, "0048", at: 3.5)  // 2 s since RR at 72 bpm: 2.4 beats went unreported
        #expect(try add(&b, "10480004", at: 4).heartRate?.rrIntervals?.precededByGap == true)
    }

    @Test func energyBecomesIntervalDeltas() throws {
        var b = builder()
        #expect(try add(&b, "0848 6400".replacingOccurrences(of: " ", with: ""), at: 0).energy == nil)  // baseline 100
        let e = try #require(try add(&b, "08486e00", at: 10).energy)  // 110
        #expect(e.type == .activeEnergyBurned && e.quantity == Quantity(10, .kilojoule))
        #expect(e.startDate == Self.t0 && e.endDate == Self.t0.addingTimeInterval(10))
        #expect(try add(&b, "0048", at: 15).energy == nil)  // usually absent: no value, no sample
        #expect(try add(&b, "08486e00", at: 20).energy == nil)  // no change
        let reset = try #require(try add(&b, "08480500", at: 30).energy)  // reset, then 5 kJ
        #expect(reset.quantity == Quantity(5, .kilojoule) && reset.startDate == Self.t0.addingTimeInterval(20))
        #expect(b.counters.energyResets == 1 && b.counters.energySamples == 2)
    }

    @Test func saturationIsALowerBoundThenSilence() throws {
        var b = builder()
        _ = try add(&b, "0848f0ff", at: 0)  // 65520
        let last = try #require(try add(&b, "0848ffff", at: 10).energy)
        #expect(last.quantity == Quantity(15, .kilojoule))
        #expect(last.metadata.user[HeartRateSampleBuilder.energySaturatedKey] == .number(1))
        #expect(b.energyNeedsReset)
        #expect(try add(&b, "0848ffff", at: 20).energy == nil)
        let after = try #require(try add(&b, "08480300", at: 30).energy)  // the strap was reset
        #expect(after.quantity == Quantity(3, .kilojoule) && !b.energyNeedsReset)
        #expect(b.counters.energySaturated == 2)
    }

    @Test func reconnectStartsANewEnergyBaselineAndAnRRGap() throws {
        var b = builder()
        _ = try add(&b, "18486400 0004".replacingOccurrences(of: " ", with: ""), at: 0)
        b.connectionStarted()
        let out = try add(&b, "1848c8000004", at: 60)
        #expect(out.energy == nil)  // what happened while disconnected is unknown
        #expect(out.heartRate?.rrIntervals?.precededByGap == true)
    }
}

/// Optional SDNN over gap-free RR windows.
@Suite struct SDNNTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func payload(_ rr: [UInt16]) -> HeartRateMeasurement {
        HeartRateMeasurement(beatsPerMinute: 60, rrIntervals: RRTicks(rr))
    }

    @Test func windowOfGapFreeBeatsBecomesOneSDNNSample() throws {
        var b = HeartRateSampleBuilder(device: nil, sensorLocation: nil)
        b.sdnnWindow = .seconds(10)
        b.connectionStarted()
        // Alternating 1000 and 1048 ticks; 10 notifications of 1 RR each ≈ 10 s.
        let ticks: [UInt16] = (0..<12).map { $0.isMultiple(of: 2) ? 1000 : 1048 }
        var made: [QuantitySample] = []
        var at = 0.0
        for t in ticks {
            at += Double(t) / 1024
            if let s = try b.add(payload([t]), receivedAt: Self.t0.addingTimeInterval(at)).sdnn { made.append(s) }
        }
        let s = try #require(made.first)
        #expect(made.count == 1)
        #expect(s.type == .heartRateVariabilitySDNN)
        // The first 10 intervals (5 × 1000, 5 × 1048 ticks) span ≥ 10 s: exact sample SD in ms.
        let ms = ticks.prefix(10).map { Double($0) * 1000 / 1024 }
        let mean = ms.reduce(0, +) / 10
        let sd = (ms.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / 9).squareRoot()
        #expect(abs(try s.quantity.doubleValue(for: .millisecond) - sd) < 1e-9)
        #expect(s.startDate == Self.t0)  // the first beat's interval began at t0
    }

    @Test func aGapRestartsTheWindow() throws {
        var b = HeartRateSampleBuilder(device: nil, sensorLocation: nil)
        b.sdnnWindow = .seconds(3)
        b.connectionStarted()
        #expect(try b.add(payload([1024, 1024]), receivedAt: Self.t0.addingTimeInterval(2)).sdnn == nil)
        b.connectionStarted()  // reconnect: beats missing
        #expect(try b.add(payload([1024, 1024]), receivedAt: Self.t0.addingTimeInterval(60)).sdnn == nil)
        #expect(try b.add(payload([1024]), receivedAt: Self.t0.addingTimeInterval(61)).sdnn != nil)
        b.sdnnWindow = nil
        #expect(try b.add(payload([1024, 1024, 1024, 1024]), receivedAt: Self.t0.addingTimeInterval(65)).sdnn == nil)
    }
}

@Suite("Energy across a reconnect")
struct EnergyAcrossReconnectTests {
    @Test func energyContinuesKeepsTheBaselineAcrossTheOutage() throws {
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        var b = HeartRateSampleBuilder(device: nil, sensorLocation: nil)
        b.connectionStarted(energyContinues: true)
        _ = try b.add(HeartRateMeasurement(beatsPerMinute: 70, energyExpendedKJ: 96), receivedAt: t0)
        b.connectionStarted(energyContinues: true)  // link lost and back 12 s later
        let out = try b.add(HeartRateMeasurement(beatsPerMinute: 71, energyExpendedKJ: 108), receivedAt: t0.addingTimeInterval(12))
        let e = try #require(out.energy)
        #expect(e.canonicalValue == 12)
        #expect(e.startDate == t0 && e.endDate == t0.addingTimeInterval(12))
        #expect(out.heartRate?.rrIntervals == nil)
    }

    @Test func withoutItTheBaselineRestarts() throws {
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        var b = HeartRateSampleBuilder(device: nil, sensorLocation: nil)
        _ = try b.add(HeartRateMeasurement(beatsPerMinute: 70, energyExpendedKJ: 96), receivedAt: t0)
        b.connectionStarted()
        let out = try b.add(HeartRateMeasurement(beatsPerMinute: 71, energyExpendedKJ: 108), receivedAt: t0.addingTimeInterval(12))
        #expect(out.energy == nil)
    }
}
