/// What wrote a sample: an app, a gateway component, or a person (HKSource + HKSourceRevision).
///
/// Sources are what statistics merge across and what source priority orders. The
/// ``identifier`` is the stable key (`org.healthgate.ble`, `org.healthgate.manual`); the
/// ``name`` is for people.
public struct Source: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Human-readable name (`Watch`, `HealthGate BLE`).
    public var name: String
    /// Stable key. When only a name is given it doubles as the identifier.
    public var identifier: String
    /// The writer's version, if it has one.
    public var version: String?

    public init(name: String, identifier: String? = nil, version: String? = nil) {
        self.name = name
        self.identifier = identifier ?? name
        self.version = version
    }

    public var description: String { name }

    /// Samples a person typed in (`healthgate add`, manual imports).
    public static let manual = Source(name: "Manual entry", identifier: "org.healthgate.manual")
}

/// The hardware that measured a sample (HKDevice). Every field is optional and immutable.
public struct Device: Sendable, Hashable, Codable {
    public var name: String?
    public var manufacturer: String?
    public var model: String?
    public var hardwareVersion: String?
    public var firmwareVersion: String?
    public var softwareVersion: String?
    /// A stable per-gateway id for the device (for BLE, derived from its identity address).
    public var localIdentifier: String?
    /// The FDA Unique Device Identifier, if known.
    public var udiDeviceIdentifier: String?

    public init(name: String? = nil, manufacturer: String? = nil, model: String? = nil,
                hardwareVersion: String? = nil, firmwareVersion: String? = nil, softwareVersion: String? = nil,
                localIdentifier: String? = nil, udiDeviceIdentifier: String? = nil) {
        self.name = name; self.manufacturer = manufacturer; self.model = model
        self.hardwareVersion = hardwareVersion; self.firmwareVersion = firmwareVersion
        self.softwareVersion = softwareVersion; self.localIdentifier = localIdentifier
        self.udiDeviceIdentifier = udiDeviceIdentifier
    }

    /// True when no field is set.
    public var isEmpty: Bool {
        // Field by field, not an array of them: every sample's initializer asks (an array was a
        // heap allocation a sample, 5 % of an Apple Health import's reading thread).
        name == nil && manufacturer == nil && model == nil && hardwareVersion == nil && firmwareVersion == nil
            && softwareVersion == nil && localIdentifier == nil && udiDeviceIdentifier == nil
    }
}
