import Crypto
import Foundation
import HealthModel
import HealthStore

/// What a bearer token may do, HealthKit's model (docs/http-api.md, "Authorization"): read and
/// write permission per quantity type, plus `admin` (metrics, token management) and `metrics`.
package struct TokenScopes: Sendable, Hashable {
    /// Types it may read; nil: every type.
    package var read: Set<String>?
    /// Types it may write and delete; nil: every type.
    package var write: Set<String>?
    package var admin: Bool
    package var metrics: Bool

    package init(read: Set<String>?, write: Set<String>?, admin: Bool = false, metrics: Bool = false) {
        self.read = read
        self.write = write
        self.admin = admin
        self.metrics = metrics
    }

    /// Whether samples of `type` are visible to this token.
    package func mayRead(_ type: QuantityType) -> Bool { read.map { $0.contains(type.identifier) } ?? true }

    /// Whether this token may save or delete samples of `type`.
    package func mayWrite(_ type: QuantityType) -> Bool { write.map { $0.contains(type.identifier) } ?? true }

    /// Whether `/metrics` answers this token.
    package var mayReadMetrics: Bool { admin || metrics }

    /// The scope name of workouts (HealthKit's `HKWorkoutType`): `--read workout` lets a token
    /// see workouts; their totals of a type also need that type (docs/http-api.md).
    package static let workoutType = "workout"

    /// Whether workouts are visible to this token.
    package var mayReadWorkouts: Bool { read.map { $0.contains(Self.workoutType) } ?? true }

    /// The types of `registry` this token may read, in the registry's order.
    package func readable(in registry: QuantityTypeRegistry) -> [QuantityType] { registry.all.filter(mayRead) }

    /// Parses a `--read`/`--write` list: comma-separated type identifiers (checked against
    /// `registry`, any case, and `workout`), `all` or `*` for every type, empty for none.
    /// - Throws: ``TokenError/unknownType(_:option:known:)`` naming the first bad name.
    package static func parseTypes(_ text: String, option: String, registry: QuantityTypeRegistry = .standard) throws -> Set<String>? {
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if names.contains(where: { $0 == "*" || $0.lowercased() == "all" }) { return nil }
        var out = Set<String>()
        for n in names {
            if n.lowercased() == workoutType { out.insert(workoutType); continue }
            guard let t = registry.all.first(where: { $0.identifier.lowercased() == n.lowercased() }) else {
                throw TokenError.unknownType(n, option: option, known: registry.all.map(\.identifier) + [workoutType])
            }
            out.insert(t.identifier)
        }
        return out
    }

    /// `*` for every type, else the sorted identifiers (as stored and listed).
    package static func text(_ types: Set<String>?) -> [String] { types.map { $0.sorted() } ?? ["*"] }
}

/// A token's failures, each one sentence (what, why, what to do).
package enum TokenError: Error, Sendable, CustomStringConvertible, Equatable {
    case unknownType(String, option: String, known: [String])
    case badName(String)
    case notFound(String)

    package var description: String {
        switch self {
        case .unknownType(let n, let option, let known):
            "\(option) '\(n)' is not a known quantity type: use type identifiers such as \(known.joined(separator: ", ")), or 'all'."
        case .badName(let n):
            "token name '\(n)' is not usable: use 1 to 64 letters, digits, '.', '_' or '-' (it appears in `token list` and the server's log)."
        case .notFound(let n):
            "no token is named '\(n)': `healthgate token list` shows the names."
        }
    }
}

/// One issued token: its name and scopes, without the secret.
package struct AccessTokenInfo: Sendable, Hashable {
    package var name: String
    package var scopes: TokenScopes
    package var created: Date
    package var expires: Date?

    /// Whether the token is past its expiry at `now`.
    package func isExpired(at now: Date) -> Bool { expires.map { now >= $0 } ?? false }
}

