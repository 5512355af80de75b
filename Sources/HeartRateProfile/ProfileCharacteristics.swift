import HealthModel

/// The 16-bit UUIDs of the Heart Rate, Device Information and Battery services and their
/// characteristics (kept as numbers so this module needs no GATT types).
public enum HeartRateUUIDs {
    /// Heart Rate service.
    public static let heartRateService: UInt16 = 0x180D
    /// Heart Rate Measurement (notify).
    public static let heartRateMeasurement: UInt16 = 0x2A37
    /// Body Sensor Location (read).
    public static let bodySensorLocation: UInt16 = 0x2A38
    /// Heart Rate Control Point (write).
    public static let heartRateControlPoint: UInt16 = 0x2A39
    /// Device Information service.
    public static let deviceInformationService: UInt16 = 0x180A
    /// Battery service.
    public static let batteryService: UInt16 = 0x180F
    /// Battery Level (read, optionally notify).
    public static let batteryLevel: UInt16 = 0x2A19
    /// GAP Device Name.
    public static let deviceName: UInt16 = 0x2A00
}

/// Body Sensor Location (0x2A38): where the sensor sits. Reserved values (7–255) are kept as
/// ``HeartRateSensorLocation/other`` with their raw value.
public struct BodySensorLocation: Sendable, Hashable, CustomStringConvertible {
    /// The byte as read.
    public let rawValue: UInt8

    /// From the byte as read.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Decodes a read value (the first byte; extra bytes are ignored).
    /// - Throws: ``ProfileValueError/empty(_:)`` for an empty value.
    public init(bytes: [UInt8]) throws(ProfileValueError) {
        guard let b = bytes.first else { throw .empty("Body Sensor Location") }
        self.rawValue = b
    }

    /// The HealthKit location (values 0–6 map by value; reserved ones are `other`).
    public var location: HeartRateSensorLocation { HeartRateSensorLocation(rawValue: Int(rawValue)) ?? .other }

    /// True for 7–255, which the specification reserves.
    public var isReserved: Bool { rawValue > 6 }

    public var description: String { isReserved ? "other (reserved value \(rawValue))" : location.name }
}

/// Heart Rate Control Point (0x2A39).
public enum HeartRateControlPoint {
    /// The value that resets Energy Expended to 0.
    public static let resetEnergyExpended: [UInt8] = [0x01]
    /// The ATT error code a strap answers an unsupported control-point value with.
    public static let notSupportedErrorCode: UInt8 = 0x80
}

/// Battery Level (0x2A19): percent, 0–100.
public enum BatteryLevel {
    /// Decodes a read or notified value.
    /// - Throws: ``ProfileValueError`` for an empty value or a reserved level (101–255).
    public static func decode(_ bytes: [UInt8]) throws(ProfileValueError) -> Int {
        guard let b = bytes.first else { throw .empty("Battery Level") }
        guard b <= 100 else { throw .reserved("Battery Level", Int(b)) }
        return Int(b)
    }
}

/// Device Information service (0x180A) strings, as read.
public struct DeviceInformation: Sendable, Hashable {
    public var manufacturerName: String?
    public var modelNumber: String?
    public var serialNumber: String?
    public var hardwareRevision: String?
    public var firmwareRevision: String?
    public var softwareRevision: String?

    public init(manufacturerName: String? = nil, modelNumber: String? = nil, serialNumber: String? = nil,
                hardwareRevision: String? = nil, firmwareRevision: String? = nil, softwareRevision: String? = nil) {
        self.manufacturerName = manufacturerName; self.modelNumber = modelNumber; self.serialNumber = serialNumber
        self.hardwareRevision = hardwareRevision; self.firmwareRevision = firmwareRevision
        self.softwareRevision = softwareRevision
    }

    /// The characteristic UUIDs this type reads, in the order ``set(_:for:)`` understands.
    public static let characteristicUUIDs: [UInt16] = [0x2A29, 0x2A24, 0x2A25, 0x2A27, 0x2A26, 0x2A28]

    /// Decodes a DIS `utf8s` value (and the GAP Device Name): UTF-8 without terminator. The one
    /// rule for every string HealthGate reads from a strap, in every command: the value ends at
    /// its first NUL (some firmware pads with NULs, and what follows is padding), spaces and tabs
    /// at either end are trimmed, invalid UTF-8 is repaired with U+FFFD, and an empty string is nil.
    public static func string(_ bytes: [UInt8]) -> String? {
        var b = bytes[...]
        if let nul = b.firstIndex(of: 0) { b = b[..<nul] }
        while let first = b.first, first == 0x20 || first == 0x09 { b.removeFirst() }
        while let last = b.last, last == 0x20 || last == 0x09 { b.removeLast() }
        guard !b.isEmpty else { return nil }
        return String(decoding: b, as: UTF8.self)
    }

    /// Stores a value read from characteristic `uuid` (ignores UUIDs this type does not know).
    public mutating func set(_ bytes: [UInt8], for uuid: UInt16) {
        let s = Self.string(bytes)
        switch uuid {
        case 0x2A29: manufacturerName = s
        case 0x2A24: modelNumber = s
        case 0x2A25: serialNumber = s
        case 0x2A27: hardwareRevision = s
        case 0x2A26: firmwareRevision = s
        case 0x2A28: softwareRevision = s
        default: break
        }
    }

    /// The HealthKit-style device record. The serial number is deliberately not used (privacy);
    /// `localIdentifier` should be a stable per-gateway id, e.g. from ``localIdentifier(forAddress:)``.
    public func device(name: String?, localIdentifier: String?) -> Device {
        Device(name: name, manufacturer: manufacturerName, model: modelNumber, hardwareVersion: hardwareRevision,
               firmwareVersion: firmwareRevision, softwareVersion: softwareRevision, localIdentifier: localIdentifier)
    }

    /// A stable, non-reversible identifier for a BLE identity address: `ble-` and 16 hex digits
    /// of FNV-1a over the upper-cased address. Same address, same id, on every run.
    public static func localIdentifier(forAddress address: String) -> String {
        var h: UInt64 = 0xcbf29ce484222325
        for b in address.uppercased().utf8 { h ^= UInt64(b); h = h &* 0x100000001b3 }
        let hex = String(h, radix: 16)
        return "ble-" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// Why a profile characteristic value could not be used.
public enum ProfileValueError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The value had no bytes.
    case empty(String)
    /// The value is one the specification reserves.
    case reserved(String, Int)

    public var description: String {
        switch self {
        case .empty(let what): "the \(what) value is empty"
        case .reserved(let what, let v): "the \(what) value \(v) is reserved by the specification"
        }
    }
}
