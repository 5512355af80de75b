/// Why a value could not enter the health model. Every case's ``description`` says what was
/// wrong and why, in one sentence a user can act on.
public enum HealthModelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The unit string is not in HealthKit's grammar, or names a unit HealthGate does not know.
    case invalidUnit(String, reason: String)
    /// The two units measure different things (for example `kg` and `count/min`).
    case incompatibleUnits(HealthUnit, HealthUnit)
    /// No quantity type has this identifier.
    case unknownType(String)
    /// The value is NaN or infinite.
    case notFinite(type: String)
    /// The value is negative for a type that only has non-negative values.
    case negativeValue(type: String, value: Double)
    /// The sample starts after it ends.
    case startAfterEnd(start: String, end: String)
    /// A sync identifier was given without a sync version, or the reverse.
    case syncVersionMissing(String)
    /// A statistics option that does not fit the type's aggregation style.
    case optionNotAllowed(option: String, type: String, style: AggregationStyle)
    /// A metadata key or value that the model does not accept.
    case invalidMetadata(key: String, reason: String)
    /// The value is outside the type's plausible range (``QuantityType/plausibleRange``).
    case implausibleValue(type: String, value: Double, unit: String, range: ClosedRange<Double>)

    public var description: String {
        switch self {
        case .invalidUnit(let s, let reason):
            return "'\(s)' is not a valid unit: \(reason)."
        case .incompatibleUnits(let a, let b):
            return "'\(a)' and '\(b)' are incompatible units: '\(a)' measures \(a.dimension) but '\(b)' measures \(b.dimension)."
        case .unknownType(let id):
            return "'\(id)' is not a known quantity type (run 'healthgate types' for the list)."
        case .notFinite(let type):
            return "a \(type) value must be a finite number, not NaN or infinity."
        case .negativeValue(let type, let value):
            return "a \(type) value cannot be negative (got \(value))."
        case .startAfterEnd(let start, let end):
            return "the sample starts (\(start)) after it ends (\(end)); start must be at or before end."
        case .syncVersionMissing(let id):
            return "sync identifier '\(id)' needs a sync version (an integer); a sync version needs a sync identifier."
        case .optionNotAllowed(let option, let type, let style):
            return "\(option) cannot be used with \(type), whose aggregation style is \(style.rawValue): " +
                (style == .cumulative ? "cumulative types support only cumulativeSum (and mostRecent)."
                                      : "discrete types support discreteAverage, discreteMin, discreteMax and mostRecent.")
        case .invalidMetadata(let key, let reason):
            return "metadata '\(key)' is invalid: \(reason)."
        case .implausibleValue(let type, let value, let unit, let range):
            func n(_ x: Double) -> String { x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : "\(x)" }
            return "a \(type) value of \(n(value)) \(unit) is not plausible for one sample: it must be between \(n(range.lowerBound)) and \(n(range.upperBound)) \(unit) (a sensor fault or a typo; see docs/input-rules.md)."
        }
    }
}
