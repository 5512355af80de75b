import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

@Suite("stats --follow: a bucket is printed again when a sample changes it, and not otherwise")
struct StatsFollowTests {
    /// The buckets of one `stats --json` line, as (start, sum).
    static func buckets(_ line: String) -> [(start: String, sum: Double?)] {
        guard let a = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [[String: Any]] else { return [] }
        return a.map { ($0["start"] as? String ?? "?", ($0["sum"] as? NSNumber)?.doubleValue) }
    }

    @Test func bucketReprintedOnlyWhenChanged() async throws {
        let db = TempDB()
        let store = try db.open()
        // Three hourly buckets from 08:00; 100 steps in the first.
        try store.save([try steps(100, at: 8 * 3600)])
        let from = ISO8601.string(at(8 * 3600)), to = ISO8601.string(at(11 * 3600))
        let child = try Child(["stats", "--type", "stepCount", "--interval", "1h", "--from", from, "--to", to,
                               "--anchor", from, "--json", "--follow", "--db", db.path])
        #expect(await child.waitUntil { $0.count >= 1 }, "no initial buckets: \(child.stderr)")
        let initial = Self.buckets(child.outputLines[0])
        #expect(initial.count == 3)
        #expect(initial.first?.sum == 100)
        let second = ISO8601.string(at(9 * 3600)), third = ISO8601.string(at(10 * 3600))

        // A sample in the second bucket: that bucket, alone, is printed again.
        let added = try steps(40, at: 9 * 3600 + 60)
        try store.save([added])
        #expect(await child.waitUntil { $0.count >= 2 }, "no update: \(child.stderr)")
        let update = Self.buckets(child.outputLines[1])
        #expect(update.map(\.start) == [second])
        #expect(update.first?.sum == 40)

        // Changes that leave every bucket as it is: another type, steps outside the range.
        try store.save([try heartRate(70, at: 9 * 3600)])
        try store.save([try steps(500, at: 20 * 3600)])
        try await Task.sleep(for: .milliseconds(500))  // give a wrong reprint a chance to appear (no timing is asserted)

        // A deletion changes the second bucket back; then a sample in the third.
        try store.delete(uuids: [added.uuid])
        try store.save([try steps(7, at: 10 * 3600)])
        #expect(await child.waitUntil { lines in lines.dropFirst(2).contains { Self.buckets($0).contains { $0.start == third } } },
                "the third bucket was never reprinted: \(child.stderr)")
        await child.stop()
        let later = child.outputLines.dropFirst(2).flatMap { Self.buckets($0) }
        // Only the second (back to empty) and the third bucket: nothing for the unchanging writes.
        #expect(later.count == 2 && Set(later.map(\.start)) == [second, third], "\(later)")
        #expect(later.first { $0.start == third }?.sum == 7)
        #expect(later.first { $0.start == second }.map { $0.sum == nil || $0.sum == 0 } == true)
    }

    @Test("without a range, every one of three adds by other processes is printed (not only the first)")
    func followsEveryAddFromOtherProcesses() async throws {
        let db = TempDB()
        #expect(try await CLI.run(["add", "--type", "stepCount", "--value", "5", "--db", db.path]).status == 0)
        let child = try Child(["stats", "--type", "stepCount", "--interval", "1h", "--json", "--follow", "--db", db.path])
        #expect(await child.waitUntil { $0.count >= 1 }, "no initial buckets: \(child.stderr)")
        // Each `add` is its own process that opens the store, commits and closes it, as a user's
        // would. The second and third used to go unseen: the follower had lost its SQLite locks
        // (see Connection.createFile), so a closing `add` checkpointed and deleted the WAL under it.
        var sums: [Double] = [5]
        for value in [1.0, 2, 3] {
            #expect(try await CLI.run(["add", "--type", "stepCount", "--value", String(value), "--db", db.path]).status == 0)
            sums.append(sums.last! + value)
            let expected = sums.count
            #expect(await child.waitUntil(seconds: 30) { $0.count >= expected }, "update \(expected - 1) never came: \(child.outputLines) \(child.stderr)")
        }
        await child.stop()
        // One bucket (all four samples are "now"), reprinted with each new total. Should the
        // hour turn between two adds, the new hour's bucket holds the later values instead.
        let printed = child.outputLines.map { Self.buckets($0).compactMap(\.sum).reduce(0, +) }
        #expect(printed.count == 4, "\(child.outputLines)")
        if Set(child.outputLines.flatMap { Self.buckets($0).map(\.start) }).count == 1 {
            #expect(printed == sums, "\(child.outputLines)")
        }
    }

    @Test func followWithoutIntervalIsAUsageError() async throws {
        let db = TempDB()
        let r = try await CLI.run(["stats", "--type", "stepCount", "--follow", "--db", db.path])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--follow needs --interval"))
    }
}
