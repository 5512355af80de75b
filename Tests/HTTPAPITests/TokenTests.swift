import AccessTokens
import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

@Suite("Bearer tokens: made once, stored as digests, checked in constant time, scoped per type")
struct TokenTests {
    @Test("create → authenticate; a wrong secret, another token's secret, revoked and expired tokens are refused alike")
    func lifecycle() throws {
        let db = TempStore()
        let tokens = AccessTokenRegistry(store: try db.open())
        let now = Date(timeIntervalSince1970: 1_793_577_600)
        let made = try tokens.create(name: "coach", scopes: TokenScopes(read: ["heartRate", "stepCount"], write: ["stepCount"]),
                                     expires: now.addingTimeInterval(3600), now: now)
        #expect(made.token.hasPrefix("hg_"))
        #expect(made.token.utf8.count == 3 + 16 + 1 + 64)
        let info = try #require(try tokens.authenticate(made.token, now: now))
        #expect(info.name == "coach")
        #expect(info.scopes.mayRead(.heartRate) && !info.scopes.mayRead(.bodyMass))
        #expect(info.scopes.mayWrite(.stepCount) && !info.scopes.mayWrite(.heartRate))
        #expect(!info.scopes.mayReadMetrics)

        // One changed secret digit: same key id, digest differs.
        var chars = Array(made.token)
        chars[chars.count - 1] = chars[chars.count - 1] == "0" ? "1" : "0"
        #expect(try tokens.authenticate(String(chars), now: now) == nil)
        // Malformed texts.
        for bad in ["", "hg_", "Bearer " + made.token, made.token.uppercased(), made.token + "0", "hg_zz_zz"] {
            #expect(try tokens.authenticate(bad, now: now) == nil, "\(bad)")
        }
        // Expiry: refused at the instant it expires, accepted a second before.
        #expect(try tokens.authenticate(made.token, now: now.addingTimeInterval(3599)) != nil)
        #expect(try tokens.authenticate(made.token, now: now.addingTimeInterval(3600)) == nil)

        // The store holds the digest, never the secret.
        let rows = try db.open().accessTokens()
        #expect(rows.count == 1)
        #expect(rows[0].digest == AccessTokenRegistry.digest(made.token))
        let file = try Data(contentsOf: URL(fileURLWithPath: db.path)) + ((try? Data(contentsOf: URL(fileURLWithPath: db.path + "-wal"))) ?? Data())
        #expect(file.range(of: Data(made.token.dropFirst(20).utf8)) == nil, "the secret is not in the database file")

        try tokens.revoke(name: "coach")
        #expect(try tokens.authenticate(made.token, now: now) == nil)
        #expect(throws: TokenError.notFound("coach")) { try tokens.revoke(name: "coach") }
    }

    @Test("constant-time comparison: equal only for equal bytes and lengths")
    func constantTime() {
        #expect(AccessTokenRegistry.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!AccessTokenRegistry.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!AccessTokenRegistry.constantTimeEqual([1, 2, 3], [1, 2]))
        #expect(!AccessTokenRegistry.constantTimeEqual([0x80], [0x00]))
        #expect(AccessTokenRegistry.constantTimeEqual([], []))
    }

    @Test("type lists: identifiers in any case, 'all' or '*' for every type, empty for none, unknown names refused by name")
    func typeLists() throws {
        #expect(try TokenScopes.parseTypes("heartrate, StepCount", option: "--read") == ["heartRate", "stepCount"])
        #expect(try TokenScopes.parseTypes("all", option: "--read") == nil)
        #expect(try TokenScopes.parseTypes("*", option: "--read") == nil)
        #expect(try TokenScopes.parseTypes("", option: "--read") == [])
        #expect(throws: TokenError.self) { try TokenScopes.parseTypes("heartRate,bpm", option: "--write") }
        do { _ = try TokenScopes.parseTypes("bpm", option: "--write") } catch {
            #expect("\(error)".contains("--write 'bpm' is not a known quantity type"))
        }
        #expect(!AccessTokenRegistry.isValidName(""))
        #expect(!AccessTokenRegistry.isValidName("a b"))
        #expect(!AccessTokenRegistry.isValidName(String(repeating: "a", count: 65)))
        #expect(AccessTokenRegistry.isValidName("coach-1.team_A"))
    }

    @Test("the CLI: create prints the secret once, list never shows it, revoke ends it; errors are sentences with sysexits codes")
    func cli() async throws {
        let db = TempStore()
        let made = try await CLI.run(["token", "create", "--name", "coach", "--read", "heartRate,stepCount",
                                      "--write", "stepCount", "--expires", "30d", "--json", "--db", db.path])
        #expect(made.status == 0, "\(made.stderr)")
        let o = try #require(json(made.stdout) as? [String: Any])
        let secret = try #require(o["token"] as? String)
        #expect(o["read"] as? [String] == ["heartRate", "stepCount"])
        #expect(o["write"] as? [String] == ["stepCount"])
        #expect(o["admin"] as? Bool == false)
        #expect(o["expires"] is String)
        #expect(try AccessTokenRegistry(store: db.open()).authenticate(secret)?.name == "coach")

        let plain = try await CLI.run(["token", "create", "--name", "ops", "--admin", "--db", db.path])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout.hasPrefix("hg_"))
        #expect(plain.stderr.contains("not shown again"))

        let list = try await CLI.run(["token", "list", "--json", "--db", db.path])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(!list.stdout.contains(secret) && !list.stdout.contains(String(secret.suffix(64))))
        let arr = try #require(json(list.stdout) as? [[String: Any]])
        #expect(arr.compactMap { $0["name"] as? String } == ["coach", "ops"])
        #expect(arr[1]["read"] as? [String] == [] && arr[1]["admin"] as? Bool == true)
        #expect(arr.allSatisfy { $0["token"] == nil })
        let table = try await CLI.run(["token", "list", "--db", db.path])
        #expect(table.stdout.contains("coach") && !table.stdout.contains(secret))

        let again = try await CLI.run(["token", "create", "--name", "coach", "--db", db.path])
        #expect(again.status == 64)
        #expect(again.stderr.contains("a token named 'coach' exists already"))
        let badType = try await CLI.run(["token", "create", "--name", "x", "--read", "bpm", "--db", db.path])
        #expect(badType.status == 64)
        #expect(badType.stderr.contains("--read 'bpm' is not a known quantity type"))
        let badName = try await CLI.run(["token", "create", "--name", "a b", "--db", db.path])
        #expect(badName.status == 64)
        let badExpiry = try await CLI.run(["token", "create", "--name", "x", "--expires", "soon", "--db", db.path])
        #expect(badExpiry.status == 64)
        #expect(badExpiry.stderr.contains("--expires 'soon' is not a duration"))

        let revoked = try await CLI.run(["token", "revoke", "coach", "--db", db.path])
        #expect(revoked.status == 0, "\(revoked.stderr)")
        #expect(try AccessTokenRegistry(store: db.open()).authenticate(secret) == nil)
        let gone = try await CLI.run(["token", "revoke", "coach", "--db", db.path])
        #expect(gone.status == 65)
        #expect(gone.stderr.contains("no token is named 'coach'"))
    }
}
