import ArgumentParser
import Foundation
import HealthModel
import HealthStore

// Shared pieces of the change-feed commands (issue 7): `changes`, `watch`, `tombstones`,
// `stats --follow`. docs/change-feed.md describes the feed and the exit codes.

extension ChangeFeedError: SysexitConvertible {
    /// 65 (data error) means exactly "this anchor cannot be answered without a gap: resync";
    /// a malformed anchor or limit is a usage error (64).
    package var sysexit: Sysexit { requiresResync ? .dataError : .usage }
}

/// The JSON and text shapes of a ``ChangeSet``.
enum ChangeOutput {
    /// `{"samples": [<samples --json objects>], "deleted": [uuid…], "anchor": "…", "hasMore": bool}`.
    static func object(_ c: ChangeSet) throws -> [String: Any] {
        [
            "samples": try c.samples.map { try SampleJSON.object($0) },
            "deleted": c.deleted.map { $0.uuid.uuidString.lowercased() },
            "anchor": c.anchor.description,
            "hasMore": c.hasMore,
        ]
    }

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

/// Parses durations such as `30d`, `12h`, `90m`, `45s`, `2w` into seconds.
enum DurationText {
    /// The longest duration accepted: 100 years (36500d). Longer is a typo, and would not fit
    /// the whole-unit display.
    static let maximumSeconds: TimeInterval = 36_500 * 86_400

    static func seconds(_ text: String, option: String) throws -> TimeInterval {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        if let last = text.last, let mult = units[last], let n = Double(text.dropLast()), n > 0, n.isFinite {
            guard n * mult <= maximumSeconds else {
                throw CLIFailure("\(option) '\(text)' is longer than 100 years: use at most 36500d.", code: .usage)
            }
            return n * mult
        }
        throw CLIFailure("\(option) '\(text)' is not a duration: use a number with s, m, h, d or w, such as 30d.",
                         code: .usage)
    }

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

/// How `sources` shows each source's devices.
enum SourceDeviceOutput {
    /// `[{"name", "manufacturer", "model", "localIdentifier", …, "kind", "alias", "samples"}]`
    /// (HKDevice fields that are set, plus the registry's kind and alias and the sample count).
    static func json(_ list: [SourceDevice]) -> [[String: Any]] {
        list.map { d in
            var o = SampleJSON.deviceObject(d.device)
            o["kind"] = d.kind.rawValue
            o["alias"] = d.alias ?? NSNull()
            o["samples"] = d.sampleCount
            return o
        }
    }

    /// `Polar H10 (120), pedometer-1 (30)` or `-`.
    static func text(_ list: [SourceDevice]) -> String {
        if list.isEmpty { return "-" }
        return list.map { "\($0.alias ?? $0.device.name ?? $0.device.localIdentifier ?? "?") (\($0.sampleCount))" }
            .joined(separator: ", ")
    }
}
