import Foundation
import HealthModel
@testable import HealthStore
import Testing

/// One set of rules for `healthgate stats` and `GET /v1/statistics`: each front-end only names
/// the fields its own way.
@Suite("Statistics requests: one reading of options, zones, ranges and buckets for the CLI and the API")
struct StatisticsRequestTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let utc = TimeZone(identifier: "UTC")!

    @Test("no options: the type's defaults (the sum, or the average, min and max); separateBySource adds to them")
    func defaults() throws {
        #expect(try StatisticsRequest(type: .stepCount).plan(names: .commandLine, defaultZone: Self.utc).query.options == .cumulativeSum)
        let hr = try StatisticsRequest(type: .heartRate, separateBySource: true).plan(names: .queryParameters, defaultZone: Self.utc)
        #expect(hr.query.options == [.discreteAverage, .discreteMin, .discreteMax, .separateBySource])
        #expect(hr.unit == .countPerMinute && hr.interval == nil)
    }

    @Test("dates without an offset, and day buckets, are in the named zone, else in the front-end's default")
    func zones() throws {
        let named = try StatisticsRequest(type: .stepCount, from: "2026-11-02", interval: "1d", anchor: "2026-11-02T06:00:00",
                                          timeZone: "europe/berlin").plan(names: .queryParameters, defaultZone: Self.utc)
        #expect(named.query.start == ISO8601.date("2026-11-01T23:00:00Z"))
        #expect(named.anchor == ISO8601.date("2026-11-02T05:00:00Z"))
        #expect(named.timeZone.identifier == "Europe/Berlin")
        let unnamed = try StatisticsRequest(type: .stepCount, from: "2026-11-02").plan(names: .commandLine, defaultZone: Self.berlin)
        #expect(unnamed.query.start == ISO8601.date("2026-11-01T23:00:00Z") && unnamed.timeZone == Self.berlin)
        let offset = try StatisticsRequest(type: .stepCount, from: "2026-11-02T00:00:00Z").plan(names: .commandLine, defaultZone: Self.berlin)
        #expect(offset.query.start == ISO8601.date("2026-11-02T00:00:00Z"))
    }

    @Test("each mistake is one sentence naming the field as the front-end names it", arguments: [
        (StatisticsRequest(type: .stepCount, anchor: "2026-11-02"), "--anchor needs --interval", "query parameter 'anchor' needs 'interval'"),
        (StatisticsRequest(type: .stepCount, from: "2026-11-03", to: "2026-11-03"), "--to (", "query parameter 'to' ("),
        (StatisticsRequest(type: .stepCount, interval: "1M"), "--interval ", "query parameter 'interval' "),
        (StatisticsRequest(type: .stepCount, options: "discreteMax"), "--option", "query parameter 'options'"),
        (StatisticsRequest(type: .stepCount, timeZone: "UTC+2"), "--tz", "query parameter 'tz'"),
        (StatisticsRequest(type: .heartRate, unit: "kg"), "--unit", "query parameter 'unit'"),
        (StatisticsRequest(type: .heartRate, to: "2026-11-02T08:00:00 01:00"), "--to", "query parameter 'to'"),
    ])
    func mistakes(request: StatisticsRequest, cli: String, api: String) {
        #expect(throws: InputValueError.self) { try request.plan(names: .commandLine, defaultZone: Self.utc) }
        do { _ = try request.plan(names: .commandLine, defaultZone: Self.utc) } catch { #expect(error.message.hasPrefix(cli), "\(error.message)") }
        do { _ = try request.plan(names: .queryParameters, defaultZone: Self.utc) } catch {
            #expect(error.message.hasPrefix(api), "\(error.message)")
            // A date's message tells an API client how to write an offset's '+' in a URL.
            #expect(!api.hasSuffix("'to'") || error.message.contains("%2B"), "\(error.message)")
        }
    }
}
