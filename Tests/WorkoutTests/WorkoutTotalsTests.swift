import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing
@testable import WorkoutSummary

/// Workouts (issue 15, docs/workouts.md): the store's rules for marking them, and the totals,
/// zones and minutes computed from the samples inside, at their edges.
@Suite struct WorkoutTotalsTests {
    static let t0 = Date(timeIntervalSince1970: 1_795_000_000)   // 2026-11-18T11:06:40Z
    static let source = Source(name: "Test", identifier: "org.healthgate.test")

    /// A throw-away store.
    final class Scratch {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("workout-\(UUID().uuidString)")
        let store: HealthStore
        var path: String { dir.appendingPathComponent("w.sqlite").path }
        init() throws {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            store = try HealthStore(path: dir.appendingPathComponent("w.sqlite").path)
        }
        deinit { try? FileManager.default.removeItem(at: dir) }
    }

    static func at(_ s: Double) -> Date { t0.addingTimeInterval(s) }

    /// The built binary with `args`, waited for off the cooperative pool (in the one-thread pool
    /// pass a blocking wait here would stall every other suite's waiting).
    static func run(_ args: [String], launcher: URL? = nil) async throws -> HealthGateExecutable.Result {
        try await offThread { try launcher.map { try HealthGateExecutable.run(args, launcher: $0) } ?? HealthGateExecutable.run(args) }
    }

    static func hr(_ bpm: Double, _ s: Double, device: String = "Strap") throws -> QuantitySample {
        try QuantitySample(type: .heartRate, quantity: Quantity(bpm, .countPerMinute), start: at(s), end: at(s),
                           source: source, device: Device(name: device))
    }

    static func span(_ type: QuantityType, _ v: Double, _ unit: HealthUnit, _ a: Double, _ b: Double, device: String) throws -> QuantitySample {
        try QuantitySample(type: type, quantity: Quantity(v, unit), start: at(a), end: at(b), source: source, device: Device(name: device))
    }

    static func workout(_ start: Double, _ end: Double?, events: [(WorkoutEvent.Kind, Double)] = [], devices: [String] = []) -> Workout {
        Workout(activity: .running, start: at(start), end: end.map(at), events: events.map { WorkoutEvent($0.0, at: at($0.1)) },
                devices: devices, source: source)
    }

    @Test("running intervals: pauses cut them, a pause never resumed runs to the end, a pause at the start leaves nothing before it")
    func intervals() {
        let w = Self.workout(0, 600, events: [(.pause, 100), (.resume, 160), (.pause, 500)])
        #expect(w.activeIntervals() == [DateInterval(start: Self.at(0), end: Self.at(100)), DateInterval(start: Self.at(160), end: Self.at(500))])
        #expect(w.activeDuration() == 440 && w.elapsed() == 600)
        let atStart = Self.workout(0, 60, events: [(.pause, 0), (.resume, 10)])
        #expect(atStart.activeIntervals() == [DateInterval(start: Self.at(10), end: Self.at(60))])
        #expect(Self.workout(5, 5).activeIntervals().isEmpty, "a workout that ended where it started ran for no time")
        let open = Self.workout(0, nil)
        #expect(open.activeDuration(now: Self.at(30)) == 30 && open.activeDuration(now: Self.at(-10)) == 0)
    }

    @Test("state: running, paused while the last event is a pause, running again after a resume, ended once it has an end (paused or not)")
    func state() {
        #expect(Self.workout(0, nil).state == .running)
        #expect(Self.workout(0, nil, events: [(.pause, 10)]).state == .paused)
        #expect(Self.workout(0, nil, events: [(.pause, 10), (.resume, 20)]).state == .running)
        #expect(Self.workout(0, 30, events: [(.pause, 10)]).state == .ended, "a workout stopped while paused has ended")
        #expect(Self.workout(5, 5).state == .ended && Workout.State.paused.rawValue == "paused")
    }

