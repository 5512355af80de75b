import SerialPedometer
import Udev

/// `serial watch`'s options (`--baud`, `--format`, `--counter-bits`, …): a one-source
/// configuration built from flags. Each option given overrides that key of the rule it applies
/// to; one not given leaves the rule's own (a `[[pedometer]]` table's, else the default).
package struct PedometerOverrides: Sendable {
    package var baud: Int?
    package var flowControl: FlowControl?
    /// A line format as written (`int`, `profile:NAME`), read against the file's profiles.
    package var format: String?
    package var counterBits: Int?
    package var trustDeviceTime: Bool?
    /// The device id: for one named device only (a rule matching many devices cannot give
    /// them all one id).
    package var id: String?

    package init(baud: Int? = nil, flowControl: FlowControl? = nil, format: String? = nil, counterBits: Int? = nil,
                 trustDeviceTime: Bool? = nil, id: String? = nil) {
        self.baud = baud
        self.flowControl = flowControl
        self.format = format
        self.counterBits = counterBits
        self.trustDeviceTime = trustDeviceTime
        self.id = id
    }

    /// `rule` with these options; `id` only when `withID`.
    /// - Throws: ``SerialConfigError`` for a format or profile that does not exist.
    package func applied(to rule: GatewayConfig.Pedometer, profiles: [String: VendorProfile], withID: Bool) throws -> GatewayConfig.Pedometer {
        var r = rule
        if let baud { r.baud = baud }
        if let flowControl { r.flowControl = flowControl }
        if let format { r.format = try LineFormat(parsing: format, profiles: profiles) }
        if let counterBits { r.counterBits = counterBits }
        if let trustDeviceTime { r.trustDeviceTime = trustDeviceTime }
        if let id, withID { r.id = id }
        return r
    }
}

extension GatewayConfig {
    /// The rules the serial commands read by: for `device`, one rule naming it; without one
    /// (`serial list`, `serial watch --auto`), this file's rules followed by `matches`
    /// (`vid:pid`, `serial:S`, `tag:T`, `by-id:PATH`), each with `overrides` but its id. Empty
    /// when there is no rule at all.
    /// - Throws: ``DeviceMatchError`` for a bad match, ``SerialConfigError`` for a bad format.
    package func pedometerRules(device: String? = nil, matches: [String], overrides: PedometerOverrides = PedometerOverrides()) throws -> [Pedometer] {
        if let device {
            return [try overrides.applied(to: Pedometer(path: device), profiles: allProfiles, withID: true)]
        }
        return try (pedometers + matches.map { Pedometer(try DeviceMatch(parsing: $0)) })
            .map { try overrides.applied(to: $0, profiles: allProfiles, withID: false) }
    }
}
