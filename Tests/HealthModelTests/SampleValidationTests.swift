import Foundation
import HealthModel
import Testing

@Suite("Sample validation: bad input is rejected with what and why")
struct SampleValidationTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let watch = Source(name: "Watch")

    @Test("a valid heart-rate sample keeps its fields and converts to the canonical unit")
    func valid() throws {
        let s = try QuantitySample(type: .heartRate, quantity: Quantity(1.2, .countPerSecond),
                                   start: now, end: now, source: watch,
                                   metadata: Metadata(heartRateSensorLocation: .chest))
        #expect(abs(s.canonicalValue - 72) < 1e-9)
        #expect(s.metadata.heartRateSensorLocation == .chest)
        #expect(s.device == nil)
    }

    @Test("kg is not a heart rate")
    func wrongUnit() throws {
        #expect(throws: HealthModelError.incompatibleUnits(.kilogram, .countPerMinute)) {
            try QuantitySample(type: .heartRate, quantity: Quantity(70, .kilogram), start: now, end: now, source: watch)
        }
    }

    @Test("NaN and infinity are rejected", arguments: [Double.nan, .infinity, -.infinity])
    func notFinite(value: Double) {
        #expect(throws: HealthModelError.notFinite(type: "stepCount")) {
            try QuantitySample(type: .stepCount, quantity: Quantity(value, .count), start: now, end: now, source: watch)
        }
    }

    @Test("negative counts are rejected")
    func negative() {
        #expect(throws: HealthModelError.negativeValue(type: "stepCount", value: -3)) {
            try QuantitySample(type: .stepCount, quantity: Quantity(-3, .count), start: now, end: now, source: watch)
        }
    }

    @Test("start after end is rejected and both times are named")
    func startAfterEnd() {
        do {
            _ = try QuantitySample(type: .stepCount, quantity: Quantity(3, .count),
                                   start: now.addingTimeInterval(60), end: now, source: watch)
            Issue.record("should throw")
        } catch {
            #expect("\(error)".contains("after it ends"))
            #expect("\(error)".contains(ISO8601.string(now)))
        }
    }

    @Test("implausible values are refused per type: heart rate 100000, steps 1.5e308; the range ends are accepted")
    func plausibleRanges() throws {
        func make(_ type: QuantityType, _ value: Double, _ unit: HealthUnit? = nil) throws -> QuantitySample {
            try QuantitySample(type: type, quantity: Quantity(value, unit ?? type.canonicalUnit), start: now, end: now, source: .manual)
        }
        #expect(throws: HealthModelError.implausibleValue(type: "heartRate", value: 100_000, unit: "count/min", range: 0...500)) {
            try make(.heartRate, 100_000)
        }
        #expect(throws: HealthModelError.self) { try make(.stepCount, 1.5e308) }
        #expect(throws: HealthModelError.self) { try make(.heartRate, 9, .countPerSecond) }   // 540 count/min
        #expect(throws: HealthModelError.self) { try make(.bodyMass, 1001) }
        #expect(throws: HealthModelError.self) { try make(.stepCount, 1_000_001) }
        for type in QuantityTypeRegistry.standard.all {
            let range = try #require(type.plausibleRange, "\(type) has no plausible range")
            _ = try make(type, range.lowerBound)
            _ = try make(type, range.upperBound)
            #expect(!type.isPlausible(range.upperBound.nextUp) && !type.isPlausible(.infinity))
        }
        let message = "\(HealthModelError.implausibleValue(type: "heartRate", value: 100_000, unit: "count/min", range: 0...500))"
        #expect(message.contains("100000 count/min") && message.contains("between 0 and 500"), "\(message)")
    }

    @Test("unknown types are rejected by the registry")
    func unknownType() {
        #expect(throws: HealthModelError.unknownType("bloodFoo")) { try QuantityTypeRegistry.standard.type("bloodFoo") }
    }

    @Test("a sync identifier needs a sync version")
    func syncVersion() {
        #expect(throws: HealthModelError.self) {
            try QuantitySample(type: .stepCount, quantity: Quantity(3, .count), start: now, end: now, source: watch,
                               metadata: Metadata(syncIdentifier: "ped:1"))
        }
    }

    @Test("statistics options must fit the aggregation style")
    func optionRules() throws {
        try StatisticsOptions(names: "discreteAverage,discreteMin,discreteMax,mostRecent").validate(for: .heartRate)
        try StatisticsOptions(names: "cumulativeSum,separateBySource").validate(for: .stepCount)
        #expect(throws: HealthModelError.self) { try StatisticsOptions.cumulativeSum.validate(for: .heartRate) }
        #expect(throws: HealthModelError.self) { try StatisticsOptions.discreteAverage.validate(for: .stepCount) }
        #expect(throws: HealthModelError.self) { try StatisticsOptions(names: "average") }
    }

    @Test("adding a type is data: a registered type validates like the built-ins")
    func registerType() throws {
        var registry = QuantityTypeRegistry.standard
        try registry.register(QuantityType(identifier: "flightsClimbed", canonicalUnit: "count",
                                           aggregationStyle: .cumulative, summary: "floors"))
        let t = try registry.type("flightsClimbed")
        #expect(throws: HealthModelError.self) {
            try QuantitySample(type: t, quantity: Quantity(1, .meter), start: now, end: now, source: watch)
        }
        #expect(throws: HealthModelError.self) {
            try registry.register(QuantityType(identifier: "x", canonicalUnit: "furlong", aggregationStyle: .cumulative, summary: ""))
        }
    }

    @Test("v7 UUIDs sort by creation time and carry version 7")
    func uuidV7() {
        let a = UUID.timeOrdered(at: now), b = UUID.timeOrdered(at: now.addingTimeInterval(0.002))
        #expect(a.uuidString < b.uuidString)
        #expect(a.uuidString.dropFirst(14).first == "7")
    }

    @Test("a seeded v7 id has the same bits in every version (import derives ids this way)")
    func uuidV7SeededBitsArePinned() {
        struct Fixed: RandomNumberGenerator {
            var values: [UInt64]
            mutating func next() -> UInt64 { values.removeFirst() }
        }
        // Made with the generator-taking maker as it was before the one-maker change.
        var g = Fixed(values: [0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210])
        #expect(UUID.timeOrdered(at: Date(timeIntervalSince1970: 1_790_000_000.123), using: &g).uuidString
                == "01A0C450-6C7B-7301-AFCD-AB896745DCFE")
        var ones = Fixed(values: [.max, .max])
        #expect(UUID.timeOrdered(at: Date(timeIntervalSince1970: 0), using: &ones).uuidString
                == "00000000-0000-7FFF-BFFF-FFFFFFFFFFFF")
    }

    @Test("the generator's ids strictly ascend, carry version 7 and variant 10, and are now-dated")
    func uuidV7GeneratorAscends() {
        var g = UUIDv7Generator()
        let before = UInt64(Date().timeIntervalSince1970 * 1000)
        // Far more than 4,096 per millisecond: the counter runs out and borrows milliseconds.
        let ids = (0..<20_000).map { _ in g.next() }
        let after = UInt64(Date().timeIntervalSince1970 * 1000)
        let strings = ids.map(\.uuidString)
        #expect(zip(strings, strings.dropFirst()).allSatisfy { $0 < $1 })
        #expect(ids.allSatisfy { $0.uuid.6 >> 4 == 7 && $0.uuid.8 >> 6 == 0b10 })
        let ms = { (u: UUID) -> UInt64 in withUnsafeBytes(of: u.uuid) { b in (0..<6).reduce(UInt64(0)) { $0 << 8 | UInt64(b[$1]) } } }
        #expect(ms(ids[0]) >= before && ms(ids[0]) <= after)
    }

    @Test("a v7 UUID for a date out of the 48-bit range clamps instead of trapping")
    func uuidV7Clamps() {
        // Issue #17 audit: UInt64(t × 1000) trapped for a far-off date from outside.
        let far = UUID.timeOrdered(at: Date(timeIntervalSince1970: 1e300))
        let before = UUID.timeOrdered(at: Date(timeIntervalSince1970: -1e300))
        #expect(far.uuidString.hasPrefix("FFFFFFFF-FFFF-7"))
        #expect(before.uuidString.hasPrefix("00000000-0000-7"))
        #expect(UUID.timeOrdered(at: Date(timeIntervalSince1970: .nan)).uuidString.hasPrefix("00000000-0000-7"))
    }

    @Test("ISO 8601 round-trips whole and fractional seconds")
    func iso() {
        #expect(ISO8601.string(now) == "2026-09-21T14:13:20Z")
        #expect(ISO8601.date("2026-09-21T14:13:20Z") == now)
        #expect(ISO8601.date("2026-09-21T14:13:20.250Z") == now.addingTimeInterval(0.25))
        #expect(ISO8601.date("2026-09-21T16:13:20+02:00") == now)
        #expect(ISO8601.date("yesterday") == nil)
    }

    @Test("a quantity of minus zero is zero: the same value, the same stored sample")
    func minusZeroIsZero() {
        #expect(Quantity(-0.0, .count).value.sign == .plus)
        #expect(Quantity(-0.0, .count) == Quantity(0, .count))
        #expect(Quantity(-2, .count).value == -2)
    }
}