    @Test("the store refuses events out of order, a second pause, a time outside the workout; a stored UUID is saved once")
    func eventRules() throws {
        let s = try Scratch()
        let w = Self.workout(0, nil)
        #expect(try s.store.saveWorkout(w))
        #expect(try s.store.saveWorkout(w) == false, "importing the same workout twice adds nothing")
        try s.store.updateWorkout(uuid: w.uuid, adding: WorkoutEvent(.pause, at: Self.at(10)))
        #expect(throws: StoreError.self) { try s.store.updateWorkout(uuid: w.uuid, adding: WorkoutEvent(.pause, at: Self.at(20))) }
        #expect(throws: StoreError.self) { try s.store.updateWorkout(uuid: w.uuid, adding: WorkoutEvent(.resume, at: Self.at(9))) }
        try s.store.updateWorkout(uuid: w.uuid, adding: WorkoutEvent(.resume, at: Self.at(10)))   // the same instant is allowed
        #expect(throws: StoreError.self) { try s.store.updateWorkout(uuid: w.uuid, end: Self.at(-1)) }
        let ended = try s.store.updateWorkout(uuid: w.uuid, end: Self.at(60))
        #expect(ended.end == Self.at(60) && ended.events.count == 2)
        #expect(throws: StoreError.self) { try s.store.updateWorkout(uuid: w.uuid, end: Self.at(70)) }
        #expect(throws: StoreError.self) { try s.store.updateWorkout(uuid: UUID(), end: Self.at(70)) }
        #expect(throws: StoreError.self) { try s.store.saveWorkout(Self.workout(0, 10, events: [(.pause, 11)])) }
        #expect(try s.store.workout(uuid: w.uuid) == ended, "what is read back is what was stored, to the fraction")
    }

    @Test("two workouts in progress may not share a device; one over every device excludes all others; ended ones do not conflict")
    func conflicts() throws {
        let s = try Scratch()
        try s.store.saveWorkout(Self.workout(0, nil, devices: ["A"]))
        try s.store.saveWorkout(Self.workout(0, nil, devices: ["B"]))
        #expect(throws: StoreError.self) { try s.store.saveWorkout(Self.workout(5, nil, devices: ["B", "C"])) }
        #expect(throws: StoreError.self) { try s.store.saveWorkout(Self.workout(5, nil)) }
        try s.store.saveWorkout(Self.workout(0, 100))   // a finished one (an import) is no conflict
        #expect(try s.store.workoutsInProgress(device: "A").count == 1)
        #expect(try s.store.workoutsInProgress().count == 2)
    }

    @Test("workouts in a range: overlap of [from, to), in progress reaches on, one that ended where it started counts at from")
    func rangeQuery() throws {
        let s = try Scratch()
        let a = Self.workout(0, 100, devices: ["x"]), b = Self.workout(100, 100, devices: ["y"]), c = Self.workout(200, nil, devices: ["z"])
        for w in [a, b, c] { try s.store.saveWorkout(w) }
        func uuids(_ f: Double?, _ t: Double?) throws -> [UUID] { try s.store.workouts(from: f.map(Self.at), to: t.map(Self.at)).map(\.uuid) }
        #expect(try uuids(100, 150) == [b.uuid], "a ends at 100: not in [100, 150); b is the instant 100")
        #expect(try uuids(99, 100) == [a.uuid], "b starts at the exclusive end")
        #expect(try uuids(1000, nil) == [c.uuid], "in progress, it reaches past any from")
        #expect(try uuids(nil, 200) == [a.uuid, b.uuid], "c starts at the exclusive end")
        #expect(try uuids(nil, nil) == [a.uuid, b.uuid, c.uuid])
    }

