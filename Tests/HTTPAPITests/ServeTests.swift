import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

@Suite("healthgate serve: listening, public endpoints, graceful stop, refused addresses", .serialized)
struct ServeTests {
    @Test("healthz and the OpenAPI document need no token; SIGTERM stops it with status 0")
    func startAndStop() async throws {
        let db = TempStore()
        let server = try await ServeProcess.start(db: db.path)
        let health = try await server.get("/healthz", token: nil)
        #expect(health.status == 200)
        #expect(health.body == #"{"status":"ok"}"# + "\n")
        let doc = try await server.get("/v1/openapi.json", token: nil)
        #expect(doc.status == 200)
        #expect(doc.object?["openapi"] as? String == "3.1.0")
        let status = await offThread { server.stop() }
        #expect(status == 0, "\(server.stderr)")
        #expect(server.stderr.contains("SIGTERM: finishing requests in flight"))
    }

    @Test("a non-loopback address without --allow-plain-http is refused (64); with it, a warning is logged")
    func plainHTTP() async throws {
        let db = TempStore()
        let refused = try await CLI.run(["serve", "--db", db.path, "--listen", "0.0.0.0:0"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--allow-plain-http"))
        let bad = try await CLI.run(["serve", "--db", db.path, "--listen", "localhost"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("is not HOST:PORT"))
        let server = try await ServeProcess.start(db: db.path, ["--allow-plain-http", "--listen", "0.0.0.0:0"])
        #expect(server.stderr.contains("serving plain HTTP"))
        #expect(await offThread { server.stop() } == 0)
    }

    @Test("unknown paths are 404 and wrong methods 405, as JSON errors")
    func unknownPaths() async throws {
        let db = TempStore()
        let server = try await ServeProcess.start(db: db.path)
        let token = try await makeToken(db.path, ["--name", "all", "--read", "all"])
        let missing = try await server.get("/v1/nothing", token: token)
        #expect(missing.status == 404)
        #expect(missing.error.contains("no such endpoint"))
        let root = try await server.get("/nothing", token: nil)
        #expect(root.status == 404)
        let method = try await server.request("PUT", "/v1/types", token: token)
        #expect(method.status == 405 || method.status == 404, "\(method.body)")
        #expect(!method.error.isEmpty)
        #expect(await offThread { server.stop() } == 0, "\(server.stderr)")
    }
}
