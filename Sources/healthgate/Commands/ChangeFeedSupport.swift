import ArgumentParser
import Foundation
import HealthModel
import HealthStore

// Shared pieces of the change-feed commands (issue 7): `changes`, `watch`, `tombstones`,
// `stats --follow`. docs/change-feed.md describes the feed and the exit codes.

/// The text shape of a ``ChangeSet`` (its JSON: ``ChangeSet/jsonObject()``).
enum ChangeOutput {
    /// One line per change: `+ <start> <type> <value> <unit> <source> [device] <uuid>` for an
    /// addition, `- <type> <uuid>` for a deletion (deletions first, as they apply).
    static func lines(_ c: ChangeSet) -> [String] {
        var out = c.deleted.map { "- deleted  \($0.typeIdentifier)  \($0.uuid.uuidString.lowercased())" }
        for s in c.samples {
            let value = Table.number(s.quantity.value)
            let device = s.device.flatMap { $0.name ?? $0.localIdentifier }.map { "  [\($0)]" } ?? ""
            out.append("+ \(ISO8601.string(s.startDate))  \(s.type.identifier)  \(value) \(s.quantity.unit.unitString)  "
                       + TerminalText.visible("\(s.source.name)\(device)") + "  \(s.uuid.uuidString.lowercased())")
        }
        return out
    }
}

/// Durations for people (`healthgate tombstones`); they are read by ``InputValues/seconds(_:option:)``.
enum DurationText {
    /// `2592000` → `30d`, for display.
    static func text(_ seconds: TimeInterval) -> String {
        // `Int(exactly:)`: a retention stored by an older version (or another program) may be
        // too large for Int; it is shown in seconds instead of trapping.
        for (u, m) in [("w", 604_800.0), ("d", 86_400), ("h", 3600), ("m", 60)] where seconds >= m && seconds.truncatingRemainder(dividingBy: m) == 0 {
            if let n = Int(exactly: seconds / m) { return "\(n)\(u)" }
        }
        return "\(Table.number(seconds))s"
    }
}

/// How `sources` shows each source's devices as text (their JSON: ``SourceDevice/jsonObject``).
enum SourceDeviceOutput {
    /// `Polar H10 (120), pedometer-1 (30)` or `-`.
    static func text(_ list: [SourceDevice]) -> String {
        if list.isEmpty { return "-" }
        return list.map { "\($0.alias ?? $0.device.name ?? $0.device.localIdentifier ?? "?") (\($0.sampleCount))" }
            .joined(separator: ", ")
    }
}
