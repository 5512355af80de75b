import Foundation

/// A value with its unit (HKQuantity).
public struct Quantity: Sendable, Hashable, CustomStringConvertible {
    public let value: Double
    public let unit: HealthUnit

    /// A value of minus zero is stored as zero: the two are the same quantity, and a sample
    /// whose file says `-0` is the same sample as one that says `0` (its content UUID too).
    public init(_ value: Double, _ unit: HealthUnit) {
        self.value = value == 0 ? 0 : value
        self.unit = unit
    }

    /// The value expressed in `other`; throws ``HealthModelError/incompatibleUnits(_:_:)``.
    public func doubleValue(for other: HealthUnit) throws -> Double { try unit.convert(value, to: other) }

    public var description: String { "\(value) \(unit)" }
}

/// Beat-to-beat (RR) intervals a heart-rate sample carried, exactly as the sensor sent them.
///
/// BLE reports RR in ticks of 1/1024 s, oldest first; keeping ticks (not rounded ms) keeps the
/// series exact. The last interval ends at the sample's end date (its receipt time), so beat
/// times are reconstructed backwards from there (see docs/data-model.md).
public struct RRIntervals: Sendable, Hashable, Codable {
    /// Intervals in 1/1024 s, oldest first. Zero and 0xFFFF are not valid intervals.
    public var ticks: [UInt16]
    /// True when beats may be missing before the first interval (after a reconnect, or a
    /// notification that should have carried RR and did not).
    public var precededByGap: Bool

    public init(ticks: [UInt16], precededByGap: Bool = false) {
        self.ticks = ticks
        self.precededByGap = precededByGap
    }

    /// The intervals in milliseconds (exact: ticks × 1000 / 1024).
    public var milliseconds: [Double] { ticks.map { Double($0) * 1000 / 1024 } }
}

/// One measurement of a quantity over a time span (HKQuantitySample).
///
/// Construction validates everything HealthKit would: the unit fits the type, the value is
/// finite (and not negative for types that do not allow it), start ≤ end, and metadata rules.
/// Values are converted to the type's canonical unit when the sample is stored.
public struct QuantitySample: Sendable, Hashable {
    public let uuid: UUID
    public let type: QuantityType
    public let quantity: Quantity
    public let startDate: Date
    public let endDate: Date
    public let source: Source
    public let device: Device?
    public let metadata: Metadata
    /// Beat-to-beat intervals, for heart-rate samples from a strap that reports them.
    public let rrIntervals: RRIntervals?
    /// For a quantity of a quantity series (HKQuantitySeriesSample): its position in the series,
    /// whose UUID is ``uuid``; nil for a sample stored on its own. A series' quantities share
    /// the UUID and are told apart by their date interval and this index.
    public let seriesIndex: Int?
    /// The value in the type's canonical unit, converted once when the sample is made: the
    /// store's writers read it per row, and the unit lookup behind it takes a process-wide lock
    /// (`import`'s parsing and saving threads contended on it: 5 % of an import's time).
    public let canonicalValue: Double

    /// Creates and validates a sample, including the type's plausible range.
    /// - Throws: ``HealthModelError`` naming what is wrong and why.
    public init(uuid: UUID = UUID.timeOrdered(), type: QuantityType, quantity: Quantity,
                start: Date, end: Date, source: Source, device: Device? = nil,
                metadata: Metadata = Metadata(), rrIntervals: RRIntervals? = nil) throws {
        try self.init(uuid: uuid, type: type, quantity: quantity, start: start, end: end, source: source,
                      device: device, metadata: metadata, rrIntervals: rrIntervals, checkingPlausibility: true)
    }

    /// Creates and validates a sample; `checkingPlausibility: false` skips only the plausible
    /// range, for reading back what an older version stored (it stays readable and deletable).
    package init(uuid: UUID, type: QuantityType, quantity: Quantity, start: Date, end: Date, source: Source,
                 device: Device?, metadata: Metadata, rrIntervals: RRIntervals?, checkingPlausibility: Bool,
                 seriesIndex: Int? = nil) throws {
        // A quantity already in the canonical unit (nearly all: the store's, a strap's) needs no
        // lookup of the type's parsed unit (a locked dictionary keyed by its string).
        let canonicalUnit = quantity.unit.unitString == type.canonicalUnitString ? quantity.unit : type.canonicalUnit
        guard quantity.unit.isCompatible(with: canonicalUnit) else {
            throw HealthModelError.incompatibleUnits(quantity.unit, canonicalUnit)
        }
        guard quantity.value.isFinite else { throw HealthModelError.notFinite(type: type.identifier) }
        if !type.allowsNegativeValues, quantity.value < 0 {
            throw HealthModelError.negativeValue(type: type.identifier, value: quantity.value)
        }
        let canonical = (try? quantity.unit.convert(quantity.value, to: canonicalUnit)) ?? quantity.value
        if checkingPlausibility, let range = type.plausibleRange {
            guard canonical.isFinite, range.contains(canonical) else {
                throw HealthModelError.implausibleValue(type: type.identifier, value: canonical,
                                                        unit: type.canonicalUnitString, range: range)
            }
        }
        guard start <= end else {
            throw HealthModelError.startAfterEnd(start: ISO8601.string(start), end: ISO8601.string(end))
        }
        try metadata.validate()
        self.uuid = uuid
        self.type = type
        self.quantity = quantity
        self.startDate = start
        self.endDate = end
        self.source = source
        self.device = (device?.isEmpty ?? true) ? nil : device
        self.metadata = metadata
        self.rrIntervals = rrIntervals
        self.seriesIndex = seriesIndex
        self.canonicalValue = canonical
    }

    /// This sample as quantity `index` of the series whose UUID it has (a series' quantity, as
    /// `samples` reads it and `import` saves it back). A negative index is refused.
    public func inSeries(index: Int) throws -> QuantitySample {
        guard index >= 0 else { throw HealthModelError.invalidMetadata(key: "series", reason: "a quantity's index in its series is 0 or more (got \(index))") }
        return try QuantitySample(uuid: uuid, type: type, quantity: quantity, start: startDate, end: endDate, source: source,
                                  device: device, metadata: metadata, rrIntervals: rrIntervals, checkingPlausibility: false,
                                  seriesIndex: index)
    }

    /// The sample's span in seconds (0 for an instantaneous reading).
    public var duration: TimeInterval { endDate.timeIntervalSince(startDate) }
}
