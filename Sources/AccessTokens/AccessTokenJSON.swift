import Foundation
import HealthModel

extension AccessTokenInfo {
    /// The JSON shape of a token, without its secret — `healthgate token list --json` and
    /// `GET /v1/tokens` print it; `token create --json` and `POST /v1/tokens` add `token`:
    /// `{"name", "read": [types or "*"], "write": […], "admin", "metrics", "created", "expires"}`
    /// (dates ISO 8601 in UTC, `expires` null for never).
    package var jsonObject: [String: Any] {
        ["name": name, "read": TokenScopes.text(scopes.read), "write": TokenScopes.text(scopes.write),
         "admin": scopes.admin, "metrics": scopes.metrics, "created": ISO8601.string(created),
         "expires": expires.map(ISO8601.string) ?? NSNull()]
    }

    /// One line for people: what it may read and write, its extra scopes, its expiry.
    package var summary: String {
        func list(_ s: Set<String>?) -> String { s.map { $0.isEmpty ? "nothing" : $0.sorted().joined(separator: ",") } ?? "all types" }
        var parts = ["reads \(list(scopes.read))", "writes \(list(scopes.write))"]
        if scopes.admin { parts.append("admin") }
        if scopes.metrics { parts.append("metrics") }
        parts.append(expires.map { "expires \(ISO8601.string($0))" } ?? "never expires")
        return parts.joined(separator: ", ")
    }
}
