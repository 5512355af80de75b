import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

@Suite("healthgate changes and tombstones on the command line")
struct ChangesCommandTests {
    @Test("--json round trip: everything, then only what changed (deletions as UUIDs), samples in the samples --json shape")
    func roundTrip() async throws {
        let db = TempDB()
        let store = try db.open()
        let a = try heartRate(70, at: 0), b = try heartRate(72, at: 60)
        try store.save([a, b, try steps(10, at: 0)])

        let first = try await CLI.run(["changes", "--type", "heartRate", "--json", "--db", db.path])
        #expect(first.status == 0, "\(first.stderr)")
        let o1 = try #require(jsonObject(first.stdout))
        let samples = try #require(o1["samples"] as? [[String: Any]])
        #expect(samples.compactMap { $0["uuid"] as? String } == [a, b].map { $0.uuid.uuidString.lowercased() })
        #expect(o1["deleted"] as? [String] == [])
        // The same object shape as `samples --json`.
        let listed = try await CLI.run(["samples", "--type", "heartRate", "--json", "--db", db.path])
        let arr = try #require((try? JSONSerialization.jsonObject(with: Data(listed.stdout.utf8))) as? [[String: Any]])
        #expect(Set(arr.first?.keys ?? [:].keys) == Set(samples.first?.keys ?? [:].keys))
        let anchor = try #require(o1["anchor"] as? String)

        try store.delete(uuids: [a.uuid])
        let c = try heartRate(75, at: 120)
        try store.save([c])
        let second = try await CLI.run(["changes", "--type", "heartRate", "--anchor", anchor, "--json", "--db", db.path])
        #expect(second.status == 0, "\(second.stderr)")
        let o2 = try #require(jsonObject(second.stdout))
        #expect(o2["deleted"] as? [String] == [a.uuid.uuidString.lowercased()])
        #expect((o2["samples"] as? [[String: Any]])?.compactMap { $0["uuid"] as? String } == [c.uuid.uuidString.lowercased()])
        #expect(o2["hasMore"] as? Bool == false)

        let human = try await CLI.run(["changes", "--type", "heartRate", "--anchor", anchor, "--db", db.path])
        #expect(human.stdout.contains("- deleted  heartRate  \(a.uuid.uuidString.lowercased())"))
        #expect(human.stdout.contains("anchor: v1:"))
    }

    @Test("--limit pages through the feed and the pages add up to the store")
    func limitPages() async throws {
        let db = TempDB()
        let store = try db.open()
        let all = try (0..<7).map { try heartRate(60 + Double($0), at: Double($0)) }
        try store.save(all)
        var anchor: String?
        var seen: [String] = []
        for _ in 0..<10 {
            var args = ["changes", "--limit", "3", "--json", "--db", db.path]
            if let anchor { args += ["--anchor", anchor] }
            let r = try await CLI.run(args)
            #expect(r.status == 0, "\(r.stderr)")
            let o = try #require(jsonObject(r.stdout))
            let page = (o["samples"] as? [[String: Any]] ?? []).compactMap { $0["uuid"] as? String }
            #expect(page.count <= 3)
            seen += page
            anchor = o["anchor"] as? String
            if o["hasMore"] as? Bool != true { break }
        }
        #expect(seen == all.map { $0.uuid.uuidString.lowercased() })
    }

    @Test("an expired anchor exits 65 with the resync sentence; a malformed one exits 64")
    func expiredAnchor() async throws {
        let db = TempDB()
        let store = try db.open()
        let s = try heartRate(70, at: 0)
        try store.save([s])
        let old = try store.currentAnchor().description
        try store.delete(uuids: [s.uuid])
        let pruned = try await CLI.run(["tombstones", "--older-than", "1s", "--json", "--db", db.path])
        #expect(pruned.status == 0)
        // The deletion may be less than a second old: prune it through the API if the CLI kept it.
        if (jsonObject(pruned.stdout)?["removed"] as? Int) == 0 {
            try store.pruneTombstones(olderThan: Date().addingTimeInterval(10))
        }
        let r = try await CLI.run(["changes", "--anchor", old, "--json", "--db", db.path])
        #expect(r.status == 65)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("resynchronise from scratch"))
        let bad = try await CLI.run(["changes", "--anchor", "yesterday", "--db", db.path])
        #expect(bad.status == 64)
        #expect(try await CLI.run(["changes", "--json", "--db", db.path]).status == 0)
    }

    @Test("tombstones --retention is stored and shown")
    func retention() async throws {
        let db = TempDB()
        let set = try await CLI.run(["tombstones", "--retention", "2w", "--json", "--db", db.path])
        #expect(set.status == 0, "\(set.stderr)")
        #expect((jsonObject(set.stdout)?["retentionSeconds"] as? NSNumber)?.doubleValue == Double(14 * 86_400))
        #expect(try db.open().changeFeedStatus().retention == Double(14 * 86_400))
        #expect(try await CLI.run(["tombstones", "--retention", "soon", "--db", db.path]).status == 64)
    }

    @Test("hostile numbers: a limit of Int.max, a retention past 100 years, a huge stored retention")
    func hostileNumbers() async throws {
        // Issue #17 audit: `changes --limit 9223372036854775807` trapped (limit + 1), and
        // `tombstones --retention 9223372036854775807d` stored the value, then trapped showing it.
        let db = TempDB()
        let store = try db.open()
        try store.save([try heartRate(70, at: 0)])
        let all = try await CLI.run(["changes", "--limit", "9223372036854775807", "--json", "--db", db.path])
        #expect(all.status == 0, "\(all.stderr)")
        #expect((jsonObject(all.stdout)?["samples"] as? [Any])?.count == 1)
        #expect(jsonObject(all.stdout)?["hasMore"] as? Bool == false)

        for text in ["9223372036854775807d", "1e300s", "36501d"] {
            let r = try await CLI.run(["tombstones", "--retention", text, "--db", db.path])
            #expect(r.status == 64 && r.stderr.contains("longer than 100 years"), "\(text): \(r.stderr)")
        }
        #expect(try await CLI.run(["tombstones", "--retention", "36500d", "--db", db.path]).status == 0)
        // A retention the API accepts but no duration text can show (another program, an older
        // version): shown in seconds, not a trap.
        try store.setTombstoneRetention(1e300)
        let shown = try await CLI.run(["tombstones", "--db", db.path])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("retention: 1e+300s") || shown.stdout.contains("retention: 1e300s"), "\(shown.stdout)")
    }

    @Test("every change-feed command's --help teaches with an example")
    func help() async throws {
        for cmd in ["changes", "watch", "tombstones"] {
            let r = try await CLI.run([cmd, "--help"])
            #expect(r.status == 0)
            #expect(r.stdout.contains("Example"), "\(cmd) --help has no example")
        }
    }
}
