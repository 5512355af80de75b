import Foundation
import HealthModel
import Testing

@Suite("Units: HKUnit grammar, conversion and compatibility")
struct UnitTests {
    @Test("count/min converts to count/s", arguments: [(72.0, 1.2), (60.0, 1.0), (0.0, 0.0)])
    func beatsPerMinuteToPerSecond(bpm: Double, perSecond: Double) throws {
        let value = try HealthUnit("count/min").convert(bpm, to: HealthUnit("count/s"))
        #expect(abs(value - perSecond) < 1e-12)
    }

    @Test("energy units agree: 1 kcal = 4.184 kJ = 4184 J")
    func energy() throws {
        #expect(abs(try HealthUnit("kcal").convert(1, to: .kilojoule) - 4.184) < 1e-12)
        #expect(abs(try HealthUnit("kJ").convert(1, to: HealthUnit("J")) - 1000) < 1e-9)
        #expect(abs(try HealthUnit("Cal").convert(1, to: HealthUnit("cal")) - 1000) < 1e-9)
    }

    @Test("time, length and mass with metric prefixes")
    func prefixes() throws {
        #expect(try HealthUnit("h").convert(1, to: HealthUnit("min")) == 60)
        #expect(try HealthUnit("hr").convert(2, to: HealthUnit("s")) == 7200)
        #expect(abs(try HealthUnit("ms").convert(1500, to: .second) - 1.5) < 1e-12)
        #expect(abs(try HealthUnit("km").convert(1.5, to: .meter) - 1500) < 1e-9)
        #expect(abs(try HealthUnit("g").convert(2500, to: .kilogram) - 2.5) < 1e-12)
        #expect(abs(try HealthUnit("mcg").convert(1, to: HealthUnit("mg")) - 0.001) < 1e-15)
        #expect(abs(try HealthUnit("dam").convert(1, to: .meter) - 10) < 1e-12)
    }

    @Test("compound units: '.' binds before '/', '^' raises, parentheses accepted")
    func compound() throws {
        let a = try HealthUnit("kg/m.s^2"), b = try HealthUnit("kg.m^-1.s^-2"), pa = try HealthUnit("Pa")
        #expect(a.dimension == b.dimension)
        #expect(a.dimension == pa.dimension)
        #expect(try a.convert(3, to: b) == 3)
        let c = try HealthUnit("ml/(kg*min)")
        #expect(abs(try c.convert(60, to: HealthUnit("L/kg.h")) - 3.6) < 1e-12)
    }

    @Test("an incompatible conversion names both units")
    func incompatible() throws {
        let kg = try HealthUnit("kg"), bpm = try HealthUnit("count/min")
        #expect(!kg.isCompatible(with: bpm))
        do {
            _ = try kg.convert(1, to: bpm)
            Issue.record("kg → count/min should throw")
        } catch let error as HealthModelError {
            #expect(error == .incompatibleUnits(kg, bpm))
            #expect(error.description.contains("'kg'") && error.description.contains("'count/min'"))
        }
    }

    @Test("invalid strings are rejected with a reason", arguments: ["", "bogus", "kg/m/s", "m^x", "m^0", "kcount", "kg..m", "degC/s",
                                                                      // Issue #17 audit: these trapped (abs(Int.min), Int8 overflow) or hung.
                                                                      "m^-9223372036854775808", "m^9223372036854775807", "m^10", "m^-10",
                                                                      "m.m.m.m.m.m.m.m.m", "m^9.m^9.m^9.m^9.m^9.m^9.m^9.m^9/s.s"])
    func invalid(text: String) {
        #expect(throws: HealthModelError.self) { try HealthUnit(text) }
    }

    @Test("the grammar's limits: exponents ±9, eight factors")
    func limits() throws {
        #expect(try HealthUnit("m^9").dimension == Dimension(length: 9))
        #expect(try HealthUnit("m^-9").dimension == Dimension(length: -9))
        #expect(try HealthUnit("m^9.m^9.m^9.m^9/m^9.m^9.m^9.m^9").dimension == .dimensionless)
    }

    @Test("temperatures convert with their offsets")
    func temperature() throws {
        #expect(abs(try HealthUnit("degC").convert(100, to: HealthUnit("degF")) - 212) < 1e-9)
        #expect(abs(try HealthUnit("degF").convert(32, to: HealthUnit("K")) - 273.15) < 1e-9)
    }

    @Test("conversion round-trips through every compatible pair")
    func roundTrips() throws {
        let groups = [["count/min", "count/s", "count/h", "count/ms"], ["kJ", "kcal", "J", "cal", "MJ"],
                      ["ms", "s", "min", "h", "d"], ["m", "km", "cm", "mi", "ft"], ["kg", "g", "lb", "oz"]]
        var rng = SplitMix64(seed: 42)
        for group in groups {
            let units = try group.map(HealthUnit.init)
            for a in units { for b in units {
                for _ in 0..<50 {
                    let v = Double(rng.next() % 1_000_000) / 7.0
                    let back = try b.convert(try a.convert(v, to: b), to: a)
                    #expect(abs(back - v) <= 1e-9 * max(1, abs(v)), "\(v) \(a) → \(b) → \(a) gave \(back)")
                }
            } }
        }
    }
}
