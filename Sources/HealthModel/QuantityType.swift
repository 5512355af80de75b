import Synchronization
import Locking
/// How samples of a type combine into statistics (HKQuantityAggregationStyle).
public enum AggregationStyle: String, Sendable, Hashable, Codable, CaseIterable {
    /// Values add up over time (steps, energy): only `cumulativeSum` applies.
    case cumulative
    /// Each value stands alone and all weigh the same (SDNN, resting heart rate).
    case discreteArithmetic
    /// Each value stands for its time span; instantaneous samples weigh equally (heart rate).
    case discreteTemporallyWeighted

    /// Whether this is one of the discrete styles.
    public var isDiscrete: Bool { self != .cumulative }
}

/// A kind of quantity HealthGate stores, such as `heartRate` or `stepCount`.
///
/// Types are data, not code: each carries its identifier, canonical unit (values are stored in
/// it), aggregation style and whether negative values make sense. Adding a type is adding a
/// ``QuantityType`` value to a ``QuantityTypeRegistry``; nothing else changes.
public struct QuantityType: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The stable name, as used on the command line and in the store (`heartRate`).
    public let identifier: String
    /// The unit values are stored in.
    public let canonicalUnitString: String
    /// How samples combine into statistics.
    public let aggregationStyle: AggregationStyle
    /// Whether a negative value is valid (never for counts, rates or energy).
    public let allowsNegativeValues: Bool
    /// A one-line human description for `healthgate types`.
    public let summary: String
    /// The values a real measurement of one sample can have, in the canonical unit (nil: any
    /// finite value). A value outside is refused at every entry (add, import, ingest) as a
    /// sensor fault or a typo rather than stored, so it cannot corrupt statistics later; for
    /// cumulative types the bound is per sample (docs/input-rules.md, "Value ranges").
    public let plausibleRange: ClosedRange<Double>?

    public init(identifier: String, canonicalUnit: String, aggregationStyle: AggregationStyle,
                allowsNegativeValues: Bool = false, plausibleRange: ClosedRange<Double>? = nil, summary: String) {
        self.identifier = identifier
        self.canonicalUnitString = canonicalUnit
        self.aggregationStyle = aggregationStyle
        self.allowsNegativeValues = allowsNegativeValues
        self.plausibleRange = plausibleRange
        self.summary = summary
    }

    /// Whether `canonicalValue` (in ``canonicalUnit``) is finite and inside ``plausibleRange``.
    public func isPlausible(_ canonicalValue: Double) -> Bool {
        canonicalValue.isFinite && (plausibleRange?.contains(canonicalValue) ?? true)
    }

    /// The canonical unit, parsed.
    public var canonicalUnit: HealthUnit {
        // Built-in and registered types are checked on registration, so this cannot fail for them.
        ParsedUnits.unit(canonicalUnitString)
    }

    public var description: String { identifier }

    /// Heart rate in count/min; discrete, weighted by time.
    public static let heartRate = QuantityType(
        identifier: "heartRate", canonicalUnit: "count/min", aggregationStyle: .discreteTemporallyWeighted,
        plausibleRange: 0...500,
        summary: "heart beats per minute")
    /// Steps in count; cumulative.
    public static let stepCount = QuantityType(
        identifier: "stepCount", canonicalUnit: "count", aggregationStyle: .cumulative,
        plausibleRange: 0...1_000_000,
        summary: "steps taken over the sample's interval")
    /// Active energy in kJ; cumulative.
    public static let activeEnergyBurned = QuantityType(
        identifier: "activeEnergyBurned", canonicalUnit: "kJ", aggregationStyle: .cumulative,
        plausibleRange: 0...100_000,
        summary: "energy expended over the sample's interval (BLE Energy Expended deltas)")
    /// Heart-rate variability as SDNN in ms; discrete.
    public static let heartRateVariabilitySDNN = QuantityType(
        identifier: "heartRateVariabilitySDNN", canonicalUnit: "ms", aggregationStyle: .discreteArithmetic,
        plausibleRange: 0...10_000,
        summary: "standard deviation of RR intervals over a window")
    /// Heart-rate variability as RMSSD in ms; discrete (not a HealthKit type: HealthKit stores SDNN only).
    public static let heartRateVariabilityRMSSD = QuantityType(
        identifier: "heartRateVariabilityRMSSD", canonicalUnit: "ms", aggregationStyle: .discreteArithmetic,
        plausibleRange: 0...10_000,
        summary: "root mean square of successive RR differences over a window")
    /// Resting heart rate in count/min; discrete.
    public static let restingHeartRate = QuantityType(
        identifier: "restingHeartRate", canonicalUnit: "count/min", aggregationStyle: .discreteArithmetic,
        plausibleRange: 0...300,
        summary: "heart rate at rest")
    /// Distance walked or run in m; cumulative.
    public static let distanceWalkingRunning = QuantityType(
        identifier: "distanceWalkingRunning", canonicalUnit: "m", aggregationStyle: .cumulative,
        plausibleRange: 0...1_000_000,
        summary: "distance walked or run over the sample's interval")
    /// Body mass in kg; discrete.
    public static let bodyMass = QuantityType(
        identifier: "bodyMass", canonicalUnit: "kg", aggregationStyle: .discreteArithmetic,
        plausibleRange: 0...1_000,
        summary: "body weight")
}

/// The set of quantity types a store and a CLI know, looked up by identifier.
public struct QuantityTypeRegistry: Sendable {
    private var byIdentifier: [String: QuantityType]

    /// The types HealthGate ships with.
    // The built-in types' units are valid strings, so this cannot fail.
    public static let standard = try! QuantityTypeRegistry(types: [
        .heartRate, .stepCount, .activeEnergyBurned, .heartRateVariabilitySDNN,
        .restingHeartRate, .distanceWalkingRunning, .bodyMass, .heartRateVariabilityRMSSD,
    ])

    /// Creates a registry holding `types`; throws if any has an invalid canonical unit.
    public init(types: [QuantityType]) throws {
        byIdentifier = [:]
        for t in types { try register(t) }
    }

    /// Adds a type. Throws ``HealthModelError/invalidUnit(_:reason:)`` for a bad canonical unit.
    public mutating func register(_ type: QuantityType) throws {
        _ = try HealthUnit(type.canonicalUnitString)
        byIdentifier[type.identifier] = type
    }

    /// The type with this identifier; throws ``HealthModelError/unknownType(_:)`` if none.
    public func type(_ identifier: String) throws -> QuantityType {
        guard let t = byIdentifier[identifier] else { throw HealthModelError.unknownType(identifier) }
        return t
    }

    /// Every registered type, sorted by identifier.
    public var all: [QuantityType] { byIdentifier.values.sorted { $0.identifier < $1.identifier } }
}

/// Parsed canonical units, by string: parsing a unit string costs far more than a locked
/// dictionary lookup, and stores and encoders ask for a type's unit once per sample.
enum ParsedUnits {
    private static let cache = Lock<[String: HealthUnit]>([:])

    /// The parsed unit for `string` (`count` if it does not parse; registered types are checked).
    static func unit(_ string: String) -> HealthUnit {
        if let u = cache.withLock({ $0[string] }) { return u }
        let u = (try? HealthUnit(string)) ?? .count
        cache.withLock { $0[string] = u }
        return u
    }
}
