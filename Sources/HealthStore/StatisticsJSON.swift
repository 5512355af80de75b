import Foundation
import HealthModel

// The `--json` shape of statistics, beside its type (as StoreJSON.swift does for the others), so
// `healthgate stats --json` and the HTTP API's GET /v1/statistics print one shape, not two copies.

extension Statistics {
    /// One result: the requested keys of sum, average, min, max, mostRecent (null when no sample
    /// contributed), `unit`, and `sources` with separateBySource. Values as they are (convert first).
    package func jsonObject(options: StatisticsOptions, unit: HealthUnit) -> [String: Any] {
        var o = values.jsonObject(options: options)
        o["unit"] = unit.unitString
        if let sources { o["sources"] = sources.map { $0.jsonObject(options: options) } }
        return o
    }

    /// One bucket of a collection: ``jsonObject(options:unit:)`` plus `start` and `end` (UTC).
    package func bucketJSONObject(options: StatisticsOptions, unit: HealthUnit) -> [String: Any] {
        var o = jsonObject(options: options, unit: unit)
        o["start"] = start.map(ISO8601.string) ?? NSNull()
        o["end"] = end.map(ISO8601.string) ?? NSNull()
        return o
    }
}

extension StatisticValues {
    /// The requested keys (null when no sample contributed).
    package func jsonObject(options: StatisticsOptions) -> [String: Any] {
        var o: [String: Any] = [:]
        func put(_ key: String, _ opt: StatisticsOptions, _ x: Double?) {
            if options.contains(opt) { o[key] = x ?? NSNull() }
        }
        put("sum", .cumulativeSum, sum)
        put("average", .discreteAverage, average)
        put("min", .discreteMin, minimum)
        put("max", .discreteMax, maximum)
        put("mostRecent", .mostRecent, mostRecent)
        return o
    }
}

extension SourceStatistics {
    /// ``StatisticValues/jsonObject(options:)`` plus the source's name, identifier and rank.
    package func jsonObject(options: StatisticsOptions) -> [String: Any] {
        var o = values.jsonObject(options: options)
        o["name"] = source.name
        o["identifier"] = source.identifier
        o["rank"] = rank
        return o
    }
}
