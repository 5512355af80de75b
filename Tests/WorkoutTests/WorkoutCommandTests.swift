import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

/// `healthgate workout …`, `workouts` and `profile` through the built binary: the flow a user
/// types, the JSON a script reads, and the exit codes of mistakes.
@Suite struct WorkoutCommandTests {
    static func json(_ r: HealthGateExecutable.Result) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(r.stdout.utf8))
    }

    @Test("start, pause, resume, stop with --at; workouts and show as JSON; profile gives zones; mistakes exit 64 or 65")
    func flow() async throws {
        let s = try WorkoutTotalsTests.Scratch()
        let db = ["--db", s.path]
        var samples: [QuantitySample] = []
        for k in 0..<120 { samples.append(try WorkoutTotalsTests.hr(k < 60 ? 120 : 170, Double(k))) }
        try s.store.save(samples)
        func at(_ x: Double) -> String { ISO8601.string(WorkoutTotalsTests.at(x)) }
        func run(_ args: [String]) async throws -> HealthGateExecutable.Result { try await WorkoutTotalsTests.run(args + db) }

        let started = try await run(["workout", "start", "--activity", "Running", "--device", "Strap", "--at", at(0), "--json"])
        #expect(started.status == 0, "\(started.stderr)")
        let w = try #require(try Self.json(started) as? [String: Any])
        #expect(w["activity"] as? String == "running" && w["state"] as? String == "running" && w["devices"] as? [String] == ["Strap"])
        let uuid = try #require(w["uuid"] as? String)

        #expect(try await run(["workout", "start", "--activity", "cycling", "--device", "Strap"]).status == 64, "the strap is in a workout already")
        #expect(try await run(["workout", "start", "--activity", "parkour"]).status == 64)
        #expect(try await run(["workout", "pause", "--at", at(30)]).status == 0)
        let twice = try await run(["workout", "pause", "--at", at(31)])
        #expect(twice.status == 64 && twice.stderr.contains("paused already"), "\(twice.stderr)")
        #expect(try await run(["workout", "resume", "--device", "Strap", "--at", at(40)]).status == 0)
        #expect(try await run(["profile", "set", "--max-heart-rate", "200"]).status == 0)
        #expect(try await run(["profile", "set", "--date-of-birth", "1990-02-30"]).status == 64)
        #expect(try await run(["profile", "set", "--max-heart-rate", "40"]).status == 64)

        let stopped = try await run(["workout", "stop", uuid, "--at", at(120), "--json"])
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let t = try #require(try Self.json(stopped) as? [String: Any])
        #expect(t["duration"] as? Double == 110 && t["elapsed"] as? Double == 120 && t["state"] as? String == "ended")
        let hr = try #require(t["heartRate"] as? [String: Any])
        // 0..<30 and 40..<60 at 120 (50 readings), 60..<120 at 170 (60 readings).
        #expect(hr["samples"] as? Int == 110 && hr["maximum"] as? Double == 170 && hr["device"] as? String == "Strap")
        #expect(abs((hr["average"] as? Double ?? 0) - (50.0 * 120 + 60 * 170) / 110) < 1e-9)
        let zones = try #require(t["zones"] as? [String: Any])
        let perZone = try #require(zones["zones"] as? [[String: Any]]).map { $0["seconds"] as? Double }
        #expect(perZone == [0, 50, 0, 60, 0], "120 is 60 % of 200 (zone 2's bound), 170 is 85 %: \(perZone)")
        #expect(zones["maximumHeartRate"] as? Double == 200)

        #expect(try await run(["workout", "stop"]).status == 64, "nothing is in progress any more")
        let show = try await run(["workout", "show", uuid, "--json"])
        let minutes = try #require((try Self.json(show) as? [String: Any])?["perMinute"] as? [[String: Any]])
        #expect(minutes.count == 2 && minutes.map { $0["activeSeconds"] as? Double } == [50, 60])
        let text = try await run(["workout", "show", uuid])
        #expect(text.status == 0 && text.stdout.contains("duration 0:01:50 (elapsed 0:02:00, 1 pause(s))"), "\(text.stdout)")

        let list = try await run(["workouts", "--from", at(119), "--json"])
        #expect((try Self.json(list) as? [[String: Any]])?.map { $0["uuid"] as? String } == [uuid])
        #expect((try Self.json(try await run(["workouts", "--from", at(120), "--json"])) as? [Any])?.isEmpty == true, "it ended at 120")
        #expect(try await run(["workout", "show", UUID().uuidString]).status == 65)
        #expect(try await run(["workout", "show", "nope"]).status == 64)
        #expect(try await run(["workout", "delete", uuid]).status == 0)
        #expect(try s.store.count(SampleQuery(type: .heartRate)) == 120, "the samples stay")
    }
}
