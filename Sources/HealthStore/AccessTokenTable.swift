import Foundation

/// One bearer token of the HTTP API as the store keeps it (issue 13, docs/http-api.md): never
/// the secret, only its SHA-256 digest, looked up by the token's public key id.
package struct StoredAccessToken: Sendable, Hashable {
    /// The name a person gave it (`token create --name coach`); unique in the store.
    package var name: String
    /// The public part of the token that finds its row (16 lowercase hex digits).
    package var keyID: String
    /// SHA-256 of the whole token text (32 bytes).
    package var digest: [UInt8]
    /// Type identifiers it may read; `["*"]` for every type.
    package var read: [String]
    /// Type identifiers it may write and delete; `["*"]` for every type.
    package var write: [String]
    /// May read `/metrics` and manage tokens.
    package var admin: Bool
    /// May read `/metrics` (without being admin).
    package var metrics: Bool
    package var created: Date
    /// After this instant the token is refused; nil: never expires.
    package var expires: Date?

    package init(name: String, keyID: String, digest: [UInt8], read: [String], write: [String],
                 admin: Bool, metrics: Bool, created: Date, expires: Date?) {
        self.name = name
        self.keyID = keyID
        self.digest = digest
        self.read = read
        self.write = write
        self.admin = admin
        self.metrics = metrics
        self.created = created
        self.expires = expires
    }
}

/// The `access_tokens` table: migration 7 and its reads and writes. The `AccessTokens` module
/// makes secrets and decides what a token may do; this file only stores rows.
enum AccessTokenTable {
    /// Migration 7 (issue 13): the HTTP API's bearer tokens. Adds a table, moves nothing.
    static let migration = """
        CREATE TABLE access_tokens(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            key_id TEXT NOT NULL UNIQUE,    -- the token's public part, to find the row
            digest BLOB NOT NULL,           -- SHA-256 of the whole token; the secret is never stored
            read_types TEXT NOT NULL,       -- comma-separated type identifiers, or *
            write_types TEXT NOT NULL,
            admin INTEGER NOT NULL,
            metrics INTEGER NOT NULL,
            created REAL NOT NULL,
            expires REAL                    -- NULL: never
        );
        """
}

extension HealthStore {
    /// Stores a new token. A name already used is ``StoreError/invalidQuery(_:)`` with a sentence.
    package func insertAccessToken(_ t: StoredAccessToken) throws {
        try write { w in
            let db = w.connection
            let exists = try db.prepare("SELECT 1 FROM access_tokens WHERE name = ?", cached: false)
            exists.bind(1, t.name)
            if try exists.step() {
                throw StoreError.invalidQuery("a token named '\(t.name)' exists already: revoke it first ('healthgate token revoke \(t.name)') or choose another name")
            }
            let st = try db.prepare("""
                INSERT INTO access_tokens(name, key_id, digest, read_types, write_types, admin, metrics, created, expires)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, cached: false)
            st.bind(1, t.name)
            st.bind(2, t.keyID)
            st.bind(3, Data(t.digest))
            st.bind(4, t.read.joined(separator: ","))
            st.bind(5, t.write.joined(separator: ","))
            st.bind(6, t.admin ? 1 : 0)
            st.bind(7, t.metrics ? 1 : 0)
            st.bind(8, t.created.timeIntervalSince1970)
            st.bind(9, t.expires?.timeIntervalSince1970)
            try st.run()
        }
    }

    /// Every token, by name.
    package func accessTokens() throws -> [StoredAccessToken] {
        try read { db in
            let st = try db.prepare("\(Self.tokenSelect) ORDER BY name", cached: false)
            var out: [StoredAccessToken] = []
            while try st.step() { out.append(Self.token(st)) }
            return out
        }
    }

    /// The token whose public key id is `keyID`, if any.
    package func accessToken(keyID: String) throws -> StoredAccessToken? {
        try read { db in
            let st = try db.prepare("\(Self.tokenSelect) WHERE key_id = ?")
            defer { st.reset() }
            st.bind(1, keyID)
            return try st.step() ? Self.token(st) : nil
        }
    }

    /// Deletes the token named `name`; returns whether one existed.
    package func deleteAccessToken(name: String) throws -> Bool {
        try write { w in
            let st = try w.connection.prepare("DELETE FROM access_tokens WHERE name = ?", cached: false)
            st.bind(1, name)
            try st.run()
            return w.connection.changes > 0
        }
    }

    private static let tokenSelect =
        "SELECT name, key_id, digest, read_types, write_types, admin, metrics, created, expires FROM access_tokens"

    private static func token(_ st: Statement) -> StoredAccessToken {
        func list(_ c: Int32) -> [String] { (st.string(c) ?? "").split(separator: ",").map(String.init) }
        return StoredAccessToken(
            name: st.string(0) ?? "", keyID: st.string(1) ?? "", digest: Array(st.data(2) ?? Data()),
            read: list(3), write: list(4), admin: st.int(5) != 0, metrics: st.int(6) != 0,
            created: Date(timeIntervalSince1970: st.double(7)),
            expires: st.optionalDouble(8).map(Date.init(timeIntervalSince1970:)))
    }
}