/// Makes, stores, lists, revokes and checks the HTTP API's bearer tokens.
///
/// A token reads `hg_<key id>_<secret>`: the key id (8 random bytes, hex) finds the row, the
/// secret (32 random bytes, hex) is the proof. The store keeps only SHA-256 of the whole token.
/// A fast hash is the right one here: the secret is 256 bits from the kernel's random source,
/// so nobody can guess it whatever the hash costs, and a slow password hash (bcrypt, Argon2)
/// would only add its cost to every request. Digests are compared in constant time.
package struct AccessTokenRegistry: Sendable {
    package let store: HealthStore
    package let registry: QuantityTypeRegistry

    package init(store: HealthStore, registry: QuantityTypeRegistry = .standard) {
        self.store = store
        self.registry = registry
    }

    /// The prefix every token starts with, so a leaked one is recognisable (secret scanners).
    package static let prefix = "hg_"

    /// Creates a token and returns its text — the only time it exists outside the caller.
    package func create(name: String, scopes: TokenScopes, expires: Date?, now: Date = Date()) throws -> (token: String, info: AccessTokenInfo) {
        guard Self.isValidName(name) else { throw TokenError.badName(name) }
        let keyID = Hex.string(Self.randomBytes(8))
        let token = Self.prefix + keyID + "_" + Hex.string(Self.randomBytes(32))
        try store.insertAccessToken(StoredAccessToken(
            name: name, keyID: keyID, digest: Self.digest(token),
            read: TokenScopes.text(scopes.read), write: TokenScopes.text(scopes.write),
            admin: scopes.admin, metrics: scopes.metrics, created: now, expires: expires))
        return (token, AccessTokenInfo(name: name, scopes: scopes, created: now, expires: expires))
    }

    /// Every token, by name.
    package func list() throws -> [AccessTokenInfo] { try store.accessTokens().map(Self.info) }

    /// Removes the token named `name`; it stops working at once (every request looks it up).
    package func revoke(name: String) throws {
        guard try store.deleteAccessToken(name: name) else { throw TokenError.notFound(name) }
    }

    /// The token `text` stands for, if it is one of this store's, unexpired at `now`; nil
    /// otherwise (malformed, unknown, wrong secret, revoked, expired: one answer for all, so a
    /// caller learns nothing about which part was wrong).
    package func authenticate(_ text: String, now: Date = Date()) throws -> AccessTokenInfo? {
        guard let keyID = Self.keyID(of: text), let row = try store.accessToken(keyID: keyID) else { return nil }
        guard Self.constantTimeEqual(Self.digest(text), row.digest) else { return nil }
        let info = Self.info(row)
        return info.isExpired(at: now) ? nil : info
    }

    // MARK: Pieces

    /// 1–64 of `[A-Za-z0-9._-]`.
    package static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x5F || b == 0x2D
        }
    }

    /// The key id of a well-formed token text, else nil.
    static func keyID(of text: String) -> String? {
        let parts = text.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "hg", parts[1].utf8.count == 16, parts[2].utf8.count == 64,
              (parts[1] + parts[2]).utf8.allSatisfy(isLowerHex) else { return nil }
        return String(parts[1])
    }

    private static func isLowerHex(_ b: UInt8) -> Bool { (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66) }

    /// SHA-256 of the token's UTF-8 bytes.
    package static func digest(_ token: String) -> [UInt8] { Array(SHA256.hash(data: Data(token.utf8))) }

    /// Compares two byte strings in time that depends only on their lengths, not on where
    /// they differ.
    package static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in a.indices { diff |= a[i] ^ b[i] }
        return diff == 0
    }

    private static func randomBytes(_ n: Int) -> [UInt8] {
        var g = SystemRandomNumberGenerator()   // getrandom(2) on Linux
        return (0..<n).map { _ in UInt8.random(in: .min ... .max, using: &g) }
    }


    private static func info(_ row: StoredAccessToken) -> AccessTokenInfo {
        func set(_ list: [String]) -> Set<String>? { list == ["*"] ? nil : Set(list) }
        return AccessTokenInfo(
            name: row.name,
            scopes: TokenScopes(read: set(row.read), write: set(row.write), admin: row.admin, metrics: row.metrics),
            created: row.created, expires: row.expires)
    }
}
