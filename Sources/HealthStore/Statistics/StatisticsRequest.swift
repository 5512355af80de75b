import Foundation
import HealthModel

/// A statistics request as written — `healthgate stats`'s options, `GET /v1/statistics`'s query
/// parameters — turned into a query by one set of rules: the default options of the type's
/// aggregation style, `[from, to)` not empty, bucket intervals, an anchor only with an interval,
/// dates without an offset read in the request's zone. Each front-end names the fields its own
/// way in the messages (``FieldNames``).
package struct StatisticsRequest: Sendable {
    /// The fields a message can name.
    package enum Field: Sendable {
        case options, from, to, interval, anchor, timeZone, unit
    }

    /// How a front-end names the fields: `full` starts a sentence (`--from`, `query parameter
    /// 'from'`), `short` refers to a field inside one (`--interval`, `'interval'`); `dateNote`
    /// ends a message about a date.
    package struct FieldNames: Sendable {
        package let full: @Sendable (Field) -> String
        package let short: @Sendable (Field) -> String
        package let dateNote: String

        /// `healthgate stats`'s flags.
        package static let commandLine = FieldNames(full: flag, short: flag, dateNote: "")

        /// `GET /v1/statistics`'s query parameters.
        package static let queryParameters = FieldNames(full: { "query parameter '\(parameter($0))'" }, short: { "'\(parameter($0))'" },
                                                        dateNote: " In a URL, write the '+' of an offset as %2B.")

        private static func flag(_ f: Field) -> String {
            switch f {
            case .options: "--option"
            case .from: "--from"
            case .to: "--to"
            case .interval: "--interval"
            case .anchor: "--anchor"
            case .timeZone: "--tz"
            case .unit: "--unit"
            }
        }

        private static func parameter(_ f: Field) -> String {
            switch f {
            case .options: "options"
            case .from: "from"
            case .to: "to"
            case .interval: "interval"
            case .anchor: "anchor"
            case .timeZone: "tz"
            case .unit: "unit"
            }
        }
    }

    /// The request read and checked.
    package struct Plan: Sendable {
        /// What to compute (its options completed with the type's defaults).
        package var query: StatisticsQuery
        /// The bucket length, for a collection; nil for one result over the range.
        package var interval: StatisticsInterval?
        /// Where buckets are counted from (nil: midnight of the range start in ``timeZone``).
        package var anchor: Date?
        /// The zone of day, week and month buckets and of dates written without an offset.
        package var timeZone: TimeZone
        /// The unit of the answer (the type's canonical unit unless one was asked for).
        package var unit: HealthUnit
    }

    /// The type, already resolved by the front-end (it says "required" and "unknown" its own way).
    package var type: QuantityType
    /// Statistics option names, comma-separated; empty: the type's defaults.
    package var options = ""
    package var from: String?
    package var to: String?
    package var interval: String?
    package var anchor: String?
    /// An IANA zone name.
    package var timeZone: String?
    package var unit: String?
    package var separateBySource = false
    /// A device filter (name, local identifier or alias).
    package var device: String?
    /// A source filter (name or identifier).
    package var source: String?

    /// A request as written; nil and empty fields are not given.
    package init(type: QuantityType, options: String = "", from: String? = nil, to: String? = nil, interval: String? = nil,
                 anchor: String? = nil, timeZone: String? = nil, unit: String? = nil, separateBySource: Bool = false,
                 device: String? = nil, source: String? = nil) {
        (self.type, self.options, self.from, self.to, self.interval) = (type, options, from, to, interval)
        (self.anchor, self.timeZone, self.unit, self.separateBySource) = (anchor, timeZone, unit, separateBySource)
        (self.device, self.source) = (device, source)
    }

    /// Reads and checks the request. `defaultZone` stands in when no zone is named: the system's
    /// for the command line, UTC for the API.
    /// - Throws: ``InputValueError``: one sentence naming the field, as `names` names it.
    package func plan(names: FieldNames, defaultZone: TimeZone) throws(InputValueError) -> Plan {
        let outUnit = try InputValues.unit(unit, for: type, option: names.full(.unit))
        var options = try InputValues.statisticsOptions(self.options, for: type, option: names.full(.options))
        if options.isEmpty || options == .separateBySource {
            options.formUnion(type.aggregationStyle == .cumulative ? .cumulativeSum : [.discreteAverage, .discreteMin, .discreteMax])
        }
        if separateBySource { options.insert(.separateBySource) }
        let zone = try InputValues.timeZone(timeZone, option: names.full(.timeZone)) ?? defaultZone
        func date(_ text: String?, _ field: Field) throws(InputValueError) -> Date? {
            guard let text else { return nil }
            do { return try InputValues.date(text, option: names.full(field), timeZone: zone) } catch {
                throw InputValueError(error.message + names.dateNote)
            }
        }
        let start = try date(from, .from), end = try date(to, .to)
        if let start, let end, end <= start {
            throw InputValueError("\(names.full(.to)) (\(ISO8601.string(end))) must be after \(names.short(.from)) (\(ISO8601.string(start))): the range [\(names.short(.from)), \(names.short(.to))) would be empty.")
        }
        var buckets: StatisticsInterval?
        if let interval {
            do { buckets = try StatisticsInterval(parsing: interval) } catch {
                throw InputValueError("\(names.full(.interval)) \(error)")
            }
        }
        if buckets == nil, anchor != nil {
            throw InputValueError("\(names.full(.anchor)) needs \(names.short(.interval)): it sets where the buckets start.")
        }
        let anchorDate = try date(anchor, .anchor)
        let query = StatisticsQuery(type: type, options: options, start: start, end: end, device: device, source: source)
        return Plan(query: query, interval: buckets, anchor: anchorDate, timeZone: zone, unit: outUnit)
    }
}
