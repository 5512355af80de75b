import Foundation
import HealthModel

/// The `workouts` table: migration 10 and its reads and writes (issue 15, docs/workouts.md).
/// A row is what the user marked — activity, start, end, pauses, devices — never totals: those
/// are computed from the samples (module `WorkoutSummary`), so deleting a workout keeps them.
enum WorkoutTable {
    /// Migration 10: workouts and their change positions. Adds tables, moves nothing.
    static let migration = """
        CREATE TABLE workouts(
            id INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL UNIQUE,
            activity TEXT NOT NULL,         -- HKWorkoutActivityType's Swift name
            start REAL NOT NULL,            -- Unix seconds
            "end" REAL,                     -- NULL while in progress
            events TEXT NOT NULL,           -- "pause@<Unix seconds> resume@<…> …", in time order ('' for none)
            devices TEXT NOT NULL,          -- JSON [name, …] in priority order; [] = every device
            source_identifier TEXT NOT NULL,
            source_name TEXT NOT NULL,
            source_version TEXT,
            position INTEGER NOT NULL       -- its last change's position (workoutChanges)
        );
        CREATE INDEX workouts_start ON workouts(start);
        CREATE INDEX workouts_position ON workouts(position);
        -- One sequence for every change of a workout (insert, update, delete): AUTOINCREMENT never
        -- reuses a number, so the table keeps only the latest row.
        CREATE TABLE workout_positions(position INTEGER PRIMARY KEY AUTOINCREMENT);
        CREATE TABLE workout_tombstones(
            position INTEGER PRIMARY KEY,
            uuid BLOB NOT NULL,
            deleted_at REAL NOT NULL
        );
        """

    /// The next change position (write transaction held).
    static func nextPosition(_ db: Connection) throws -> Int64 {
        try db.prepare("INSERT INTO workout_positions DEFAULT VALUES", cached: false).run()
        let p = db.lastInsertRowID
        let prune = try db.prepare("DELETE FROM workout_positions WHERE position < ?", cached: false)
        prune.bind(1, p)
        try prune.run()
        return p
    }

    static let columns = #"uuid, activity, start, "end", events, devices, source_identifier, source_name, source_version"#
    static let select = "SELECT \(columns) FROM workouts"

    static func workout(_ st: Statement) throws -> Workout {
        guard let uuid = st.uuid(0), let activity = WorkoutActivityType(name: st.string(1) ?? "") else {
            throw StoreError.corruptRow("a workout row has no valid UUID or activity type (\(st.string(1) ?? "NULL"))")
        }
        var events: [WorkoutEvent] = []
        for token in (st.string(4) ?? "").split(separator: " ") {
            let parts = token.split(separator: "@")
            guard parts.count == 2, let k = WorkoutEvent.Kind(rawValue: String(parts[0])), let t = Double(parts[1]) else {
                throw StoreError.corruptRow("workout \(uuid.uuidString) has an event that is not kind@seconds: '\(token)'")
            }
            events.append(WorkoutEvent(k, at: Date(timeIntervalSince1970: t)))
        }
        let devices = (try? JSONSerialization.jsonObject(with: Data((st.string(5) ?? "[]").utf8)) as? [String]) ?? []
        return Workout(uuid: uuid, activity: activity, start: Date(timeIntervalSince1970: st.double(2)),
                       end: st.optionalDouble(3).map(Date.init(timeIntervalSince1970:)), events: events, devices: devices,
                       source: Source(name: st.string(7) ?? "", identifier: st.string(6), version: st.string(8)))
    }

    /// The events as text: Swift's shortest decimal of each time gives back the very same
    /// Double (a JSON number through JSONSerialization did not, at a millisecond).
    static func eventsText(_ events: [WorkoutEvent]) -> String {
        events.map { "\($0.kind.rawValue)@\($0.date.timeIntervalSince1970)" }.joined(separator: " ")
    }

