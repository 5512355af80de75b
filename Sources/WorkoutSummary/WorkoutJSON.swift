import Foundation
import HealthModel

extension Workout {
    /// The workout as the CLI prints it with `--json` (docs/workouts.md): identity, activity,
    /// times (ISO 8601 with the fraction when there is one), pauses as intervals, devices, source.
    package func json(now: Date = Date()) -> [String: Any] {
        var pauses: [[String: Any]] = []
        var open: Date?
        for e in events {
            switch e.kind {
            case .pause: open = e.date
            case .resume:
                if let o = open { pauses.append(["start": ISO8601.string(o), "end": ISO8601.string(e.date)]) }
                open = nil
            }
        }
        if let o = open { pauses.append(["start": ISO8601.string(o), "end": end.map(ISO8601.string) ?? NSNull()]) }
        return [
            "uuid": uuid.uuidString, "activity": activity.rawValue,
            "start": ISO8601.string(start), "end": end.map(ISO8601.string) ?? NSNull(),
            "state": state.rawValue,
            "pauses": pauses, "devices": devices, "source": source.name,
        ]
    }
}

extension WorkoutSummary {
    /// The workout with its totals: `duration` and `elapsed` in seconds, each total as
    /// `{"value", "unit", "device"}` or null, `heartRate`, `zones` (or `zonesNote`), and
    /// `perMinute` when computed.
    package func json(now: Date = Date()) -> [String: Any] {
        func total(_ t: Total?) -> Any {
            guard let t else { return NSNull() }
            return ["value": t.value, "unit": t.unit, "device": t.device ?? NSNull()] as [String: Any]
        }
        var o = workout.json(now: now)
        o["duration"] = duration
        o["elapsed"] = elapsed
        o["activeEnergyBurned"] = total(activeEnergy)
        o["stepCount"] = total(steps)
        o["distanceWalkingRunning"] = total(distance)
        o["heartRate"] = heartRate.map { h -> Any in
            ["average": h.average, "minimum": h.minimum, "maximum": h.maximum, "samples": h.samples,
             "unit": "count/min", "device": h.device ?? NSNull()] as [String: Any]
        } ?? NSNull()
        if let z = zones {
            o["zones"] = [
                "maximumHeartRate": z.zones.maximumHeartRate, "basis": z.zones.formula,
                "belowZone1Seconds": z.seconds[0], "unmeasuredSeconds": z.unmeasured,
                "zones": (1...5).map { k -> [String: Any] in
                    ["zone": k, "fromBpm": z.zones.lowerBound(zone: k),
                     "toBpm": k < 5 ? z.zones.lowerBound(zone: k + 1) : NSNull(), "seconds": z.seconds[k]]
                },
            ] as [String: Any]
        } else {
            o["zones"] = NSNull()
            o["zonesNote"] = zonesNote ?? NSNull()
        }
        if !minutes.isEmpty {
            o["perMinute"] = minutes.map { m -> [String: Any] in
                ["start": ISO8601.string(m.start), "average": m.average ?? NSNull(), "minimum": m.minimum ?? NSNull(),
                 "maximum": m.maximum ?? NSNull(), "samples": m.samples, "activeSeconds": m.activeSeconds]
            }
        }
        return o
    }
}
