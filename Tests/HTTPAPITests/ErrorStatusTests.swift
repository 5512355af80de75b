import Foundation
import HealthGateTesting
import HealthModel
import Testing
@testable import HealthStore

/// Every error status of the API, each a JSON object with one sentence that names what was wrong.
@Suite("HTTP API errors: 400 naming the parameter, 404, 409, 413, 503, as {\"error\": …}", .serialized)
struct ErrorStatusTests {
    @Test("bad parameters are 400 and the message names the parameter")
    func badParameters() async throws {
        let db = TempStore()
        let server = try await ServeProcess.start(db: db.path)
        let token = try await makeToken(db.path, ["--name", "all", "--read", "all", "--write", "all"])
        let cases: [(String, String)] = [
            ("/v1/samples?type=bpm", "query parameter 'type' 'bpm' is not a known quantity type"),
            ("/v1/samples?from=yesterday", "query parameter 'from'"),
            ("/v1/samples?from=2026-11-03&to=2026-11-02", "query parameter 'to'"),
            ("/v1/samples?limit=0", "query parameter 'limit'"),
            ("/v1/samples?limit=-1", "query parameter 'limit'"),
            ("/v1/samples?sort=size", "query parameter 'sort'"),
            ("/v1/samples?order=up", "query parameter 'order'"),
            ("/v1/samples?unit=kg", "query parameter 'unit' needs 'type'"),
            ("/v1/samples?type=heartRate&unit=kg", "query parameter 'unit'"),
            ("/v1/samples?colour=red", "query parameter 'colour' is not one this endpoint takes"),
            ("/v1/samples?type=heartRate&type=stepCount", "query parameter 'type' is given 2 times"),
            ("/v1/statistics", "query parameter 'type' is required"),
            ("/v1/statistics?type=heartRate&options=cumulativeSum", "query parameter 'options'"),
            ("/v1/statistics?type=heartRate&options=median", "query parameter 'options'"),
            ("/v1/statistics?type=stepCount&interval=1M", "query parameter 'interval'"),
            ("/v1/statistics?type=stepCount&interval=0d", "query parameter 'interval'"),
            ("/v1/statistics?type=stepCount&anchor=2026-11-02", "query parameter 'anchor' needs 'interval'"),
            ("/v1/statistics?type=stepCount&tz=Mars/Olympus", "query parameter 'tz'"),
            ("/v1/statistics?type=stepCount&separateBySource=maybe", "query parameter 'separateBySource'"),
            ("/v1/changes?anchor=nonsense", "query parameter 'anchor'"),
            ("/v1/changes?limit=x", "query parameter 'limit'"),
            ("/v1/changes?type=bpm", "query parameter 'type'"),
        ]
        for (path, message) in cases {
            let r = try await server.get(path, token: token)
            #expect(r.status == 400, "\(path): \(r.body)")
            #expect(r.error.contains(message), "\(path): \(r.error)")
            #expect(r.object?.count == 1, "only {\"error\": …}")
        }
        for (body, message) in [("not json", "not JSON"), ("[]", "empty array"), ("42", "neither a sample object"),
                                (#"[{"type":"stepCount","value":1,"start":"2026-11-02T00:00:00Z"}, 7]"#, "element 2"),
                                (#"{"type":"stepCount","value":"many","start":"2026-11-02T00:00:00Z"}"#, "element 1")] {
            let r = try await server.request("POST", "/v1/samples", token: token, body: Data(body.utf8))
            #expect(r.status == 400, "\(body): \(r.body)")
            #expect(r.error.contains(message), "\(body): \(r.error)")
        }
        let badUUID = try await server.request("DELETE", "/v1/samples/123", token: token)
        #expect(badUUID.status == 400)
        #expect(badUUID.error.contains("not a sample UUID"))
        #expect(await offThread { server.stop() } == 0, "\(server.stderr)")
    }

    @Test("bodies over the limit are 413, with or without a Content-Length; a body at the limit is read")
    func bodyLimit() async throws {
        let db = TempStore()
        let server = try await ServeProcess.start(db: db.path, ["--max-body-bytes", "1024"])
        let token = try await makeToken(db.path, ["--name", "w", "--read", "all", "--write", "all"])
        let one = #"{"type":"stepCount","value":1,"start":"2026-11-02T00:00:00Z","end":"2026-11-02T00:01:00Z"}"#
        let padded = one + String(repeating: " ", count: 1024 - one.utf8.count)
        #expect(padded.utf8.count == 1024)
        let atLimit = try await server.request("POST", "/v1/samples", token: token, body: Data(padded.utf8))
        #expect(atLimit.status == 200, "\(atLimit.body)")
        let over = try await server.request("POST", "/v1/samples", token: token, body: Data((padded + " ").utf8))
        #expect(over.status == 413)
        #expect(over.error.contains("larger than 1024 bytes"))
        let chunked = try await server.request("POST", "/v1/samples", token: token, body: Data((padded + "  ").utf8),
                                               headers: ["Transfer-Encoding: chunked"])
        #expect(chunked.status == 413, "\(chunked.body)")
        let tooSmall = try await CLI.run(["serve", "--db", db.path, "--max-body-bytes", "10"])
        #expect(tooSmall.status == 64)
        #expect(await offThread { server.stop() } == 0, "\(server.stderr)")
    }

    @Test("an expired anchor is 409 with the resync sentence, as `changes` exits 65")
    func expiredAnchor() async throws {
        let db = TempStore()
        let store = try db.open()
        let a = try heartRate(60, at: 0), b = try heartRate(61, at: 1)
        try store.save([a, b])
        let server = try await ServeProcess.start(db: db.path)
        let token = try await makeToken(db.path, ["--name", "all", "--read", "all"])
        let anchor = try #require(try await server.get("/v1/changes", token: token).object?["anchor"] as? String)
        try store.delete(uuids: [a.uuid])
        try store.delete(uuids: [b.uuid])
        _ = try store.pruneTombstones(olderThan: Date().addingTimeInterval(3600))
        let r = try await server.get("/v1/changes?anchor=\(anchor)", token: token)
        let cli = try await CLI.run(["changes", "--anchor", anchor, "--db", db.path])
        #expect(cli.status == 65)
        #expect(r.status == 409)
        #expect(r.error.contains("resynchronise"), "\(r.error)")
        #expect(await offThread { server.stop() } == 0, "\(server.stderr)")
    }

    @Test("a store locked by another writer answers 503 and says to retry")
    func locked() async throws {
        let db = TempStore()
        _ = try db.open()
        let server = try await ServeProcess.start(db: db.path)
        let token = try await makeToken(db.path, ["--name", "w", "--read", "all", "--write", "all"])
        let holder = try Connection(path: db.path, busyTimeoutMilliseconds: 100)
        try holder.execute("BEGIN IMMEDIATE")
        let body = Data(#"{"type":"stepCount","value":1,"start":"2026-11-02T00:00:00Z","end":"2026-11-02T00:01:00Z"}"#.utf8)
        let r = try await server.request("POST", "/v1/samples", token: token, body: body)
        try holder.execute("ROLLBACK")
        #expect(r.status == 503, "\(r.body)")
        #expect(r.error.contains("locked by another writer"))
        let retried = try await server.request("POST", "/v1/samples", token: token, body: body)
        #expect(retried.status == 200)
        #expect(await offThread { server.stop() } == 0, "\(server.stderr)")
    }
}