    static func devicesJSON(_ devices: [String]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: devices), as: UTF8.self)
    }

    /// Why `events` cannot belong to a workout from `start` to `end`, or nil when they can: they
    /// alternate pause and resume, beginning with a pause, in time order, within the workout.
    static func problem(events: [WorkoutEvent], start: Date, end: Date?) -> String? {
        var previous = start
        for (i, e) in events.enumerated() {
            let expected: WorkoutEvent.Kind = i % 2 == 0 ? .pause : .resume
            if e.kind != expected {
                return e.kind == .pause ? "it is paused already (since \(ISO8601.string(previous))): resume it first"
                                        : "it is not paused: there is nothing to resume"
            }
            if e.date < previous {
                return "a \(e.kind.rawValue) at \(ISO8601.string(e.date)) would come before \(i == 0 ? "its start" : "its last event") at \(ISO8601.string(previous))"
            }
            if let end, e.date > end {
                return "a \(e.kind.rawValue) at \(ISO8601.string(e.date)) would come after its end at \(ISO8601.string(end))"
            }
            previous = e.date
        }
        return nil
    }
}

/// One page of ``HealthStore/workoutChanges(after:limit:)``.
public struct WorkoutChanges: Sendable {
    /// Workouts added or changed, each as it is now, in change order.
    public var workouts: [Workout]
    /// Workouts deleted.
    public var deleted: [UUID]
    /// The position that covers this page: ask again after it.
    public var position: Int64
    /// True when the limit cut the page short.
    public var hasMore: Bool

    /// A page of these parts.
    public init(workouts: [Workout], deleted: [UUID], position: Int64, hasMore: Bool) {
        self.workouts = workouts
        self.deleted = deleted
        self.position = position
        self.hasMore = hasMore
    }
}

extension HealthStore {
    /// Stores a workout that has started (`end` nil) or one that is complete (an import).
    ///
    /// Two workouts in progress may not share a device, and a workout over every device (no
    /// devices) excludes any other in progress: a sample must count in one workout. A workout
    /// whose UUID is stored already is left as it is and `false` returned (importing twice adds
    /// nothing).
    /// - Throws: ``StoreError/invalidQuery(_:)`` with a sentence for a conflict or events that
    ///   do not alternate; ``StoreError`` on database errors.
    @discardableResult
    public func saveWorkout(_ w: Workout) throws -> Bool {
        try write { try $0.saveWorkout(w) }
    }

    /// The workout with this UUID, if stored.
    public func workout(uuid: UUID) throws -> Workout? {
        try read { db in
            let st = try db.prepare("\(WorkoutTable.select) WHERE uuid = ?", cached: false)
            st.bind(1, uuid)
            return try st.step() ? WorkoutTable.workout(st) : nil
        }
    }

    /// Workouts that overlap `[from, to)`, by start: a workout in progress reaches on without end,
    /// one that ended where it started counts when `from ≤ start < to`. Nil bounds are open.
    public func workouts(from: Date? = nil, to: Date? = nil) throws -> [Workout] {
        try read { db in
            let st = try db.prepare("""
                \(WorkoutTable.select) WHERE start < coalesce(?, 1e300)
                  AND (coalesce("end", 1e300) > coalesce(?, -1e300) OR ("end" = start AND start >= coalesce(?, -1e300)))
                ORDER BY start, id
                """, cached: false)
            st.bind(1, to?.timeIntervalSince1970)
            st.bind(2, from?.timeIntervalSince1970)
            st.bind(3, from?.timeIntervalSince1970)
            var out: [Workout] = []
            while try st.step() { out.append(try WorkoutTable.workout(st)) }
            return out
        }
    }

    /// Workouts in progress, oldest first; with `device`, only those it counts in (and those
    /// over every device).
    public func workoutsInProgress(device: String? = nil) throws -> [Workout] {
        try read { db in
            let st = try db.prepare("\(WorkoutTable.select) WHERE \"end\" IS NULL ORDER BY start, id", cached: false)
            var out: [Workout] = []
            while try st.step() { out.append(try WorkoutTable.workout(st)) }
            guard let device else { return out }
            return out.filter { $0.devices.isEmpty || $0.devices.contains(device) }
        }
    }

