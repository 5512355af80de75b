import Foundation
import HealthModel

/// A workout as one JSON record of an `export`/`import` file (docs/workouts.md, "Export and
/// import"): `{"kind": "workout", "uuid", "activity", "start", "end", "events": [{"kind",
/// "date"}], "devices", "source", "sourceIdentifier", "sourceVersion"}`, dates as ``ISO8601``
/// writes them (exact: export → import → export gives the same bytes). `kind` tells it from a
/// sample record, which has none.
public enum WorkoutRecordJSON {
    /// The record of `w`.
    public static func object(_ w: Workout) -> [String: Any] {
        [
            "kind": "workout", "uuid": w.uuid.uuidString.lowercased(), "activity": w.activity.rawValue,
            "start": ISO8601.string(w.start), "end": w.end.map(ISO8601.string) ?? NSNull(),
            "events": w.events.map { ["kind": $0.kind.rawValue, "date": ISO8601.string($0.date)] },
            "devices": w.devices, "source": w.source.name, "sourceIdentifier": w.source.identifier,
            "sourceVersion": w.source.version ?? NSNull(),
        ]
    }

    /// A page of the workouts' change feed as `workout changes` and `/v1/workouts/changes`
    /// answer it: `{"anchor", "workouts": [records], "deleted": [uuids], "hasMore"}`.
    public static func page(_ page: WorkoutChanges, anchor: String) -> [String: Any] {
        ["anchor": anchor, "workouts": page.workouts.map(object), "deleted": page.deleted.map { $0.uuidString.lowercased() },
         "hasMore": page.hasMore]
    }

    /// Why a workout read from a file cannot be stored (it ends before it starts, its events do
    /// not alternate within it), or nil.
    package static func problem(_ w: Workout) -> String? {
        if let end = w.end, end < w.start { return "the workout ends (\(ISO8601.string(end))) before it starts (\(ISO8601.string(w.start)))" }
        return WorkoutTable.problem(events: w.events, start: w.start, end: w.end).map { "the workout's events: \($0)" }
    }

    /// The workout a record describes, checked as the store will check it; nil when the record
    /// is not a workout's (no top-level `"kind": "workout"`: a sample, whose metadata or names
    /// may well contain those words).
    /// - Throws: ``SampleJSON/DecodeError`` naming the field that is missing or wrong, or why
    ///   the workout cannot be (its end before its start, events that do not alternate).
    public static func workout(fromLine text: String) throws -> Workout? {
        // A cheap look first: most records the fast parser declines are samples.
        guard text.contains("\"workout\""),
              let o = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              o["kind"] as? String == "workout" else { return nil }
        func date(_ key: String, _ v: Any?) throws -> Date {
            guard let s = v as? String, let d = ISO8601.date(s) else {
                throw SampleJSON.DecodeError(message: "\"\(key)\" must be an ISO 8601 date-time with Z or an offset")
            }
            return d
        }
        guard let uuid = (o["uuid"] as? String).flatMap(UUID.init(uuidString:)) else { throw SampleJSON.DecodeError(message: "\"uuid\" must be a UUID") }
        guard let activity = (o["activity"] as? String).flatMap(WorkoutActivityType.init(name:)) else {
            throw SampleJSON.DecodeError(message: "\"activity\" must be one of HealthKit's activity types (running, cycling, …)")
        }
        let end = o["end"] is NSNull || o["end"] == nil ? nil : try date("end", o["end"])
        var events: [WorkoutEvent] = []
        for e in o["events"] as? [[String: Any]] ?? [] {
            guard let k = (e["kind"] as? String).flatMap(WorkoutEvent.Kind.init(rawValue:)) else {
                throw SampleJSON.DecodeError(message: "an event's \"kind\" must be pause or resume")
            }
            events.append(WorkoutEvent(k, at: try date("events.date", e["date"])))
        }
        guard let name = o["source"] as? String else { throw SampleJSON.DecodeError(message: "missing \"source\" (a name)") }
        let w = Workout(uuid: uuid, activity: activity, start: try date("start", o["start"]), end: end, events: events,
                        devices: o["devices"] as? [String] ?? [],
                        source: Source(name: name, identifier: o["sourceIdentifier"] as? String, version: o["sourceVersion"] as? String))
        if let p = problem(w) { throw SampleJSON.DecodeError(message: p) }
        return w
    }
}