    @Test("totals count only the running intervals: steps clipped, energy in kcal, average heart rate weighted across the pause")
    func totalsAcrossAPause() throws {
        let s = try Scratch()
        var samples = [try Self.span(.stepCount, 600, .count, 0, 600, device: "Pedo"),
                       try Self.span(.activeEnergyBurned, 418.4, .kilojoule, 0, 600, device: "Strap")]
        for k in 0..<600 { samples.append(try Self.hr(k < 300 ? 100 : 160, Double(k))) }
        try s.store.save(samples)
        let w = Self.workout(0, 600, events: [(.pause, 200), (.resume, 400)])
        let sum = try WorkoutSummary(w, store: s.store, characteristics: Characteristics(maximumHeartRate: 200))
        #expect(sum.duration == 400 && sum.elapsed == 600)
        #expect(sum.steps?.value == 400, "600 steps over 10 min, 400 s of it running")
        #expect(abs((sum.activeEnergy?.value ?? 0) - 400.0 * 100 / 600) < 1e-9, "418.4 kJ = 100 kcal, two thirds counted: \(String(describing: sum.activeEnergy))")
        // 200 readings at 100 (0..<200), 200 at 160 (400..<600): the pause's readings do not count.
        #expect(sum.heartRate?.samples == 400 && sum.heartRate?.average == 130 && sum.heartRate?.minimum == 100 && sum.heartRate?.maximum == 160)
        // Zones of max 200: 100 is 50 % (zone 1, on its bound), 160 is 80 % (zone 4, on its bound).
        #expect(sum.zones?.seconds == [0, 200, 0, 0, 200, 0], "\(String(describing: sum.zones))")
        #expect(sum.zones?.unmeasured == 0)
    }

    @Test("zone bounds: a reading on a bound is in the zone above; below 50 % is below zone 1; above the maximum is zone 5")
    func zoneBounds() {
        let z = HeartRateZones(maximumHeartRate: 190, basis: .measured)
        #expect(z.zone(of: 95) == 1 && z.zone(of: 94.999) == 0)
        #expect(z.zone(of: 114) == 2 && z.zone(of: 113.99) == 1, "60 % of 190 is 114 exactly")
        #expect(z.zone(of: 133) == 3 && z.zone(of: 152) == 4 && z.zone(of: 171) == 5 && z.zone(of: 170.99) == 4)
        #expect(z.zone(of: 230) == 5 && z.zone(of: 0) == 0)
        #expect(z.lowerBound(zone: 1) == 95 && z.lowerBound(zone: 5) == 171)
    }

    @Test("age and Tanaka's maximum: a birthday counts from its first moment, 29 February from 1 March, a measured maximum wins")
    func ageAndMaximum() throws {
        let utc = TimeZone(identifier: "UTC")!
        func day(_ s: String) -> Date { ISO8601.date(s + "T00:00:00Z")! }
        let c = Characteristics(dateOfBirth: Characteristics.parseDate("1990-05-17"))
        #expect(c.age(on: day("2026-05-17"), timeZone: utc) == 36)
        #expect(c.age(on: day("2026-05-17").addingTimeInterval(-0.001), timeZone: utc) == 35)
        #expect(c.age(on: day("1990-05-16"), timeZone: utc) == nil, "before the birth there is no age")
        // 01:00 in Berlin on the birthday is still the day before in UTC.
        #expect(c.age(on: day("2026-05-17").addingTimeInterval(-3600), timeZone: TimeZone(identifier: "Europe/Berlin")!) == 36)
        let leap = Characteristics(dateOfBirth: Characteristics.parseDate("2000-02-29"))
        #expect(leap.age(on: day("2001-02-28"), timeZone: utc) == 0 && leap.age(on: day("2001-03-01"), timeZone: utc) == 1)
        #expect(leap.age(on: day("2004-02-29"), timeZone: utc) == 4)
        #expect(Characteristics.parseDate("2023-02-29") == nil && Characteristics.parseDate("1990-5-17") == nil)
        let z = try #require(HeartRateZones(c, on: day("2026-06-01"), timeZone: utc))
        #expect(z.basis == .estimated(age: 36) && abs(z.maximumHeartRate - 182.8) < 1e-9)
        let measured = try #require(HeartRateZones(Characteristics(dateOfBirth: c.dateOfBirth, maximumHeartRate: 190), on: day("2026-06-01")))
        #expect(measured.maximumHeartRate == 190 && measured.basis == .measured)
        #expect(HeartRateZones(Characteristics(), on: day("2026-06-01")) == nil)
    }

