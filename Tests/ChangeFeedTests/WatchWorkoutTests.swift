import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

/// `healthgate watch` prints workouts as anyone starts, pauses, ends or deletes them, as
/// `/v1/live` sends them; `--type` selects them as it selects quantity types.
@Suite struct WatchWorkoutTests {
    /// The `state` of every workout and every deleted workout's UUID a `watch --json` printed.
    static func workoutLog(_ lines: [String]) -> (states: [String], deleted: [String], anchors: [String], samples: Int) {
        var states: [String] = [], deleted: [String] = [], anchors: [String] = [], samples = 0
        for line in lines {
            guard let o = jsonObject(line) else { continue }
            states += ((o["workouts"] as? [[String: Any]]) ?? []).map { $0["state"] as? String ?? "?" }
            deleted += (o["deletedWorkouts"] as? [String]) ?? []
            if let a = o["workoutAnchor"] as? String { anchors.append(a) }
            samples += ((o["samples"] as? [Any]) ?? []).count
        }
        return (states, deleted, anchors, samples)
    }

    @Test("a workout's start, pause, end and delete reach watch as they happen; --type workout gives only them, --type heartRate none; text lines say the state")
    func workoutsAsTheyHappen() async throws {
        let db = TempDB()
        let store = try db.open()
        let all = try Child(["watch", "--json", "--db", db.path])
        let only = try Child(["watch", "--json", "--type", "workout", "--db", db.path])
        let none = try Child(["watch", "--json", "--type", "heartRate", "--db", db.path])
        let text = try Child(["watch", "--db", db.path])
        for c in [all, only, none, text] { #expect(await c.waitForStderr("watching"), "\(c.stderr)") }
        #expect(all.stderr.contains("and its workouts") && !none.stderr.contains("workouts"), "\(all.stderr) | \(none.stderr)")

        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        let w = Workout(activity: .running, start: t0, source: Source(name: "HealthGate", identifier: "org.healthgate"))
        /// Waits until every watcher that follows workouts has printed these states: one change
        /// at a time, since a workout changed twice between two of a watcher's checks is printed
        /// once, as it is then (the change feed's rule).
        func printed(_ states: [String]) async -> Bool {
            let json = await all.waitUntil { Self.workoutLog($0).states == states }
            let selected = await only.waitUntil { Self.workoutLog($0).states == states }
            let lines = await text.waitUntil { $0.filter { $0.hasPrefix("* workout ") }.count == states.count }
            return json && selected && lines
        }
        try store.saveWorkout(w)
        #expect(await printed(["running"]), "\(all.outputLines) \(only.outputLines) \(text.outputLines)")
        try store.updateWorkout(uuid: w.uuid, adding: WorkoutEvent(.pause, at: t0.addingTimeInterval(60)))
        #expect(await printed(["running", "paused"]), "\(all.outputLines) \(only.outputLines) \(text.outputLines)")
        _ = try store.save([try heartRate(70, at: 90)])
        try store.updateWorkout(uuid: w.uuid, end: t0.addingTimeInterval(600))
        #expect(await printed(["running", "paused", "ended"]), "\(all.outputLines) \(only.outputLines) \(text.outputLines)")
        #expect(await all.waitUntil { Self.workoutLog($0).samples == 1 }, "\(all.outputLines)")
        _ = try store.deleteWorkout(uuid: w.uuid)
        let uuid = w.uuid.uuidString.lowercased()
        #expect(await all.waitUntil { Self.workoutLog($0).deleted == [uuid] }, "\(all.outputLines)")
        #expect(await only.waitUntil { Self.workoutLog($0).deleted == [uuid] }, "\(only.outputLines)")
        #expect(await none.waitUntil { Self.workoutLog($0).samples == 1 }, "\(none.outputLines)")
        #expect(await text.waitUntil { $0.contains { $0.hasPrefix("- deleted  workout  \(uuid)") } }, "\(text.outputLines)")
        for c in [all, only, none, text] { await c.stop() }

        let o = Self.workoutLog(only.outputLines)
        #expect(o.states == ["running", "paused", "ended"] && o.samples == 0, "\(only.outputLines)")
        let n = Self.workoutLog(none.outputLines)
        #expect(n.states.isEmpty && n.deleted.isEmpty, "\(none.outputLines)")
        // The anchor continues where watch stopped: `workout changes` from it has nothing new.
        let anchor = try #require(o.anchors.last)
        let after = try store.workoutChanges(since: anchor)
        #expect(after.changes.workouts.isEmpty && after.changes.deleted.isEmpty)
        let lines = text.outputLines
        #expect(lines.contains { $0.hasPrefix("* workout running  \(ISO8601.string(t0))  running  HealthGate  \(uuid)") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("* workout ended  \(ISO8601.string(t0))  running  ended \(ISO8601.string(t0.addingTimeInterval(600)))") }, "\(lines)")
    }

    @Test("a workout in progress when watch starts is printed first; an ended one is not")
    func inProgressAtStart() async throws {
        let db = TempDB()
        let store = try db.open()
        let source = Source(name: "HealthGate", identifier: "org.healthgate")
        let ended = Workout(activity: .cycling, start: Date(timeIntervalSince1970: 1_800_000_000), source: source)
        try store.saveWorkout(ended)
        try store.updateWorkout(uuid: ended.uuid, end: ended.start.addingTimeInterval(60))
        let running = Workout(activity: .walking, start: Date(timeIntervalSince1970: 1_800_001_000), source: source)
        try store.saveWorkout(running)
        let watch = try Child(["watch", "--json", "--db", db.path])
        let text = try Child(["watch", "--type", "workout", "--db", db.path])
        #expect(await watch.waitUntil { Self.workoutLog($0).states == ["running"] }, "\(watch.outputLines) \(watch.stderr)")
        let uuid = running.uuid.uuidString.lowercased()
        #expect(await text.waitUntil { $0.contains { $0.hasPrefix("* workout running") && $0.hasSuffix(uuid) } }, "\(text.outputLines)")
        // Its next change comes as any other, after the first line.
        try store.updateWorkout(uuid: running.uuid, end: running.start.addingTimeInterval(120))
        #expect(await watch.waitUntil { Self.workoutLog($0).states == ["running", "ended"] }, "\(watch.outputLines)")
        for c in [watch, text] { await c.stop() }
        let anchor = try #require(Self.workoutLog(watch.outputLines).anchors.last)
        #expect(try store.workoutChanges(since: anchor).changes.workouts.isEmpty)
    }

    @Test("--from-start prints every workout already stored, as it is now")
    func fromStart() async throws {
        let db = TempDB()
        let store = try db.open()
        let source = Source(name: "HealthGate", identifier: "org.healthgate")
        let ended = Workout(activity: .cycling, start: Date(timeIntervalSince1970: 1_800_000_000), source: source)
        try store.saveWorkout(ended)
        try store.updateWorkout(uuid: ended.uuid, end: ended.start.addingTimeInterval(60))
        try store.saveWorkout(Workout(activity: .walking, start: Date(timeIntervalSince1970: 1_800_001_000), source: source))
        let watch = try Child(["watch", "--json", "--from-start", "--type", "workout", "--db", db.path])
        #expect(await watch.waitUntil { Self.workoutLog($0).states.count == 2 }, "\(watch.outputLines) \(watch.stderr)")
        await watch.stop()
        #expect(Self.workoutLog(watch.outputLines).states == ["ended", "running"], "\(watch.outputLines)")
    }
}
