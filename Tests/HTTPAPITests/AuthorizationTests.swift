import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

/// HealthKit's authorization model over HTTP: unreadable types look empty, writes need scope.
@Suite("HTTP API authorization: no data without read scope, 403 without write scope, 401 without a token", .serialized)
struct AuthorizationTests {
    @Test("a token that may not read a type gets exactly an empty store's answers, byte for byte")
    func unreadableLooksEmpty() async throws {
        let full = TempStore(), empty = TempStore()
        let store = try full.open()
        try store.save([try heartRate(70, at: 0), try heartRate(90, at: 60), try steps(100, at: 0)])
        _ = try empty.open()
        let fullServer = try await ServeProcess.start(db: full.path)
        let emptyServer = try await ServeProcess.start(db: empty.path)
        // Reads steps only, on the full store; reads everything, on the empty one.
        let stepsOnly = try await makeToken(full.path, ["--name", "steps", "--read", "stepCount"])
        let all = try await makeToken(empty.path, ["--name", "all", "--read", "all"])
        for path in ["/v1/samples?type=heartRate", "/v1/samples?type=heartRate&sort=end&order=desc&limit=1",
                     "/v1/statistics?type=heartRate", "/v1/statistics?type=heartRate&interval=1h",
                     "/v1/statistics?type=heartRate&interval=1d&from=2026-11-01&to=2026-11-04&separateBySource=true",
                     "/v1/statistics?type=heartRate&options=mostRecent", "/v1/sources?type=heartRate"] {
            let a = try await fullServer.get(path, token: stepsOnly)
            let b = try await emptyServer.get(path, token: all)
            #expect(a.status == 200 && b.status == 200, "\(path): \(a.body) \(b.body)")
            #expect(a.body == b.body, "\(path): \(a.body) ≠ empty store's \(b.body)")
        }
        // Lists without a type hold only readable types.
        let samples = try await fullServer.get("/v1/samples", token: stepsOnly)
        #expect(samples.array?.compactMap { $0["type"] as? String } == ["stepCount"])
        let sources = try await fullServer.get("/v1/sources", token: stepsOnly)
        #expect(sources.array?.first?["samples"] as? Int == 1, "counts only the readable step sample: \(sources.body)")
        let feed = try await fullServer.get("/v1/changes", token: stepsOnly)
        #expect((feed.object?["samples"] as? [[String: Any]])?.compactMap { $0["type"] as? String } == ["stepCount"])
        let hrFeed = try await fullServer.get("/v1/changes?type=heartRate", token: stepsOnly)
        #expect(hrFeed.status == 200)
        #expect((hrFeed.object?["samples"] as? [Any])?.isEmpty == true && (hrFeed.object?["deleted"] as? [Any])?.isEmpty == true)
        #expect(await offThread { fullServer.stop() } == 0, "\(fullServer.stderr)")
        #expect(await offThread { emptyServer.stop() } == 0, "\(emptyServer.stderr)")
    }

    @Test("writes and deletes of a type without write scope are 403 with the reason; nothing is saved")
    func writeScope() async throws {
        let db = TempStore()
        let hr = try heartRate(70, at: 0)
        try db.open().save([hr])
        let server = try await ServeProcess.start(db: db.path)
        let token = try await makeToken(db.path, ["--name", "coach", "--read", "heartRate,stepCount", "--write", "stepCount"])
        let mixed = Data(#"[{"type":"stepCount","value":5,"start":"2026-11-02T10:00:00Z","end":"2026-11-02T10:01:00Z"},{"type":"heartRate","value":60,"start":"2026-11-02T10:00:00Z"}]"#.utf8)
        let refused = try await server.request("POST", "/v1/samples", token: token, body: mixed)
        #expect(refused.status == 403)
        #expect(refused.error.contains("may not write heartRate"))
        #expect(try db.open().samples(SampleQuery(type: .stepCount)).isEmpty, "nothing of the body was saved")
        let delete = try await server.request("DELETE", "/v1/samples/\(hr.uuid.uuidString)", token: token)
        #expect(delete.status == 403)
        #expect(delete.error.contains("may not delete heartRate"))
        // A token that may neither read nor write the type learns nothing: 404, as for an absent sample.
        let blind = try await makeToken(db.path, ["--name", "blind", "--read", "stepCount", "--write", "stepCount"])
        let hidden = try await server.request("DELETE", "/v1/samples/\(hr.uuid.uuidString)", token: blind)
        #expect(hidden.status == 404)
        #expect(try db.open().samples(SampleQuery(type: .heartRate)).count == 1)
        #expect(await offThread { server.stop() } == 0, "\(server.stderr)")
    }

    @Test("no token, a bad one, a revoked one, an expired one: 401 alike; /metrics needs admin or metrics")
    func authentication() async throws {
        let db = TempStore()
        let server = try await ServeProcess.start(db: db.path)
        let reader = try await makeToken(db.path, ["--name", "reader", "--read", "all"])
        let none = try await server.get("/v1/types", token: nil)
        #expect(none.status == 401)
        #expect(none.error.contains("needs a bearer token"))
        let bad = try await server.get("/v1/types", token: "hg_0000000000000000_" + String(repeating: "0", count: 64))
        #expect(bad.status == 401)
        #expect(bad.error.contains("not valid"))
        #expect(!server.stderr.contains("hg_0000000000000000"), "the token is not logged")

        let forbidden = try await server.get("/metrics", token: reader)
        #expect(forbidden.status == 403)
        let metricsToken = try await makeToken(db.path, ["--name", "prom", "--metrics"])
        let metrics = try await server.get("/metrics", token: metricsToken)
        #expect(metrics.status == 200)
        #expect(metrics.body.contains("healthgate_http_auth_failures_total 2"), "\(metrics.body)")
        #expect(metrics.body.contains("healthgate_store_file_size_bytes"))
        let admin = try await makeToken(db.path, ["--name", "ops", "--admin"])
        #expect(try await server.get("/metrics", token: admin).status == 200)

        _ = try await CLI.run(["token", "revoke", "reader", "--db", db.path])
        #expect(try await server.get("/v1/types", token: reader).status == 401, "revocation takes effect at once")
        let short = try await makeToken(db.path, ["--name", "short", "--read", "all", "--expires", "1s"])
        try await Task.sleep(for: .seconds(1.5))
        #expect(try await server.get("/v1/types", token: short).status == 401)
        #expect(await offThread { server.stop() } == 0, "\(server.stderr)")
    }

    @Test("repeated failures from one address are slowed down; a good token from it clears the brake")
    func brake() async throws {
        let db = TempStore()
        let server = try await ServeProcess.start(db: db.path)
        let good = try await makeToken(db.path, ["--name", "good", "--read", "all"])
        for _ in 0..<6 { _ = try await server.get("/v1/types", token: "wrong") }
        // After 6 failures the next request waits 100 ms × 2^(6 − 4) = 400 ms first.
        let clock = ContinuousClock()
        let t0 = clock.now
        let slowed = try await server.get("/v1/types", token: "wrong")
        let waited = clock.now - t0
        #expect(slowed.status == 401)
        #expect(waited >= .milliseconds(400), "a penalised address waits before its token is checked (waited \(waited))")
        print("failed-auth brake: the 7th failure waited \(waited)")
        let ok = try await server.get("/v1/types", token: good)
        #expect(ok.status == 200)
        #expect(await offThread { server.stop() } == 0, "\(server.stderr)")
    }
}
