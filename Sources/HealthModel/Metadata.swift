import Foundation

/// Where a heart-rate sensor sits (HKHeartRateSensorLocation). The raw values equal BLE Body
/// Sensor Location (0x2A38) values 0–6, so a BLE reading converts by value.
public enum HeartRateSensorLocation: Int, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case other = 0, chest, wrist, finger, hand, earLobe, foot

    /// The name used on the command line and in JSON (`chest`, `earLobe`).
    public var name: String {
        switch self {
        case .other: "other"
        case .chest: "chest"
        case .wrist: "wrist"
        case .finger: "finger"
        case .hand: "hand"
        case .earLobe: "earLobe"
        case .foot: "foot"
        }
    }

    public var description: String { name }

    /// Looks a location up by ``name`` (case-insensitive) or by its number as text.
    public init?(name: String) {
        if let n = Int(name), let v = HeartRateSensorLocation(rawValue: n) { self = v; return }
        guard let v = Self.allCases.first(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
        self = v
    }
}

/// Whether the person was still or moving (HKHeartRateMotionContext).
public enum HeartRateMotionContext: Int, Sendable, Hashable, Codable, CaseIterable {
    case notSet = 0, sedentary, active

    /// The name used on the command line and in JSON.
    public var name: String {
        switch self {
        case .notSet: "notSet"
        case .sedentary: "sedentary"
        case .active: "active"
        }
    }

    /// Looks a context up by ``name`` (case-insensitive) or number.
    public init?(name: String) {
        if let n = Int(name), let v = HeartRateMotionContext(rawValue: n) { self = v; return }
        guard let v = Self.allCases.first(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
        self = v
    }
}

/// A heart-rate sensor's skin-contact status, from the BLE Heart Rate Measurement flags.
public enum SensorContact: Int, Sendable, Hashable, Codable, CaseIterable {
    /// The sensor does not report contact (flag values 0 and 1).
    case notSupported = 0
    /// The sensor reports contact, and there is none (flag value 2).
    case notDetected = 2
    /// The sensor reports contact, and there is contact (flag value 3).
    case detected = 3

    /// The name used on the command line and in JSON.
    public var name: String {
        switch self {
        case .notSupported: "notSupported"
        case .notDetected: "notDetected"
        case .detected: "detected"
        }
    }

    /// Looks a status up by ``name``.
    public init?(name: String) {
        guard let v = Self.allCases.first(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
        self = v
    }
}

/// A free metadata value: a string, a number or a date (HealthKit's NSString/NSNumber/NSDate).
public enum MetadataValue: Sendable, Hashable, Codable {
    case string(String)
    case number(Double)
    case date(Date)

    /// A user's text as a value: an ISO 8601 date-time (`2026-11-02T08:00:00Z`) is a date,
    /// anything else the string itself (numbers are the caller's: JSON has its own).
    public init(userText s: String) {
        if s.contains("T"), s.first?.isNumber == true, let d = ISO8601.date(s) { self = .date(d) } else { self = .string(s) }
    }
}

/// A sample's metadata: HealthKit's well-known keys as typed fields, plus free user keys.
public struct Metadata: Sendable, Hashable, Codable {
    /// HKMetadataKeyHeartRateSensorLocation.
    public var heartRateSensorLocation: HeartRateSensorLocation?
    /// HKMetadataKeyHeartRateMotionContext.
    public var heartRateMotionContext: HeartRateMotionContext?
    /// The strap's skin-contact status when the reading was taken (HealthGate key).
    public var sensorContact: SensorContact?
    /// HKMetadataKeySyncIdentifier: samples with the same identifier replace each other.
    public var syncIdentifier: String?
    /// HKMetadataKeySyncVersion: a save replaces the stored sample only with a higher version.
    public var syncVersion: Int?
    /// HKMetadataKeyWasUserEntered.
    public var wasUserEntered: Bool?
    /// Any other keys, such as `HGTimingUncertain` or a user's own.
    public var user: [String: MetadataValue]

    public init(heartRateSensorLocation: HeartRateSensorLocation? = nil,
                heartRateMotionContext: HeartRateMotionContext? = nil,
                sensorContact: SensorContact? = nil,
                syncIdentifier: String? = nil, syncVersion: Int? = nil,
                wasUserEntered: Bool? = nil, user: [String: MetadataValue] = [:]) {
        self.heartRateSensorLocation = heartRateSensorLocation
        self.heartRateMotionContext = heartRateMotionContext
        self.sensorContact = sensorContact
        self.syncIdentifier = syncIdentifier
        self.syncVersion = syncVersion
        self.wasUserEntered = wasUserEntered
        self.user = user
    }

    /// User key set to 1 on a sample decoded from a truncated payload (its valid prefix was used).
    public static let payloadTruncatedKey = "HGPayloadTruncated"
    /// User key set to 1 on an energy sample whose end reading was saturated (0xFFFF): the true
    /// value may be larger.
    public static let energySaturatedKey = "HGEnergySaturated"
    /// User key of an HRV sample (SDNN, RMSSD) computed by HealthGate: the window's RR intervals
    /// before artefact correction (set with ``hrvCorrectedKey`` when beats were corrected).
    public static let hrvIntervalsKey = "hrvIntervals"
    /// User key of an HRV sample computed by HealthGate: the beats corrected in its window.
    public static let hrvCorrectedKey = "hrvCorrected"

    /// Key names that mean a typed field (HealthGate's and HealthKit's spelling), so they cannot
    /// be user keys: a user `syncIdentifier` would be exported under the reserved key and then
    /// read back as the sync identifier, or refused (docs/input-rules.md).
    public static let reservedKeys: [String: String] = [
        "heartRateSensorLocation": "heartRateSensorLocation", "HKMetadataKeyHeartRateSensorLocation": "heartRateSensorLocation",
        "heartRateMotionContext": "heartRateMotionContext", "HKMetadataKeyHeartRateMotionContext": "heartRateMotionContext",
        "sensorContact": "sensorContact",
        "syncIdentifier": "syncIdentifier", "HKMetadataKeySyncIdentifier": "syncIdentifier",
        "syncVersion": "syncVersion", "HKMetadataKeySyncVersion": "syncVersion",
        "wasUserEntered": "wasUserEntered", "HKMetadataKeyWasUserEntered": "wasUserEntered",
    ]

    /// True when nothing is set.
    public var isEmpty: Bool {
        heartRateSensorLocation == nil && heartRateMotionContext == nil && sensorContact == nil &&
            syncIdentifier == nil && syncVersion == nil && wasUserEntered == nil && user.isEmpty
    }

    /// Checks the rules HealthKit enforces: a sync identifier needs a sync version and the
    /// reverse; numbers are finite; user keys are non-empty, not one of ``reservedKeys`` and
    /// hold no NUL character.
    public func validate() throws {
        if (syncIdentifier == nil) != (syncVersion == nil) {
            throw HealthModelError.syncVersionMissing(syncIdentifier ?? "(none)")
        }
        for (key, value) in user {
            if key.isEmpty { throw HealthModelError.invalidMetadata(key: key, reason: "keys cannot be empty") }
            if let field = Self.reservedKeys[key] {
                throw HealthModelError.invalidMetadata(key: key, reason: "it is reserved for the typed field \(field), so it cannot be a free key")
            }
            if key.utf8.contains(0) { throw HealthModelError.invalidMetadata(key: key, reason: "keys cannot contain a NUL character") }
            if case .number(let n) = value, !n.isFinite {
                throw HealthModelError.invalidMetadata(key: key, reason: "numbers must be finite")
            }
        }
    }
}
