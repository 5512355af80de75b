import Foundation
import TOMLKit
import Udev

/// The serial pedometer configuration file (TOML, `$XDG_CONFIG_HOME/healthgate/serial.toml`):
/// which tty devices are pedometers, and the user's vendor profiles.
///
/// ```toml
/// match = ["1d50:6120", "serial:PED0001", "tag:healthgate-pedometer"]
///
/// [profiles.my-band]
/// pattern = '^Step: (?<steps>\d+)$'
/// semantics = "cumulative"    # or "delta"
/// ```
public struct SerialConfiguration: Sendable {
    /// Match rules; empty means no device is a pedometer.
    public var match: [DeviceMatch]
    /// The user's profiles (they override built-ins of the same name).
    public var profiles: [String: VendorProfile]
    /// The file this came from, or nil when there was none.
    public var file: String?

    /// An empty configuration.
    public init(match: [DeviceMatch] = [], profiles: [String: VendorProfile] = [:], file: String? = nil) {
        self.match = match
        self.profiles = profiles
        self.file = file
    }

    /// Built-in profiles merged with the user's (the user's win).
    public var allProfiles: [String: VendorProfile] { VendorProfile.builtIn.merging(profiles) { _, user in user } }

    /// The default path: `$XDG_CONFIG_HOME/healthgate/serial.toml` (`~/.config/…` when unset).
    public static var defaultPath: String {
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((env["HOME"] ?? NSHomeDirectory()) + "/.config")
        return base + "/healthgate/serial.toml"
    }

    /// Reads `path`; a missing file at the default path is an empty configuration.
    /// - Throws: ``SerialConfigError/badConfigFile(_:_:)`` naming what is wrong.
    public static func load(path: String?) throws -> SerialConfiguration {
        let file = path ?? defaultPath
        guard let data = FileManager.default.contents(atPath: file) else {
            if path == nil { return SerialConfiguration() }
            throw SerialConfigError.badConfigFile(file, "cannot read it")
        }
        return try parse(String(decoding: data, as: UTF8.self), file: file)
    }

    /// Parses TOML text.
    public static func parse(_ text: String, file: String) throws -> SerialConfiguration {
        let table: TOMLTable
        do { table = try TOMLTable(string: text) } catch {
            throw SerialConfigError.badConfigFile(file, "not valid TOML: \(error)")
        }
        var config = SerialConfiguration(file: file)
        for key in table.keys where !["match", "profiles"].contains(key) {
            throw SerialConfigError.badConfigFile(file, "unknown key \"\(key)\"; known keys: match, profiles")
        }
        if let m = table["match"] {
            guard let arr = m.array else { throw SerialConfigError.badConfigFile(file, "match must be an array of strings") }
            for v in arr {
                guard let s = v.string else { throw SerialConfigError.badConfigFile(file, "match must be an array of strings") }
                do { config.match.append(try DeviceMatch(parsing: s)) } catch {
                    throw SerialConfigError.badConfigFile(file, "\(error)")
                }
            }
        }
        if let p = table["profiles"] {
            guard let profiles = p.table else { throw SerialConfigError.badConfigFile(file, "profiles must be a table of [profiles.NAME]") }
            for name in profiles.keys {
                guard let t = profiles[name]?.table, let pattern = t["pattern"]?.string else {
                    throw SerialConfigError.badConfigFile(file, "[profiles.\(name)] needs pattern = '…'")
                }
                let semText = t["semantics"]?.string ?? "cumulative"
                guard let sem = CountSemantics(rawValue: semText) else {
                    throw SerialConfigError.badConfigFile(file, "[profiles.\(name)] semantics must be \"cumulative\" or \"delta\"")
                }
                config.profiles[name] = try VendorProfile(name: name, pattern: pattern, semantics: sem)
            }
        }
        return config
    }
}
