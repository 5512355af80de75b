import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

/// `GET /v1/workouts` and `/v1/workouts/{uuid}` under per-type authorization: a token without
/// `workout` sees nothing (an empty list, 404), one without `heartRate` sees the workout with
/// its heart rate, zones and minutes withheld (docs/http-api.md, docs/workouts.md).
@Suite("HTTP API: workouts, authorized per type")
struct WorkoutAPITests {
    @Test("all, workout without heartRate, heartRate without workout: what each token sees")
    func authorization() async throws {
        let db = TempStore()
        let store = try db.open()
        try store.save((0..<120).map { try heartRate(150, at: Double($0)) } + [try steps(100, at: 0)])
        try store.setCharacteristics(Characteristics(maximumHeartRate: 200))
        let w = Workout(activity: .running, start: at(0), end: at(120), source: Source(name: "HealthGate", identifier: "org.healthgate.workout"))
        try store.saveWorkout(w)
        let server = try await ServeProcess.start(db: db.path)
        let all = try await makeToken(db.path, ["--name", "all", "--read", "all"])
        let noHR = try await makeToken(db.path, ["--name", "coach", "--read", "workout,stepCount"])
        let noWorkout = try await makeToken(db.path, ["--name", "hr", "--read", "heartRate"])
        let id = w.uuid.uuidString

        let full = try await server.get("/v1/workouts/\(id)", token: all)
        #expect(full.status == 200, "\(full.body)")
        let hr = full.object?["heartRate"] as? [String: Any]
        #expect(hr?["average"] as? Double == 150 && hr?["samples"] as? Int == 120)
        #expect((full.object?["perMinute"] as? [Any])?.count == 2)
        #expect(((full.object?["zones"] as? [String: Any])?["zones"] as? [[String: Any]])?[2]["seconds"] as? Double == 120, "150 of 200 is zone 3 (75 %)")
        #expect((full.object?["stepCount"] as? [String: Any])?["value"] as? Double == 100)

        let masked = try await server.get("/v1/workouts/\(id)", token: noHR)
        #expect(masked.status == 200)
        #expect(masked.object?["heartRate"] is NSNull && masked.object?["zones"] is NSNull && masked.object?["perMinute"] == nil)
        #expect(masked.object?["activeEnergyBurned"] is NSNull, "not in the token's read scope")
        #expect((masked.object?["stepCount"] as? [String: Any])?["value"] as? Double == 100)
        #expect(try await server.get("/v1/workouts", token: noHR).array?.count == 1)

        let hidden = try await server.get("/v1/workouts/\(id)", token: noWorkout)
        #expect(hidden.status == 404, "a token that may not read workouts learns nothing of this one")
        #expect(try await server.get("/v1/workouts/\(UUID().uuidString)", token: all).status == 404)
        #expect(try await server.get("/v1/workouts", token: noWorkout).array?.isEmpty == true)
        #expect(try await server.get("/v1/workouts?from=\(ISO8601.string(at(120)))", token: all).array?.isEmpty == true, "it ended at 120")
        #expect(try await server.get("/v1/workouts?from=later", token: all).status == 400)
        #expect(try await server.get("/v1/workouts/nonsense", token: all).status == 400)
        #expect(try await server.get("/v1/workouts", token: nil).status == 401)
        // The change feed: the workout, then nothing after its anchor; a token without workout sees none.
        let feed = try await server.get("/v1/workouts/changes", token: all)
        #expect((feed.object?["workouts"] as? [[String: Any]])?.map { $0["uuid"] as? String } == [id.lowercased()], "\(feed.body)")
        let next = try #require(feed.object?["anchor"] as? String)
        #expect((try await server.get("/v1/workouts/changes?anchor=\(next)", token: all).object?["workouts"] as? [Any])?.isEmpty == true)
        let blind = try await server.get("/v1/workouts/changes", token: noWorkout)
        #expect((blind.object?["workouts"] as? [Any])?.isEmpty == true && blind.object?["anchor"] as? String == next,
                "an empty page at the current anchor, as an empty store answers")
        #expect(try await server.get("/v1/workouts/changes?anchor=w1:0123456789abcdef:1", token: all).status == 409)
        #expect(await offThread { server.stop() } == 0)
    }
}