    /// Adds a pause or resume to the workout in progress `uuid`, or ends it (`end`). Returns the
    /// workout as stored afterwards.
    /// - Throws: ``StoreError/notFound(_:)`` when no workout has that UUID;
    ///   ``StoreError/invalidQuery(_:)`` when it has ended, or the event does not follow
    ///   (a pause while paused, a time before its last event).
    @discardableResult
    public func updateWorkout(uuid: UUID, adding event: WorkoutEvent? = nil, end: Date? = nil) throws -> Workout {
        try write { wr in
            let db = wr.connection
            let find = try db.prepare("\(WorkoutTable.select) WHERE uuid = ?", cached: false)
            find.bind(1, uuid)
            guard try find.step() else { throw StoreError.notFound("no workout \(uuid.uuidString) in this store ('healthgate workouts' lists them)") }
            var w = try WorkoutTable.workout(find)
            if let e = w.end {
                throw StoreError.invalidQuery("workout \(uuid.uuidString) ended at \(ISO8601.string(e)); start a new one with 'healthgate workout start'")
            }
            if let event { w.events.append(event) }
            if let end {
                if end < w.start {
                    throw StoreError.invalidQuery("workout \(uuid.uuidString) started at \(ISO8601.string(w.start)); it cannot end before that (\(ISO8601.string(end)))")
                }
                w.end = end
            }
            if let p = WorkoutTable.problem(events: w.events, start: w.start, end: w.end) {
                throw StoreError.invalidQuery("workout \(uuid.uuidString): \(p)")
            }
            let st = try db.prepare("UPDATE workouts SET events = ?, \"end\" = ?, position = ? WHERE uuid = ?", cached: false)
            st.bind(1, WorkoutTable.eventsText(w.events))
            st.bind(2, w.end?.timeIntervalSince1970)
            st.bind(3, try WorkoutTable.nextPosition(db))
            st.bind(4, uuid)
            try st.run()
            return w
        }
    }

    /// Deletes the workout `uuid` and nothing else: its samples stay (as in HealthKit). A
    /// tombstone tells ``workoutChanges(after:limit:)`` readers. Returns whether it existed.
    public func deleteWorkout(uuid: UUID) throws -> Bool {
        try write { wr in
            let db = wr.connection
            let st = try db.prepare("DELETE FROM workouts WHERE uuid = ?", cached: false)
            st.bind(1, uuid)
            try st.run()
            guard db.changes > 0 else { return false }
            let tomb = try db.prepare("INSERT INTO workout_tombstones(position, uuid, deleted_at) VALUES (?, ?, ?)", cached: false)
            tomb.bind(1, try WorkoutTable.nextPosition(db))
            tomb.bind(2, uuid)
            tomb.bind(3, Date().timeIntervalSince1970)
            try tomb.run()
            return true
        }
    }

    /// The position of the latest workout change (0 when none): a reader's position above it
    /// comes from another store or an older copy of this one.
    public func workoutPosition() throws -> Int64 {
        try read { db in
            let head = try db.prepare("SELECT coalesce(max(position), 0) FROM workout_positions", cached: false)
            _ = try head.step()
            return head.int64(0)
        }
    }

    /// ``workoutChanges(after:limit:)`` from an anchor text (`w1:<store id>:<position>`, as this
    /// returns; nil: from the beginning), with the anchor that continues after the page.
    /// - Throws: ``ChangeFeedError/invalidAnchor(_:)`` for text that is not such an anchor;
    ///   ``ChangeFeedError/anchorNotFromThisStore(anchor:reason:)`` (resynchronise) for another
    ///   store's anchor or one ahead of this store (a file restored from an older copy).
    public func workoutChanges(since anchor: String?, limit: Int? = nil) throws -> (changes: WorkoutChanges, anchor: String) {
        let storeID = try currentAnchor().storeID
        var after: Int64 = 0
        if let anchor {
            let parts = anchor.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "w1", let p = Int64(parts[2]), p >= 0 else { throw ChangeFeedError.invalidAnchor(anchor) }
            guard parts[1] == storeID else {
                throw ChangeFeedError.anchorNotFromThisStore(anchor: anchor, reason: "it was made by store \(parts[1]), this is \(storeID)")
            }
            guard p <= (try workoutPosition()) else {
                throw ChangeFeedError.anchorNotFromThisStore(anchor: anchor, reason: "it is ahead of this store's workout changes: a file restored from an older copy?")
            }
            after = p
        }
        let page = try workoutChanges(after: after, limit: limit)
        return (page, "w1:\(storeID):\(page.position)")
    }

