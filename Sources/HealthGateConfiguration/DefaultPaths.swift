import Foundation

/// Where HealthGate's files are when no option names them, from the environment (XDG base
/// directories): one rule for every command.
package enum DefaultPaths {
    /// The health store: `given` (`--db`), else `$HEALTHGATE_DB`, else `configured` (the
    /// configuration file's `[database] path`, for `run`), else
    /// `$XDG_DATA_HOME/healthgate/health.sqlite` (`~/.local/share/…` when `XDG_DATA_HOME` is
    /// unset or empty). An empty `HEALTHGATE_DB` counts as unset.
    package static func database(given: String? = nil, configured: String? = nil,
                                 environment env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let given { return given }
        if let p = env["HEALTHGATE_DB"], !p.isEmpty { return p }
        if let configured { return configured }
        return base(env, "XDG_DATA_HOME", "/.local/share") + "/healthgate/health.sqlite"
    }

    /// The serial commands' configuration file: `$XDG_CONFIG_HOME/healthgate/serial.toml`
    /// (`~/.config/…` when unset or empty).
    package static func serialConfiguration(environment env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        base(env, "XDG_CONFIG_HOME", "/.config") + "/healthgate/serial.toml"
    }

    /// `healthgate simulate`'s directory for its strap sockets and configuration:
    /// `$XDG_RUNTIME_DIR/healthgate-sim`, else `/tmp/healthgate-sim-UID`.
    package static func simulation(environment env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let runtime = env["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/healthgate-sim" }
        return "/tmp/healthgate-sim-\(getuid())"
    }

    private static func base(_ env: [String: String], _ variable: String, _ underHome: String) -> String {
        env[variable].flatMap { $0.isEmpty ? nil : $0 } ?? ((env["HOME"] ?? NSHomeDirectory()) + underHome)
    }
}

extension GatewayConfig {
    /// The configuration at `path`, or at the serial commands' default path when nil, where a
    /// missing file is no rules and only the built-in profiles (a named file must exist).
    /// - Throws: ``ConfigError`` naming the file, line and what is wrong.
    package static func loadSerial(path: String?) throws(ConfigError) -> GatewayConfig {
        let file = path ?? DefaultPaths.serialConfiguration()
        if path == nil && !FileManager.default.fileExists(atPath: file) { return GatewayConfig(file: file) }
        return try load(path: file)
    }
}

extension GatewayConfig {
    /// The gateway's name when the configuration gives none (`gateway` in `[uplink.postgres]`
    /// and `[uplink.mqtt]`): the host name (`gethostname`, no DNS lookup), else "healthgate".
    package static func defaultGatewayName() -> String {
        var buf = [CChar](repeating: 0, count: 256)
        guard gethostname(&buf, buf.count - 1) == 0 else { return "healthgate" }
        let name = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "healthgate" : name
    }
}
