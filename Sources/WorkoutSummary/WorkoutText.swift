import Foundation
import HealthModel
import Sysexits

extension WorkoutSummary {
    /// `h:mm:ss` for a number of seconds (rounded down to whole seconds).
    package static func clock(_ seconds: TimeInterval) -> String {
        let s = Int(max(0, seconds).rounded(.down))
        return String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
    }

    /// The totals for people, one fact per line, times in `timeZone`.
    package func lines(timeZone: TimeZone) -> [String] {
        let w = workout
        var out = ["\(w.activity.rawValue) workout \(w.uuid.uuidString)"]
        out.append("  \(Table.time(w.start, in: timeZone)) – \(w.end.map { Table.time($0, in: timeZone) } ?? (w.isPaused ? "paused" : "in progress"))")
        if !w.devices.isEmpty { out.append("  devices: \(w.devices.joined(separator: ", "))") }
        out.append("  duration \(Self.clock(duration)) (elapsed \(Self.clock(elapsed)), \(w.events.filter { $0.kind == .pause }.count) pause(s))")
        func total(_ name: String, _ t: Total?) {
            guard let t else { return }
            out.append("  \(name): \(Table.number((t.value * 10).rounded() / 10)) \(t.unit)\(t.device.map { " (\($0))" } ?? "")")
        }
        total("active energy", activeEnergy)
        total("steps", steps)
        total("distance", distance)
        if let h = heartRate {
            out.append("  heart rate: average \(Table.number((h.average * 10).rounded() / 10)), min \(Table.number(h.minimum)), max \(Table.number(h.maximum)) count/min from \(h.samples) reading(s)")
        }
        if let z = zones {
            out.append("  zones (maximum heart rate \(z.zones.formula)):")
            for k in (1...5).reversed() {
                let range = k < 5 ? "\(Table.number(z.zones.lowerBound(zone: k)))–\(Table.number(z.zones.lowerBound(zone: k + 1)))" : "≥ \(Table.number(z.zones.lowerBound(zone: k)))"
                out.append("    zone \(k) (\(range)): \(Self.clock(z.seconds[k]))")
            }
            out.append("    below zone 1: \(Self.clock(z.seconds[0])); no reading: \(Self.clock(z.unmeasured))")
        } else if let note = zonesNote {
            out.append("  zones: \(note)")
        }
        return out
    }
}
