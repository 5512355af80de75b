import AccessTokens
import Foundation
import HealthModel
import HealthStore
import Hummingbird

/// `/v1/tokens`: token management over the API, for an `admin` token (docs/http-api.md,
/// "Tokens over the API"). The same registry and JSON shapes as `healthgate token`: a pair can
/// hand a coach a read-only token from a phone without a shell on the Pi.
struct TokenRoutes: Sendable {
    let store: StoreQueue
    let registry: QuantityTypeRegistry
    let maxBodyBytes: Int

    /// `GET /v1/tokens`: every token, as `token list --json` prints them (never a secret).
    func list(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try QueryParameters(request, known: [])
        try Self.requireAdmin(context)
        let list = try await store.run { db in Unsafe(try AccessTokenRegistry(store: db, registry: registry).list().map(\.jsonObject)) }.value
        return try JSONResponse.make(list)
    }

    /// `POST /v1/tokens` with `{"name", "read", "write", "admin", "metrics", "expires"}`: `read`
    /// and `write` are type identifiers (an array, or one comma-separated string), `"all"` for
    /// every type, absent for none; `expires` a duration such as `"30d"` (absent: never). 201 with
    /// the `token create --json` object, whose `token` is the secret, shown this once.
    func create(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try QueryParameters(request, known: [])
        try Self.requireAdmin(context)
        let asked = try Self.parse(try await Routes.body(of: request, limit: maxBodyBytes), registry: registry)
        let registry = self.registry
        let made = try await store.run { db -> Unsafe<[String: Any]> in
            let tokens = AccessTokenRegistry(store: db, registry: registry)
            if try tokens.list().contains(where: { $0.name == asked.name }) {
                throw APIError(.conflict, "a token named '\(asked.name)' exists already: revoke it first (DELETE /v1/tokens/\(asked.name)) or choose another name.")
            }
            let now = Date()
            let made = try tokens.create(name: asked.name, scopes: asked.scopes,
                                         expires: asked.lifetime.map { now.addingTimeInterval($0) }, now: now)
            var object = made.info.jsonObject
            object["token"] = made.token
            return Unsafe(object)
        }.value
        var response = try JSONResponse.make(made, status: .created)
        response.headers[.cacheControl] = "no-store"   // the secret must not linger in a cache
        return response
    }

    /// `DELETE /v1/tokens/{name}`: the token stops working at once (open `/v1/live` streams of
    /// it end within about 2 s). 404 for an unknown name.
    func revoke(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try QueryParameters(request, known: [])
        try Self.requireAdmin(context)
        let name = context.parameters.get("name") ?? ""
        let registry = self.registry
        try await store.run { db in
            do { try AccessTokenRegistry(store: db, registry: registry).revoke(name: name) } catch TokenError.notFound {
                throw APIError(.notFound, "no token is named '\(name)': GET /v1/tokens lists them.")
            }
        }
        return try JSONResponse.make(["revoked": name])
    }

    static func requireAdmin(_ context: APIContext) throws {
        guard context.scopes.admin else {
            throw APIError(.forbidden, "this token may not manage tokens: that needs an admin token ('healthgate token create --admin').")
        }
    }

    /// What a `POST /v1/tokens` body asks for.
    struct Asked: Sendable {
        var name: String
        var scopes: TokenScopes
        var lifetime: TimeInterval?
    }

    /// Reads the body; every mistake is a 400 naming its field.
    static func parse(_ data: Data, registry: QuantityTypeRegistry) throws -> Asked {
        guard let o = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw APIError(.badRequest, "the request body is not a JSON object: send {\"name\": \"coach\", \"read\": [\"heartRate\"], \"expires\": \"30d\"}.")
        }
        let known: Set = ["name", "read", "write", "admin", "metrics", "expires"]
        if let bad = o.keys.sorted().first(where: { !known.contains($0) }) {
            throw APIError(.badRequest, "field '\(bad)' is not one a token takes: use \(known.sorted().joined(separator: ", ")).")
        }
        guard let name = o["name"] as? String else {
            throw APIError(.badRequest, "field 'name' is required: a name for the token, 1–64 letters, digits, '.', '_' or '-'.")
        }
        guard AccessTokenRegistry.isValidName(name) else { throw APIError(.badRequest, "\(TokenError.badName(name))") }
        func types(_ field: String) throws -> Set<String>? {
            let text: String
            switch o[field] {
            case nil: return []
            case let s as String: text = s
            case let a as [Any] where a.allSatisfy({ $0 is String }): text = a.compactMap { $0 as? String }.joined(separator: ",")
            default: throw APIError(.badRequest, "field '\(field)' is neither an array of type identifiers nor \"all\".")
            }
            do { return try TokenScopes.parseTypes(text, option: "field '\(field)':", registry: registry) } catch {
                throw APIError(.badRequest, "\(error)")
            }
        }
        func flag(_ field: String) throws -> Bool {
            guard let v = o[field] else { return false }
            // Foundation lets the numbers 0 and 1 pass `as? Bool`: they are not flags.
            guard SampleJSON.isBoolean(v), let b = v as? Bool else {
                throw APIError(.badRequest, "field '\(field)' is not true or false.")
            }
            return b
        }
        var lifetime: TimeInterval?
        if let e = o["expires"] {
            guard let text = e as? String else { throw APIError(.badRequest, "field 'expires' is not a duration such as \"30d\".") }
            do { lifetime = try InputValues.seconds(text, option: "field 'expires'") } catch { throw APIError(.badRequest, error.message) }
        }
        let scopes = TokenScopes(read: try types("read"), write: try types("write"), admin: try flag("admin"), metrics: try flag("metrics"))
        return Asked(name: name, scopes: scopes, lifetime: lifetime)
    }
}