    /// What changed in the workouts after `position` (0: from the beginning), in change order:
    /// each workout once, as it is now, and the UUIDs of those deleted (HealthKit's anchored
    /// query for the workout type). `limit` bounds the items; ``WorkoutChanges/position``
    /// covers exactly what is returned, so asking again from it continues without a gap.
    public func workoutChanges(after position: Int64, limit: Int? = nil) throws -> WorkoutChanges {
        if let limit, limit < 1 { throw ChangeFeedError.invalidLimit(limit) }
        return try readSnapshot { db in
            let lim = limit.map { " LIMIT \($0 + 1)" } ?? ""
            var items: [(Int64, Workout?, UUID?)] = []
            let st = try db.prepare("SELECT \(WorkoutTable.columns), position FROM workouts WHERE position > ? ORDER BY position\(lim)", cached: false)
            st.bind(1, position)
            while try st.step() { items.append((st.int64(9), try WorkoutTable.workout(st), nil)) }
            let del = try db.prepare("SELECT position, uuid FROM workout_tombstones WHERE position > ? ORDER BY position\(lim)", cached: false)
            del.bind(1, position)
            while try del.step() {
                guard let u = del.uuid(1) else { throw StoreError.corruptRow("a workout tombstone's uuid is not 16 bytes") }
                items.append((del.int64(0), nil, u))
            }
            items.sort { $0.0 < $1.0 }
            var out = WorkoutChanges(workouts: [], deleted: [], position: position, hasMore: false)
            if let limit, items.count > limit {
                items = Array(items.prefix(limit))
                out.hasMore = true
            }
            if out.hasMore {
                out.position = items.last?.0 ?? position
            } else {
                // Everything up to the sequence's head, read in the same snapshot: a position
                // a later change takes is above it.
                let head = try db.prepare("SELECT coalesce(max(position), 0) FROM workout_positions", cached: false)
                _ = try head.step()
                out.position = max(position, head.int64(0))
            }
            for (_, w, u) in items {
                if let w { out.workouts.append(w) }
                if let u { out.deleted.append(u) }
            }
            return out
        }
    }
}

extension StoreWriter {
    /// ``HealthStore/saveWorkout(_:)`` inside this write transaction (an import's batch).
    @discardableResult
    package func saveWorkout(_ w: Workout) throws -> Bool {
        if let end = w.end, end < w.start {
            throw StoreError.invalidQuery("a workout cannot end (\(ISO8601.string(end))) before it starts (\(ISO8601.string(w.start)))")
        }
        if let p = WorkoutTable.problem(events: w.events, start: w.start, end: w.end) {
            throw StoreError.invalidQuery("workout \(w.uuid.uuidString): \(p)")
        }
        let db = connection
        let exists = try db.prepare("SELECT 1 FROM workouts WHERE uuid = ?", cached: false)
        exists.bind(1, w.uuid)
        if try exists.step() { return false }
        if w.end == nil {
            let open = try db.prepare("\(WorkoutTable.select) WHERE \"end\" IS NULL ORDER BY start", cached: false)
            while try open.step() {
                let other = try WorkoutTable.workout(open)
                let shared = w.devices.isEmpty || other.devices.isEmpty || !Set(w.devices).isDisjoint(with: other.devices)
                if shared {
                    let whose = other.devices.isEmpty ? "over every device" : "with \(other.devices.joined(separator: ", "))"
                    throw StoreError.invalidQuery(
                        "a \(other.activity.rawValue) workout \(whose) is in progress since \(ISO8601.string(other.start)) (\(other.uuid.uuidString)): stop it first ('healthgate workout stop \(other.uuid.uuidString)'), or give each workout its own --device")
                }
            }
        }
        let position = try WorkoutTable.nextPosition(db)
        let st = try db.prepare("""
            INSERT INTO workouts(uuid, activity, start, "end", events, devices, source_identifier, source_name, source_version, position)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, cached: false)
        st.bind(1, w.uuid)
        st.bind(2, w.activity.rawValue)
        st.bind(3, w.start.timeIntervalSince1970)
        st.bind(4, w.end?.timeIntervalSince1970)
        st.bind(5, WorkoutTable.eventsText(w.events))
        st.bind(6, try WorkoutTable.devicesJSON(w.devices))
        st.bind(7, w.source.identifier)
        st.bind(8, w.source.name)
        st.bind(9, w.source.version)
        st.bind(10, position)
        try st.run()
        return true
    }
}
