import Foundation
import HealthGateTesting
import HealthStore
import HealthModel
import HeartRateProfile
import Ingest
import Locking
import Logging
import Platform
import SerialPedometer
import Systemd
import Testing
@testable import Gateway

/// Steps of the wall clock (issue 16, "Clock"): NTP setting a Pi's clock a year forward, or
/// `date -s` back, while a strap and a pedometer are read. Intervals from one reading to the next
/// last what really passed; the run says when the clock steps or was never set. The system
/// clock's own watcher (timerfd) is exercised by the real-stack `clock` scenario, which may set
/// the guest's clock; here steps are recorded into a private ``ClockSteps``.
@Suite("Clock steps: intervals across a step, the cursor, the run's warnings")
struct ClockStepTests {
    static let year = 365 * 86_400.0
    static let t0 = 1_764_288_000.0   // 2025-11-28T00:00:00Z: a Pi a year behind

    @Test("a cursor sees the sum of the steps since its last look, once; observers until cancelled")
    func cursorAndObservers() {
        let clock = ClockSteps()
        var a = clock.cursor()
        #expect(a.take() == 0)
        let seen = Lock<[ClockSteps.Step]>([])
        let watch = clock.observe { step in seen.withLock { $0.append(step) } }
        clock.record(Self.year, at: Self.t0 + Self.year)
        var b = clock.cursor()   // made after the first step: sees only later ones
        clock.record(-2.5, at: Self.t0 + Self.year + 10)
        #expect(a.take() == Self.year - 2.5)
        #expect(a.take() == 0)
        #expect(b.take() == -2.5)
        watch.cancel()
        clock.record(1, at: Self.t0 + Self.year + 20)
        #expect(seen.withLock { $0 } == [ClockSteps.Step(seconds: Self.year, at: Self.t0 + Self.year),
                                         ClockSteps.Step(seconds: -2.5, at: Self.t0 + Self.year + 10)])
        #expect(clock.count == 3 && clock.last?.seconds == 1)
        #expect(a.take() == 1)
    }

    @Test("steps in words", arguments: [
        (365 * 86_400.0 + 3, "forward by 365 d 0 h 0 min 3 s"), (-1.5, "back by 1.5 s"), (3_600, "forward by 1 h 0 min 0 s"),
        (59.9994, "forward by 59.999 s"), (-90, "back by 1 min 30 s"),
    ] as [(Double, String)])
    func described(seconds: Double, words: String) {
        #expect(ClockSteps.Step(seconds: seconds, at: 0).described == words)
    }

    @Test("the system clock's offset from boot time is steady between two reads (no step in a test)")
    func offsetIsSteady() {
        let a = ClockSteps.wallMinusBoot(), b = ClockSteps.wallMinusBoot()
        #expect(abs(a - b) < ClockSteps.resolution)
        #expect(ClockSteps.system.count == 0)
        #expect(ClockSteps.implausibleNow() == nil)   // this machine's clock is set
        // The kernel accepted the watcher's timer (timerfd with TFD_TIMER_CANCEL_ON_SET): a set of
        // the clock would be reported. (Setting it is the real-stack `clock` scenario's job.)
        var waited = 0
        while !ClockSteps.system.isWatching && waited < 500 { usleep(10_000); waited += 1 }
        #expect(ClockSteps.system.isWatching)
    }

    /// Energy notifications (flags 0x08) 1 s apart, with a step of `step` seconds recorded
    /// between the 3rd and the 4th: the energy intervals the mapper makes.
    static func energyIntervals(step: Double, told: Bool) throws -> [(value: Double, start: Double, end: Double)] {
        let table = SlotTable()
        let slots = try HeartRateRecordMapper.Slots(table: table, source: StrapSource.source, device: Device(localIdentifier: "AA:BB:CC:DD:EE:51"))
        var mapper = HeartRateRecordMapper(slots: slots)
        mapper.connectionStarted()
        let clock = ClockSteps()
        var cursor = clock.cursor()
        var out: [(Double, Double, Double)] = []
        var wall = t0
        for (i, kJ) in [UInt16(10), 12, 15, 19, 20].enumerated() {
            if i == 3 {
                clock.record(step, at: wall + step)
                wall += step
            }
            if told { let s = cursor.take(); if s != 0 { mapper.clockStepped(by: s) } }
            let m = try HeartRateMeasurement.decode(bytes: [0x08, 70, UInt8(kJ & 0xFF), UInt8(kJ >> 8)])
            mapper.map(m, at: wall) { r, _ in
                if r.typeSlot == slots.energy { out.append((r.value, r.start, r.end)) }
            }
            wall += 1
        }
        return out
    }

    @Test("a strap's energy across the clock stepping a year forward or an hour back: each interval lasts the 1 s that passed",
          arguments: [365 * 86_400.0, -3_600, 0.25])
    func energyAcrossAStep(step: Double) throws {
        let told = try Self.energyIntervals(step: step, told: true)
        #expect(told.map(\.value) == [2, 3, 4, 1])
        for e in told { #expect(abs(e.end - e.start - 1) < 1e-6, "\(e)") }
        #expect(told[2].end == Self.t0 + 3 + step && told[2].start == Self.t0 + 2 + step)
        // Untold (what the mapper did before it was told of steps): a year-long interval, or a
        // zero-length one at the new time.
        let untold = try Self.energyIntervals(step: step, told: false)
        #expect(abs(untold[2].end - untold[2].start - max(0, 1 + step)) < 1e-6)
    }

    @Test("an SDNN window across a step spans its beats' minute, not the step")
    func sdnnAcrossAStep() throws {
        let table = SlotTable()
        let slots = try HeartRateRecordMapper.Slots(table: table, source: StrapSource.source, device: Device(localIdentifier: "AA:BB:CC:DD:EE:52"))
        var mapper = HeartRateRecordMapper(slots: slots)
        mapper.connectionStarted()
        var sdnn: [(start: Double, end: Double)] = []
        var wall = Self.t0
        for i in 0..<90 {
            if i == 30 { mapper.clockStepped(by: Self.year); wall += Self.year }
            let rr: UInt16 = i % 2 == 0 ? 1000 : 1048   // ≈ 1 s a beat
            let m = try HeartRateMeasurement.decode(bytes: [0x10, 60, UInt8(rr & 0xFF), UInt8(rr >> 8)])
            mapper.map(m, at: wall) { r, _ in if r.typeSlot == slots.sdnn { sdnn.append((r.start, r.end)) } }
            wall += Double(rr) / 1024
        }
        #expect(sdnn.count == 1)
        if let w = sdnn.first {
            #expect(w.end - w.start > 59 && w.end - w.start < 62, "\(w)")
            #expect(w.start < Self.t0 + Self.year)   // it began before the step, moved with it
        }
    }

    @Test("a pedometer's steps across the clock stepping a year forward: one interval of the minute that passed, every step counted")
    func stepsAcrossAStep() throws {
        func intervals(told: Bool) throws -> [StepInterval] {
            var session = PedometerSession(format: .auto, counter: StepCounter(configuration: try CounterConfiguration(deviceID: "PED-CLOCK")))
            var out: [StepInterval] = []
            var wall = Self.t0
            for (i, count) in [100, 160, 220, 300].enumerated() {
                if i == 2 {
                    wall += Self.year
                    if told { session.clockStepped(by: Self.year) }
                }
                for e in session.feedLine("steps:\(count)", receivedAt: Date(timeIntervalSince1970: wall)) {
                    if case .sample(let s) = e { out.append(s) }
                }
                wall += 60
            }
            return out
        }
        let told = try intervals(told: true)
        #expect(told.map(\.steps) == [60, 60, 80])
        for s in told { #expect(s.end.timeIntervalSince(s.start) == 60, "\(s)") }
        #expect(told[1].end.timeIntervalSince1970 == Self.t0 + Self.year + 120)
        let untold = try intervals(told: false)
        #expect(untold.map(\.steps).reduce(0, +) == 200)
        #expect(untold.contains { $0.end.timeIntervalSince($0.start) > Self.year })   // what it was
    }

    static func capturingLogger() -> (Logger, Lock<[String]>) {
        let lines = Lock<[String]>([])
        var logger = Logger(label: "healthgate") { label in
            JournalLogHandler(label: label) { l in lines.withLock { $0.append(l.trimmingCharacters(in: .newlines)) } }
        }
        logger.logLevel = .debug
        return (logger, lines)
    }

    @Test("the run warns once a step, names the old clock's range and, for a clock that was not set, what to do")
    func runSaysWhenTheClockSteps() throws {
        let (logger, lines) = Self.capturingLogger()
        let clock = ClockSteps()
        let watch = GatewayRuntime.watchClock(logger: logger, clock: clock)
        let now = Date().timeIntervalSince1970
        clock.record(Self.year, at: now)
        clock.record(0.2, at: now + 5)
        watch.cancel()
        clock.record(60, at: now + 10)
        let all = lines.withLock { $0 }
        #expect(all.count == 2, "\(all)")
        #expect(all.first?.hasPrefix("<4>the system clock stepped forward by 365 d 0 h 0 min 0 s") == true, "\(all)")
        let oldEnd = Date(timeIntervalSince1970: now - Self.year).formatted(.iso8601)
        #expect(all.first?.contains("to \(oldEnd) by the old clock") == true, "\(all)")
        #expect(all.first?.contains("the old clock was not set") == true, "\(all)")
        #expect(all.last?.hasPrefix("<6>the system clock stepped forward by 0.2 s") == true, "\(all)")
        #expect(all.last?.contains("not set") == false, "\(all)")
    }

    /// A store holding samples dated after the clock's now: the clock was set back while the
    /// daemon was stopped (a Pi restoring an older saved time after a power cut) — said once at
    /// start, naming the type, the span and what to do; a sample a minute ahead (a strap's
    /// interval, clocks a little apart) or an empty store says nothing. Series quantities count.
    @Test("at start, samples stored after the clock's now are said once at warning; within two minutes, or none, nothing")
    func storeAheadOfTheClockIsSaid() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func lines(_ store: HealthStore) -> [String] {
            let (logger, lines) = Self.capturingLogger()
            GatewayRuntime.checkClock(against: store, logger: logger, now: now)
            return lines.withLock { $0 }
        }
        let store = try HealthStore(path: temporaryStorePath())
        #expect(lines(store).isEmpty)
        let source = Source(name: "HealthGate BLE", identifier: "org.healthgate.ble")
        func hr(_ bpm: Double, at t: Date) throws -> QuantitySample {
            try QuantitySample(type: .heartRate, quantity: Quantity(bpm, .countPerMinute), start: t, end: t, source: source)
        }
        _ = try store.save([try hr(60, at: now.addingTimeInterval(-3600)), try hr(61, at: now.addingTimeInterval(100))])
        #expect(lines(store).isEmpty, "within the tolerance")
        _ = try store.save([try hr(62, at: now.addingTimeInterval(3_723))])
        let said = lines(store)
        #expect(said.count == 1, "\(said)")
        #expect(said.first?.hasPrefix("<4>the store's newest sample (heartRate) ends at \(now.addingTimeInterval(3_723).formatted(.iso8601)), 1 h 2 min 3 s after the system clock's") == true, "\(said)")
        #expect(said.first?.contains("systemd-time-wait-sync") == true, "\(said)")

        // A series quantity (a strap's heart rate as the daemon stores it) counts as well.
        let other = try HealthStore(path: temporaryStorePath())
        let writer = SeriesWriter()
        let t = now.addingTimeInterval(86_400).timeIntervalSince1970
        try other.write { w in
            let key = SeriesWriter.Key(typeID: try w.typeID(.heartRate), sourceID: try w.sourceID(source), deviceID: nil)
            try [UInt16]().withUnsafeBufferPointer { rr in
                try writer.append(w, key: key, style: .discreteTemporallyWeighted, sensorLocation: nil, start: t, end: t,
                                  value: 70, contact: .detected, flags: [], rr: rr)
            }
            try writer.flush(w)
        }
        let fromSeries = lines(other)
        #expect(fromSeries.count == 1 && fromSeries.first?.contains("1 d 0 h 0 min 0 s after") == true, "\(fromSeries)")
    }
}
