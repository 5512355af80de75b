import Foundation

/// What a statistics query computes (HKStatisticsOptions).
public struct StatisticsOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Per-source results as well as the merged one.
    public static let separateBySource = StatisticsOptions(rawValue: 1 << 0)
    /// Mean of a discrete type (time-weighted for temporally weighted types).
    public static let discreteAverage = StatisticsOptions(rawValue: 1 << 1)
    /// Minimum of a discrete type.
    public static let discreteMin = StatisticsOptions(rawValue: 1 << 2)
    /// Maximum of a discrete type.
    public static let discreteMax = StatisticsOptions(rawValue: 1 << 3)
    /// Sum of a cumulative type, merged across sources.
    public static let cumulativeSum = StatisticsOptions(rawValue: 1 << 4)
    /// The latest sample's value (by end date); valid for every type.
    public static let mostRecent = StatisticsOptions(rawValue: 1 << 5)

    /// The names used on the command line, in the order they are documented.
    public static let names: [(String, StatisticsOptions)] = [
        ("discreteAverage", .discreteAverage), ("discreteMin", .discreteMin), ("discreteMax", .discreteMax),
        ("cumulativeSum", .cumulativeSum), ("mostRecent", .mostRecent), ("separateBySource", .separateBySource),
    ]

    /// Parses a comma-separated list such as `discreteAverage,discreteMin`.
    public init(names list: String) throws {
        var result: StatisticsOptions = []
        for raw in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !raw.isEmpty {
            guard let (_, o) = Self.names.first(where: { $0.0.lowercased() == raw.lowercased() }) else {
                throw HealthModelError.invalidMetadata(
                    key: "option", reason: "'\(raw)' is not a statistics option (use \(Self.names.map(\.0).joined(separator: ", ")))")
            }
            result.insert(o)
        }
        self = result
    }

    /// Checks the options against a type the way HealthKit does: discrete options on a
    /// cumulative type, or `cumulativeSum` on a discrete one, is an error.
    public func validate(for type: QuantityType) throws {
        let discrete: StatisticsOptions = [.discreteAverage, .discreteMin, .discreteMax]
        if type.aggregationStyle == .cumulative {
            if let bad = Self.names.first(where: { discrete.contains($0.1) && contains($0.1) }) {
                throw HealthModelError.optionNotAllowed(option: bad.0, type: type.identifier, style: type.aggregationStyle)
            }
        } else if contains(.cumulativeSum) {
            throw HealthModelError.optionNotAllowed(option: "cumulativeSum", type: type.identifier, style: type.aggregationStyle)
        }
    }
}
