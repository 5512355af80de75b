import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

/// `/v1/tokens`: an admin token manages tokens over the API, with the CLI's registry and shapes.
@Suite("Token management over the API: admin only, the CLI's JSON, the secret once, revocation at once", .serialized)
struct TokenAPITests {
    @Test("an admin creates, lists and revokes tokens; what it makes works with exactly its scopes; the list equals `token list --json`")
    func adminManagesTokens() async throws {
        let db = TempStore()
        try db.open().save([try heartRate(70, at: 0), try steps(100, at: 0)])
        let server = try await ServeProcess.start(db: db.path)
        let admin = try await makeToken(db.path, ["--name", "root", "--admin"])

        let body = Data(#"{"name": "coach", "read": ["stepCount"], "write": "stepCount", "expires": "30d"}"#.utf8)
        let made = try await server.request("POST", "/v1/tokens", token: admin, body: body)
        #expect(made.status == 201, "\(made.body)")
        let object = try #require(made.object)
        let secret = try #require(object["token"] as? String)
        #expect(secret.hasPrefix("hg_"))
        #expect(object["read"] as? [String] == ["stepCount"] && object["write"] as? [String] == ["stepCount"])
        #expect(object["admin"] as? Bool == false && object["metrics"] as? Bool == false)
        let expires = try #require((object["expires"] as? String).flatMap { try? ISO8601.parse($0, localTimeZone: nil) })
        #expect(abs(expires.timeIntervalSinceNow - 30 * 86_400) < 600)

        // The new token reads steps and sees no heart rate (an empty answer, not a 403).
        let stepsSeen = try await server.get("/v1/samples?type=stepCount", token: secret)
        #expect(stepsSeen.status == 200 && stepsSeen.array?.count == 1)
        let hidden = try await server.get("/v1/samples?type=heartRate", token: secret)
        #expect(hidden.status == 200 && hidden.array?.isEmpty == true, "\(hidden.body)")
        #expect(try await server.get("/v1/tokens", token: secret).status == 403)

        // The list is the CLI's, byte for byte, and never holds a secret.
        let listed = try await server.get("/v1/tokens", token: admin)
        #expect(listed.status == 200 && !listed.body.contains("hg_"))
        let cli = try await CLI.run(["token", "list", "--json", "--db", db.path])
        #expect(cli.status == 0)
        #expect(NSArray(array: listed.array ?? []) == NSArray(array: (json(cli.stdout) as? [[String: Any]]) ?? [[:]]), "\(listed.body)\n\(cli.stdout)")
        #expect(Set((listed.array ?? []).compactMap { $0["name"] as? String }) == ["root", "coach"])

        // A second token of that name is a conflict; revoking ends it at once.
        #expect(try await server.request("POST", "/v1/tokens", token: admin, body: body).status == 409)
        let revoked = try await server.request("DELETE", "/v1/tokens/coach", token: admin)
        #expect(revoked.status == 200 && revoked.object?["revoked"] as? String == "coach", "\(revoked.body)")
        #expect(try await server.get("/v1/samples?type=stepCount", token: secret).status == 401)
        #expect(try await server.request("DELETE", "/v1/tokens/coach", token: admin).status == 404)
        #expect(await offThread { server.stop() } == 0)
    }

    @Test("without admin it is 403 and nothing changes; bad bodies are 400 naming the field; no token is 401")
    func refusals() async throws {
        let db = TempStore()
        _ = try db.open()
        let server = try await ServeProcess.start(db: db.path)
        let admin = try await makeToken(db.path, ["--name", "root", "--admin"])
        let reader = try await makeToken(db.path, ["--name", "reader", "--read", "all", "--write", "all", "--metrics"])
        let good = Data(#"{"name": "x", "read": "all"}"#.utf8)

        let forbidden = try await server.request("POST", "/v1/tokens", token: reader, body: good)
        #expect(forbidden.status == 403 && forbidden.error.contains("admin"), "\(forbidden.body)")
        #expect(try await server.request("DELETE", "/v1/tokens/root", token: reader).status == 403)
        #expect(try await server.get("/v1/tokens", token: nil).status == 401)
        #expect(try await server.request("POST", "/v1/tokens", token: nil, body: good).status == 401)

        let bad: [(String, String)] = [
            ("[1]", "JSON object"),
            (#"{"read": "all"}"#, "'name'"),
            (#"{"name": "has space"}"#, "token name"),
            (#"{"name": "y", "read": ["heartRate", "pulse"]}"#, "'pulse'"),
            (#"{"name": "y", "write": 3}"#, "'write'"),
            (#"{"name": "y", "admin": 1}"#, "'admin'"),
            (#"{"name": "y", "expires": "soon"}"#, "'expires'"),
            (#"{"name": "y", "scopes": "all"}"#, "'scopes'"),
        ]
        for (text, named) in bad {
            let r = try await server.request("POST", "/v1/tokens", token: admin, body: Data(text.utf8))
            #expect(r.status == 400 && r.error.contains(named), "\(text) → \(r.status) \(r.body)")
        }
        // Nothing was made by any of them.
        let names = Set(((try await server.get("/v1/tokens", token: admin)).array ?? []).compactMap { $0["name"] as? String })
        #expect(names == ["root", "reader"])
        #expect(await offThread { server.stop() } == 0)
    }
}
