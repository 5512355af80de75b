import Foundation
import HealthStore
import Testing
@testable import Ingest
import HealthGateTesting
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Real child processes: SIGTERM mid-ingest loses nothing; SIGKILL mid-ingest leaves a sound
/// database that keeps everything committed before the kill.
@Suite(.serialized) struct ShutdownTests {
    func rows(_ path: String) throws -> Int {
        let store = try HealthStore(path: path)
        return try store.withConnection { db in
            // Rows of their own plus the quantities of series (strap heart rate).
            let s = try db.prepare("SELECT (SELECT count(*) FROM samples) + (SELECT coalesce(sum(count), 0) FROM series)", cached: false)
            _ = try s.step()
            return Int(s.int64(0))
        }
    }

    func integrity(_ path: String) throws -> String? {
        let store = try HealthStore(path: path)
        return try store.withConnection { db in
            let s = try db.prepare("PRAGMA integrity_check", cached: false)
            _ = try s.step()
            return s.string(0)
        }
    }

    @Test func sigtermMidIngestCommitsEverythingPushed() async throws {
        let db = tempDBPath("term")
        let child = try Child(["demo", "--db", db, "--duration", "0", "--straps", "6", "--rate", "100",
                               "--pedometers", "1", "--json"])
        #expect(await eventually { ((try? rows(db)) ?? 0) >= 300 }, "the demo never committed anything: \(child.stderr)")
        child.signal(SIGTERM)
        let status = await offThread { child.wait() }
        #expect(status == 0, "\(child.stderr)")
        let line = try #require(child.stdout.split(separator: "\n").last, "no JSON summary: \(child.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let pushed = try #require(summary["pushed"] as? Int)
        let committed = try #require(summary["committed"] as? Int)
        #expect(pushed > 0)
        #expect(committed == pushed, "SIGTERM lost \(pushed - committed) samples")
        #expect(summary["dropped"] as? Int == 0)
        #expect(try rows(db) == committed)
        #expect(try integrity(db) == "ok")
    }

    @Test func sigkillMidIngestLeavesASoundDatabaseWithEverythingCommitted() async throws {
        let db = tempDBPath("kill")
        let child = try Child(["demo", "--db", db, "--duration", "0", "--straps", "8", "--rate", "200",
                               "--pedometers", "1", "--flush-ms", "100", "--json"])
        #expect(await eventually { ((try? rows(db)) ?? 0) >= 1_000 }, "the demo never committed anything: \(child.stderr)")
        let before = try rows(db)
        child.signal(SIGKILL)
        #expect(await offThread { child.wait() } == 128 + SIGKILL)
        #expect(try integrity(db) == "ok")
        // Everything committed before the kill is still there; what was lost is at most what
        // had not been committed yet (one flush window), which no row count can show here.
        #expect(try rows(db) >= before)
    }
}