    @Test("zone time: a reading holds until the next, at most 5 s; one just before the start covers it; the end is exclusive")
    func readingHold() throws {
        let s = try Scratch()
        // 2 s before the start at 100; 1 and 2 at 150; silence until 30; 30 at 190; 60 (the end) at 120.
        try s.store.save([try Self.hr(100, -2), try Self.hr(150, 1), try Self.hr(150, 2),
                          try Self.hr(190, 30), try Self.hr(120, 60)])
        let sum = try WorkoutSummary(Self.workout(0, 60), store: s.store, characteristics: Characteristics(maximumHeartRate: 200))
        // 100 (zone 1) covers [0, 1) of its [−2, 1); 150 (zone 3) from 1 to 2, then 2 to 7 (the cap);
        // 190 (zone 5) from 30 to 35; the reading at the end counts nothing.
        #expect(sum.zones?.seconds == [0, 1, 0, 6, 0, 5], "\(String(describing: sum.zones?.seconds))")
        #expect(sum.zones?.unmeasured == 48)
        #expect(sum.heartRate?.samples == 3, "the readings at −2 and at the end (60) lie outside [0, 60)")
    }

    @Test("with devices, each type comes from the first listed device that has it: no double counting of two straps")
    func devicePriority() throws {
        let s = try Scratch()
        try s.store.save([try Self.hr(100, 10, device: "A"), try Self.hr(180, 10, device: "B"), try Self.hr(180, 20, device: "B"),
                          try Self.span(.stepCount, 50, .count, 0, 60, device: "B")])
        let ab = try WorkoutSummary(Self.workout(0, 60, devices: ["A", "B"]), store: s.store, characteristics: Characteristics())
        #expect(ab.heartRate?.average == 100 && ab.heartRate?.device == "A")
        #expect(ab.steps?.value == 50 && ab.steps?.device == "B", "A has no steps: B's count")
        #expect(ab.zones == nil && ab.zonesNote?.contains("profile set") == true)
        let b = try WorkoutSummary(Self.workout(0, 60, devices: ["B"]), store: s.store, characteristics: Characteristics())
        #expect(b.heartRate?.samples == 2 && b.heartRate?.average == 180)
        let none = try WorkoutSummary(Self.workout(0, 60, devices: ["C"]), store: s.store, characteristics: Characteristics())
        #expect(none.heartRate == nil && none.steps == nil && none.zonesNote == "no heart-rate readings in this workout")
    }

    @Test("per minute: minutes counted from the start (not the clock), the last one short, a paused minute has 0 running seconds")
    func perMinute() throws {
        let s = try Scratch()
        try s.store.save([try Self.hr(100, 30), try Self.hr(120, 89.5), try Self.hr(140, 90), try Self.hr(160, 200)])
        // Starts at 30 s past the epoch minute; ends 170 s later; paused 90…150.
        let w = Self.workout(30, 200, events: [(.pause, 90), (.resume, 150)])
        let m = try WorkoutSummary(w, store: s.store, characteristics: Characteristics(), perMinute: true).minutes
        #expect(m.map(\.start) == [Self.at(30), Self.at(90), Self.at(150)])
        #expect(m.map(\.samples) == [2, 1, 0], "200 is the exclusive end")
        #expect(m[0].average == 110 && m[1].average == 140 && m[2].average == nil)
        #expect(m.map(\.activeSeconds) == [60, 0, 50])
    }

    @Test("deleting a workout keeps its samples")
    func deleteKeepsSamples() throws {
        let s = try Scratch()
        try s.store.save([try Self.hr(100, 10)])
        let w = Self.workout(0, 60)
        try s.store.saveWorkout(w)
        #expect(try s.store.deleteWorkout(uuid: w.uuid))
        #expect(try s.store.deleteWorkout(uuid: w.uuid) == false)
        #expect(try s.store.count(SampleQuery(type: .heartRate)) == 1)
        #expect(try s.store.workouts().isEmpty)
    }
}
