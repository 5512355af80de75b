import Foundation

/// Whether a vendor profile's number is a running total or the steps since the previous line.
package enum CountSemantics: String, Sendable, Hashable, Codable, CaseIterable {
    /// A cumulative counter (goes through the wrap/reset logic).
    case cumulative
    /// Steps since the previous line (stored as they are).
    case delta
}

/// An opt-in parser for vendor free text such as `Step: 1234`: a regular expression whose capture
/// group `steps` (or else its first group) holds the number, and what that number means.
///
/// Profiles are chosen by the user (`--format profile:NAME`, or the configuration file), never
/// guessed: `Current Run Steps: 4.00` (a delta) and `Total Steps: 123.00` (a total) look alike.
package struct VendorProfile: Sendable, Hashable {
    /// The name used in `--format profile:NAME`.
    package let name: String
    /// The regular expression (Swift `Regex` syntax); it is searched for anywhere in the line,
    /// so anchor it with `^…$` to match whole lines.
    package let pattern: String
    /// Cumulative or delta.
    package let semantics: CountSemantics
    private let regex: CompiledRegex
    /// The two reasons ``parse(_:)`` gives, built once: a line that is not this device's (most lines,
    /// when several profiles are tried) then costs no string building (`pedometer-lines` fuzzing).
    private let noMatch: LineRejection
    private let notACount: LineRejection

    /// Compiles a profile.
    /// - Throws: ``SerialConfigError/badProfilePattern(_:_:)`` when the pattern does not compile
    ///   or has no capture group.
    package init(name: String, pattern: String, semantics: CountSemantics) throws {
        self.name = name
        self.pattern = pattern
        self.semantics = semantics
        self.noMatch = .notPedometer("does not match profile \(name)")
        self.notACount = .notPedometer("profile \(name) matched, but its number is not a whole count")
        do {
            let r = try Regex(pattern)
            self.regex = CompiledRegex(regex: r)
        } catch {
            throw SerialConfigError.badProfilePattern(name, "\(error)")
        }
        // A pattern with no capture group cannot say where the number is.
        guard Self.captureCount(of: pattern) > 0 else {
            throw SerialConfigError.badProfilePattern(name, "the pattern needs a capture group, e.g. (?<steps>\\d+)")
        }
    }

    /// Parses one line with this profile.
    package func parse(_ line: String) -> Result<PedometerReading, LineRejection> {
        guard let match = try? regex.regex.firstMatch(in: line) else {
            return .failure(noMatch)
        }
        let captured: Substring?
        if let named = match.output["steps"] {
            captured = named.substring
        } else if match.output.count > 1 {
            captured = match.output[1].substring
        } else {
            captured = nil
        }
        guard let text = captured, let n = LineParser.parseCount(text) else {
            return .failure(notACount)
        }
        return .success(semantics == .cumulative ? PedometerReading(steps: n) : PedometerReading(deltaSteps: n))
    }

    package static func == (a: VendorProfile, b: VendorProfile) -> Bool {
        a.name == b.name && a.pattern == b.pattern && a.semantics == b.semantics
    }

    package func hash(into h: inout Hasher) {
        h.combine(name)
        h.combine(pattern)
        h.combine(semantics)
    }

    /// How many capture groups the pattern opens: `(?<name>` and plain `(` count; `(?:`, look-arounds and
    /// escaped `\(` do not. Only zero matters (a pattern with no group cannot say where the number is).
    private static func captureCount(of pattern: String) -> Int {
        let c = Array(pattern)
        var n = 0, i = 0
        while i < c.count {
            if c[i] == "\\" { i += 2; continue }
            if c[i] == "(" {
                if i + 1 < c.count, c[i + 1] == "?" {
                    if i + 3 < c.count, c[i + 2] == "<", c[i + 3] != "=", c[i + 3] != "!" { n += 1 }
                } else {
                    n += 1
                }
            }
            i += 1
        }
        return n
    }

    /// Profiles for the firmware in docs/serial-pedometers.md, available by name. They are never
    /// applied unless the user names one.
    package static let builtIn: [String: VendorProfile] = {
        let list: [(String, String, CountSemantics)] = [
            // Seeed BMA456 example: `Step: 1234` every second.
            ("seeed-bma456", #"^Step: (?<steps>\d+)$"#, .cumulative),
            // jcu-eresearch Arduino-BMA400: `Steps: 12, Activity: Walking`.
            ("bma400", #"^Steps: (?<steps>\d+)(,|$)"#, .cumulative),
            // SparkFun BMA400 example 10: `… Step count: 5\tDetected activity type: Walking`.
            ("sparkfun-bma400", #"Step count: (?<steps>\d+)"#, .cumulative),
            // Arduino Nicla BHY2 sketch: `Total Steps: 123.00` (a running total) …
            ("nicla-total", #"^Total Steps: (?<steps>\d+(\.0+)?)$"#, .cumulative),
            // … and `Current Run Steps: 4.00` (the steps of the current run, as a delta).
            ("nicla-run", #"^Current Run Steps: (?<steps>\d+(\.0+)?)$"#, .delta),
        ]
        var d: [String: VendorProfile] = [:]
        for (name, pattern, semantics) in list {
            d[name] = try! VendorProfile(name: name, pattern: pattern, semantics: semantics)
        }
        return d
    }()
}

/// Holds a compiled `Regex`. `Regex` is immutable once built and matching does not mutate it,
/// so sharing it across threads is safe; the type is not marked `Sendable` by the standard library.
private final class CompiledRegex: @unchecked Sendable {
    let regex: Regex<AnyRegexOutput>
    init(regex: Regex<AnyRegexOutput>) { self.regex = regex }
}

/// Configuration mistakes: unknown formats or profiles, bad patterns, bad match rules.
package enum SerialConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    case unknownFormat(String)
    case unknownProfile(String, known: [String])
    case badProfilePattern(String, String)
    case badCounterBits(Int)
    case badConfigFile(String, String)

    package var description: String {
        switch self {
        case .unknownFormat(let f):
            "unknown line format \"\(f)\": use auto, json, kv, int or profile:NAME"
        case .unknownProfile(let n, let known):
            "unknown vendor profile \"\(n)\": define it in a [profiles.\(n)] table (of serial.toml, or of healthgate.toml for the daemon), or use one of \(known.joined(separator: ", "))"
        case .badProfilePattern(let n, let why):
            "vendor profile \"\(n)\" has a bad pattern (\(why)): fix the pattern in its [profiles.\(n)] table"
        case .badCounterBits(let b):
            "counter width \(b) is not supported: use 16, 24 or 32"
        case .badConfigFile(let path, let why):
            "the serial configuration file \(path) is invalid (\(why)): fix it or pass --config"
        }
    }
}
