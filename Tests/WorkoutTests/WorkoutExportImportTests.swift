import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

/// Workouts in `export --format jsonl` and `import` (docs/workouts.md): after the samples, one
/// record each, exact to the fraction of a second; importing twice adds nothing; a record that
/// cannot be a workout is skipped with its line.
@Suite struct WorkoutExportImportTests {
    @Test("export → import → export is byte-identical with workouts; a second import counts them as duplicates; --type leaves them out")
    func roundTrip() async throws {
        let from = try WorkoutTotalsTests.Scratch(), to = try WorkoutTotalsTests.Scratch()
        try from.store.save([try WorkoutTotalsTests.hr(120, 1), try WorkoutTotalsTests.hr(121, 2)])
        let a = Workout(activity: .highIntensityIntervalTraining, start: WorkoutTotalsTests.at(0.125), end: WorkoutTotalsTests.at(90.5),
                        events: [WorkoutEvent(.pause, at: WorkoutTotalsTests.at(10.001)), WorkoutEvent(.resume, at: WorkoutTotalsTests.at(20))],
                        devices: ["Strap", "Pedo"], source: Source(name: "HealthGate", identifier: "org.healthgate.workout", version: "1.2"))
        let open = Workout(activity: .walking, start: WorkoutTotalsTests.at(100), source: Source(name: "Phone"))
        try from.store.saveWorkout(a)
        try from.store.saveWorkout(open)
        let dir = from.dir
        let file = dir.appendingPathComponent("all.jsonl").path, again = dir.appendingPathComponent("again.jsonl").path
        let exported = try await WorkoutTotalsTests.run(["export", "--db", from.path, "--format", "jsonl", "--output", file])
        #expect(exported.status == 0 && exported.stderr.contains("exported 2 sample(s) and 2 workout(s)"), "\(exported.stderr)")
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4 && lines[2].contains(#""kind":"workout""#) && lines[2].contains(#""start":"2026-11-18T11:06:40.125Z""#), "\(lines)")

        let imported = try await WorkoutTotalsTests.run(["import", "--db", to.path, "--json", "--jsonl", file])
        let report = try JSONSerialization.jsonObject(with: Data(imported.stdout.utf8)) as? [String: Any]
        #expect(imported.status == 0 && (report?["workouts"] as? [String: Int]) == ["inserted": 2, "duplicates": 0], "\(imported.stdout)\(imported.stderr)")
        let back = try to.store.workout(uuid: a.uuid)
        func bits(_ w: Workout?) -> [UInt64] { w.map { ([$0.start] + ($0.end.map { [$0] } ?? []) + $0.events.map(\.date)).map(\.timeIntervalSince1970.bitPattern) } ?? [] }
        #expect(bits(back) == bits(a), "every time back, to the bit")
        #expect(back?.source == a.source && back?.devices == a.devices && back?.activity == a.activity)
        #expect(try to.store.workout(uuid: open.uuid)?.end == nil, "still in progress")
        let twice = try await WorkoutTotalsTests.run(["import", "--db", to.path, "--jsonl", file])
        #expect(twice.status == 0 && twice.stdout.contains("workouts: 0 inserted, 2 duplicate(s)"), "\(twice.stdout)")
        #expect(try await WorkoutTotalsTests.run(["export", "--db", to.path, "--format", "jsonl", "--output", again]).status == 0)
        #expect(try String(contentsOfFile: again, encoding: .utf8) == String(contentsOfFile: file, encoding: .utf8))

        let onlyHR = try await WorkoutTotalsTests.run(["export", "--db", from.path, "--format", "jsonl", "--type", "heartRate"])
        #expect(onlyHR.stdout.split(separator: "\n").count == 2 && !onlyHR.stdout.contains("workout"))
        let ranged = try await WorkoutTotalsTests.run(["export", "--db", from.path, "--format", "jsonl", "--from", ISO8601.string(WorkoutTotalsTests.at(95))])
        #expect(ranged.stdout.split(separator: "\n").map { $0.contains(open.uuid.uuidString.lowercased()) } == [true], "only the workout in the range: \(ranged.stdout)")
    }

    @Test("a workout record that cannot be is skipped with its line and why; the rest is saved")
    func badRecords() async throws {
        let s = try WorkoutTotalsTests.Scratch()
        let file = s.dir.appendingPathComponent("bad.jsonl").path
        let good = #"{"kind":"workout","uuid":"0195a1b2-0000-7000-8000-000000000001","activity":"running","start":"2026-11-02T08:00:00Z","end":"2026-11-02T09:00:00Z","events":[],"devices":[],"source":"Me"}"#
        let lines = [
            good,
            #"{"kind":"workout","uuid":"0195a1b2-0000-7000-8000-000000000002","activity":"running","start":"2026-11-02T08:00:00Z","end":"2026-11-02T07:00:00Z","source":"Me"}"#,
            #"{"kind":"workout","uuid":"0195a1b2-0000-7000-8000-000000000003","activity":"parkour","start":"2026-11-02T08:00:00Z","source":"Me"}"#,
            #"{"kind":"workout","uuid":"0195a1b2-0000-7000-8000-000000000004","activity":"yoga","start":"2026-11-02T08:00:00Z","end":"2026-11-02T09:00:00Z","events":[{"kind":"resume","date":"2026-11-02T08:10:00Z"}],"source":"Me"}"#,
            // A sample whose metadata says "kind": "workout" (and an escape the fast parser
            // leaves to Foundation's) is a sample: it was once read as a bad workout and lost.
            #"{"type":"stepCount","value":5,"unit":"count","start":"2026-11-02T08:00:00Z","end":"2026-11-02T08:01:00Z","source":"a\"b","metadata":{"kind":"workout"}}"#,
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let r = try await WorkoutTotalsTests.run(["import", "--db", s.path, "--jsonl", file])
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("bad.jsonl:2: skipped: the workout ends (2026-11-02T07:00:00Z) before it starts"), "\(r.stderr)")
        #expect(r.stderr.contains("bad.jsonl:3: skipped: \"activity\" must be one of HealthKit's activity types"), "\(r.stderr)")
        #expect(r.stderr.contains("bad.jsonl:4: skipped: the workout's events: it is not paused"), "\(r.stderr)")
        #expect(try s.store.workouts().count == 1)
        #expect(try s.store.count(SampleQuery(type: .stepCount)) == 1, "the sample line is stored: \(r.stderr)")
        #expect(!r.stderr.contains("bad.jsonl:5"))
    }
}
