import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

/// Every /v1 endpoint over a real socket, its answer compared with the CLI's `--json` for the same store.
@Suite("HTTP API endpoints answer what the CLI's --json prints", .serialized)
struct EndpointTests {
    @Test("types, sources, devices, samples, statistics, changes: the CLI's JSON, byte for byte")
    func sameAsCLI() async throws {
        let db = TempStore()
        let store = try db.open()
        try store.save([try heartRate(70, at: 0), try heartRate(80, at: 30), try steps(100, at: 0), try steps(50, at: 3600)])
        let server = try await ServeProcess.start(db: db.path)
        let token = try await makeToken(db.path, ["--name", "reader", "--read", "all"])
        let pairs: [(String, [String])] = [
            ("/v1/types", ["types", "--json"]),
            ("/v1/sources", ["sources", "--json"]),
            ("/v1/sources?type=stepCount", ["sources", "--type", "stepCount", "--json"]),
            ("/v1/devices", ["devices", "--json"]),
            ("/v1/samples", ["samples", "--json"]),
            ("/v1/samples?type=heartRate&sort=end&order=desc&limit=1", ["samples", "--type", "heartRate", "--sort", "end", "--desc", "--limit", "1", "--json"]),
            ("/v1/samples?type=heartRate&unit=count/s", ["samples", "--type", "heartRate", "--unit", "count/s", "--json"]),
            ("/v1/samples?from=2026-11-02T00:30:00Z", ["samples", "--from", "2026-11-02T00:30:00Z", "--json"]),
            ("/v1/statistics?type=heartRate", ["stats", "--type", "heartRate", "--json"]),
            ("/v1/statistics?type=stepCount&interval=1h&from=2026-11-02&to=2026-11-03&tz=UTC",
             ["stats", "--type", "stepCount", "--interval", "1h", "--from", "2026-11-02", "--to", "2026-11-03", "--tz", "UTC", "--json"]),
            ("/v1/statistics?type=stepCount&interval=1d&separateBySource=true&tz=Europe/Berlin&anchor=2026-11-01",
             ["stats", "--type", "stepCount", "--interval", "1d", "--separate-by-source", "--tz", "Europe/Berlin", "--anchor", "2026-11-01", "--json"]),
            ("/v1/statistics?type=heartRate&options=mostRecent,discreteMax", ["stats", "--type", "heartRate", "--option", "mostRecent,discreteMax", "--json"]),
            ("/v1/changes?type=heartRate", ["changes", "--type", "heartRate", "--json"]),
            ("/v1/changes?limit=2", ["changes", "--limit", "2", "--json"]),
        ]
        for (path, args) in pairs {
            let http = try await server.get(path, token: token)
            let cli = try await CLI.run(args + (args[0] == "types" ? [] : ["--db", db.path]))
            #expect(http.status == 200, "\(path): \(http.body)")
            #expect(cli.status == 0, "\(args): \(cli.stderr)")
            #expect(http.body == cli.stdout, "\(path) differs from healthgate \(args.joined(separator: " "))")
        }
        #expect(await offThread { server.stop() } == 0, "\(server.stderr)")
    }

    @Test("POST saves one sample or an array, idempotently; DELETE removes it and the feed shows the tombstone")
    func writeAndDelete() async throws {
        let db = TempStore()
        let server = try await ServeProcess.start(db: db.path)
        let token = try await makeToken(db.path, ["--name", "writer", "--read", "all", "--write", "stepCount"])
        let before = try await server.get("/v1/changes", token: token)
        let anchor = try #require(before.object?["anchor"] as? String)

        let one = Data(#"{"type":"stepCount","value":120,"unit":"count","start":"2026-11-02T08:00:00Z","end":"2026-11-02T08:10:00Z","source":"Phone"}"#.utf8)
        let first = try await server.request("POST", "/v1/samples", token: token, body: one)
        #expect(first.status == 200, "\(first.body)")
        #expect(first.object?["inserted"] as? Int == 1)
        let uuid = try #require((first.object?["uuids"] as? [String])?.first)
        let again = try await server.request("POST", "/v1/samples", token: token, body: one)
        #expect(again.object?["inserted"] as? Int == 0)
        #expect(again.object?["duplicates"] as? Int == 1)
        #expect((again.object?["uuids"] as? [String])?.first == uuid, "no uuid: derived from the content, as import does")

        // An array, with sync identifiers: a higher version replaces.
        let v1 = Data(#"[{"type":"stepCount","value":10,"start":"2026-11-02T09:00:00Z","end":"2026-11-02T09:01:00Z","metadata":{"syncIdentifier":"w1","syncVersion":1}},{"type":"stepCount","value":20,"start":"2026-11-02T09:01:00Z","end":"2026-11-02T09:02:00Z"}]"#.utf8)
        let arr = try await server.request("POST", "/v1/samples", token: token, body: v1)
        #expect(arr.status == 200, "\(arr.body)")
        #expect(arr.object?["inserted"] as? Int == 2)
        let v2 = Data(#"{"type":"stepCount","value":11,"start":"2026-11-02T09:00:00Z","end":"2026-11-02T09:01:00Z","metadata":{"syncIdentifier":"w1","syncVersion":2}}"#.utf8)
        let replaced = try await server.request("POST", "/v1/samples", token: token, body: v2)
        #expect(replaced.object?["replaced"] as? Int == 1, "\(replaced.body)")

        let deleted = try await server.request("DELETE", "/v1/samples/\(uuid)", token: token)
        #expect(deleted.status == 200, "\(deleted.body)")
        #expect(deleted.object?["deleted"] as? Int == 1)
        let gone = try await server.request("DELETE", "/v1/samples/\(uuid)", token: token)
        #expect(gone.status == 404)
        #expect(gone.error.contains("no sample has UUID"))

        let feed = try await server.get("/v1/changes?anchor=\(anchor)", token: token)
        #expect(feed.status == 200)
        #expect((feed.object?["deleted"] as? [String])?.contains(uuid) == true)
        #expect((feed.object?["samples"] as? [[String: Any]])?.compactMap { $0["value"] as? Double }.sorted() == [11, 20])
        let stored = try await server.get("/v1/statistics?type=stepCount", token: token)
        #expect(stored.object?["sum"] as? Double == 31)
        #expect(await offThread { server.stop() } == 0, "\(server.stderr)")
    }
}
