import Foundation
import HealthModel
import Testing
@testable import HealthStore

/// Migration 7 (the HTTP API's tokens) from a store at the schema before it: the migrations up to
/// it applied by hand, as the build before this one did, with samples and a tombstone written in SQL.
@Suite("Migration → access tokens: an older store gains the token table and keeps every sample, anchor and tombstone")
struct TokenMigrationTests {
    /// Where the token migration sits in the list (others may be appended after it).
    static var tokenMigration: Int {
        get throws { try #require(Schema.migrations.firstIndex(of: AccessTokenTable.migration)) }
    }

    @Test("a store at the previous schema opens, migrates, keeps its rows and feed, and stores tokens")
    func fromPreviousSchema() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("token-migration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("old.sqlite").path
        let previous = try Self.tokenMigration
        #expect(previous >= 6, "the token migration comes after the six that shipped before it")

        // The previous schema, as that build left a store.
        do {
            let c = try Connection(path: path)
            try c.enableWAL()
            for v in 0..<previous {
                try c.execute(Schema.migrations[v])
                try c.setUserVersion(v + 1)
            }
            try c.execute("""
                INSERT INTO types(id, identifier, unit, aggregation) VALUES (7, 'stepCount', 'count', 'cumulative');
                INSERT INTO sources(id, identifier, name, version, tier, rank, first_seen) VALUES (1, 'Watch', 'Watch', NULL, 2, 1, 1793577600);
                INSERT INTO samples(uuid, type_id, value, start, "end", source_id)
                    VALUES (X'0190f1e2a3b47c5d8e9fa0b1c2d3e4f5', 7, 1000, 1793577600, 1793578200, 1);
                INSERT INTO samples(uuid, type_id, value, start, "end", source_id)
                    VALUES (X'0190f1e2a3b47c5d8e9fa0b1c2d3e4f6', 7, 50, 1793578200, 1793578260, 1);
                DELETE FROM samples WHERE uuid = X'0190f1e2a3b47c5d8e9fa0b1c2d3e4f6';
                """)
            #expect(try c.userVersion == previous)
        }

        // A read-only open does not migrate: it says so (unchanged behaviour).
        #expect(throws: StoreError.self) { try HealthStore(path: path, mode: .readOnly) }

        let store = try HealthStore(path: path)
        #expect(try store.withConnection { try $0.userVersion } == Schema.version)
        #expect(try store.accessTokens().isEmpty)
        let kept = try store.samples(SampleQuery(type: .stepCount))
        #expect(kept.map(\.quantity.value) == [1000])
        #expect(kept.first?.uuid.uuidString.lowercased() == "0190f1e2-a3b4-7c5d-8e9f-a0b1c2d3e4f5")
        let feed = try store.changes(types: [.stepCount], since: nil, limit: nil)
        #expect(feed.samples.count == 1)
        #expect(feed.deleted.map { $0.uuid.uuidString.lowercased() } == ["0190f1e2-a3b4-7c5d-8e9f-a0b1c2d3e4f6"])

        // The new table works, with a unique name.
        let row = StoredAccessToken(name: "coach", keyID: "0123456789abcdef", digest: Array(repeating: 7, count: 32),
                                    read: ["heartRate"], write: [], admin: false, metrics: true,
                                    created: Date(timeIntervalSince1970: 1_793_577_600), expires: nil)
        try store.insertAccessToken(row)
        #expect(try store.accessToken(keyID: "0123456789abcdef") == row)
        #expect(throws: StoreError.self) { try store.insertAccessToken(row) }
        #expect(try store.deleteAccessToken(name: "coach"))
        #expect(try store.deleteAccessToken(name: "coach") == false)
    }
}
