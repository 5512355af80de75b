import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

/// The workouts' change feed (`workoutChanges(after:limit:)`): every insert, pause, end and
/// delete takes the next position; a reader gets each workout once, as it is now, and the
/// deleted ones' UUIDs, and continues from the position without a gap or a repeat.
@Suite struct WorkoutChangesTests {
    @Test("positions follow every change; a page continues where the last ended; a deletion is a tombstone")
    func feed() async throws {
        let s = try WorkoutTotalsTests.Scratch()
        let store = s.store
        #expect(try store.workoutChanges(after: 0).position == 0, "an empty feed stays at 0")
        let a = WorkoutTotalsTests.workout(0, nil, devices: ["A"]), b = WorkoutTotalsTests.workout(10, 20, devices: ["B"])
        try store.saveWorkout(a)
        try store.saveWorkout(b)
        let first = try store.workoutChanges(after: 0)
        #expect(first.workouts.map(\.uuid) == [a.uuid, b.uuid] && first.deleted.isEmpty && !first.hasMore && first.position == 2)
        #expect(try store.workoutChanges(after: first.position).workouts.isEmpty, "nothing new")

        try store.updateWorkout(uuid: a.uuid, adding: WorkoutEvent(.pause, at: WorkoutTotalsTests.at(5)))
        try store.updateWorkout(uuid: a.uuid, end: WorkoutTotalsTests.at(30))
        let second = try store.workoutChanges(after: first.position)
        #expect(second.workouts.count == 1 && second.workouts[0].end == WorkoutTotalsTests.at(30) && second.workouts[0].events.count == 1,
                "a workout changed twice comes once, as it is now")
        #expect(second.position == 4)

        #expect(try store.deleteWorkout(uuid: b.uuid))
        #expect(try store.saveWorkout(WorkoutTotalsTests.workout(40, 50)))
        let third = try store.workoutChanges(after: second.position)
        #expect(third.deleted == [b.uuid] && third.workouts.count == 1 && third.position == 6)
        #expect(try store.workoutChanges(after: 0).deleted == [b.uuid], "from the beginning, the tombstone too")

        // Pages of one: the same items in the same order, no gap, no repeat.
        var position: Int64 = 0, seen: [String] = [], pages = 0
        while true {
            let page = try store.workoutChanges(after: position, limit: 1)
            seen += page.workouts.map { "w:\($0.uuid)" } + page.deleted.map { "d:\($0)" }
            position = page.position
            pages += 1
            if !page.hasMore { break }
        }
        #expect(seen == ["w:\(a.uuid)", "d:\(b.uuid)", "w:\(third.workouts[0].uuid)"] && position == 6, "\(seen)")
        #expect(throws: ChangeFeedError.self) { try store.workoutChanges(after: 0, limit: 0) }
    }

    @Test("workout changes through the binary: the anchor continues; another store's anchor exits 65 with the resync advice; a malformed one 64")
    func command() async throws {
        let s = try WorkoutTotalsTests.Scratch()
        let w = WorkoutTotalsTests.workout(0, 60)
        try s.store.saveWorkout(w)
        let first = try await WorkoutTotalsTests.run(["workout", "changes", "--db", s.path])
        let page = try #require(try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any], "\(first.stderr)")
        #expect((page["workouts"] as? [[String: Any]])?.first?["uuid"] as? String == w.uuid.uuidString.lowercased())
        let anchor = try #require(page["anchor"] as? String)
        #expect(try s.store.deleteWorkout(uuid: w.uuid))
        let second = try await WorkoutTotalsTests.run(["workout", "changes", "--db", s.path, "--anchor", anchor])
        let next = try JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as? [String: Any]
        #expect(next?["deleted"] as? [String] == [w.uuid.uuidString.lowercased()] && (next?["workouts"] as? [Any])?.isEmpty == true)
        let other = try await WorkoutTotalsTests.run(["workout", "changes", "--db", s.path, "--anchor", "w1:0123456789abcdef:1"])
        #expect(other.status == 65 && other.stderr.contains("resynchronise"), "\(other.status) \(other.stderr)")
        let ahead = anchor.split(separator: ":").prefix(2).joined(separator: ":") + ":99"
        #expect(try await WorkoutTotalsTests.run(["workout", "changes", "--db", s.path, "--anchor", ahead]).status == 65, "ahead of the store")
        #expect(try await WorkoutTotalsTests.run(["workout", "changes", "--db", s.path, "--anchor", "nonsense"]).status == 64)
    }
}
