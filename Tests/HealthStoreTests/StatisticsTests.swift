import Foundation
import HealthModel
import Testing
@testable import HealthStore

@Suite("Statistics over a range: each option, option checks, time weighting, units")
struct StatisticsTests {
    @Test("heart rate: average, min, max and most recent of instantaneous readings")
    func heartRateOptions() throws {
        let tmp = try TempStore()
        let values: [Double] = [60, 90, 75, 81]
        try tmp.store.save(try values.enumerated().map { try sample(.heartRate, $1, from: Double($0) * 10) })
        let st = try tmp.store.statistics(StatisticsQuery(
            type: .heartRate, options: [.discreteAverage, .discreteMin, .discreteMax, .mostRecent]))
        let v = st.values
        #expect(abs(v.average! - values.reduce(0, +) / Double(values.count)) < 1e-9)
        #expect(v.minimum == values.min() && v.maximum == values.max())
        #expect(v.mostRecent == values.last && v.mostRecentEnd == t(30))
        #expect(v.sum == nil && st.sources == nil)
        #expect(st.unit == .countPerMinute)
    }

    @Test("steps: the sum counts only the part of each sample inside the range")
    func cumulativeSumInRange() throws {
        let tmp = try TempStore()
        try tmp.store.save([try sample(.stepCount, 600, from: 0, to: 600), try sample(.stepCount, 100, from: 600, to: 700)])
        #expect(try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: .cumulativeSum)).values.sum == 700)
        let part = try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: .cumulativeSum, start: t(300), end: t(650)))
        #expect(abs(part.values.sum! - 350) < 1e-9)   // 300 of the first + 50 of the second
    }

    @Test("options that do not fit the type throw, as in HealthKit")
    func mismatched() throws {
        let tmp = try TempStore()
        #expect(throws: HealthModelError.optionNotAllowed(option: "cumulativeSum", type: "heartRate", style: .discreteTemporallyWeighted)) {
            try tmp.store.statistics(StatisticsQuery(type: .heartRate, options: .cumulativeSum))
        }
        #expect(throws: HealthModelError.optionNotAllowed(option: "discreteAverage", type: "stepCount", style: .cumulative)) {
            try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: .discreteAverage))
        }
        #expect(throws: StoreError.self) {
            try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: .separateBySource))
        }
    }

    @Test("heart rate is weighted by time; an instantaneous reading weighs one second")
    func temporalWeighting() throws {
        let tmp = try TempStore()
        // 100 bpm for 59 s, then one instantaneous 40: (100·59 + 40·1) / 60 = 99
        try tmp.store.save([try sample(.heartRate, 100, from: 0, to: 59), try sample(.heartRate, 40, from: 120)])
        let avg = try tmp.store.statistics(StatisticsQuery(type: .heartRate, options: .discreteAverage)).values.average!
        #expect(abs(avg - 99) < 1e-9)
        // SDNN is arithmetic: the same two samples average plainly.
        try tmp.store.save([try sample(.heartRateVariabilitySDNN, 100, from: 0, to: 59),
                            try sample(.heartRateVariabilitySDNN, 40, from: 120)])
        let sdnn = try tmp.store.statistics(StatisticsQuery(type: .heartRateVariabilitySDNN, options: .discreteAverage))
        #expect(abs(sdnn.values.average! - 70) < 1e-9)
    }

    @Test("results convert to a compatible unit and refuse an incompatible one")
    func units() throws {
        let tmp = try TempStore()
        try tmp.store.save([try sample(.heartRate, 60, from: 0), try sample(.heartRate, 90, from: 1)])
        let st = try tmp.store.statistics(StatisticsQuery(type: .heartRate, options: [.discreteAverage, .discreteMax]))
        let hz = try st.converted(to: .countPerSecond)
        #expect(abs(hz.values.average! - 1.25) < 1e-12 && abs(hz.values.maximum! - 1.5) < 1e-12)
        #expect(hz.unit == .countPerSecond)
        #expect(throws: HealthModelError.incompatibleUnits(.countPerMinute, .kilogram)) { try st.converted(to: .kilogram) }
        try tmp.store.save([try sample(.activeEnergyBurned, 4.184, from: 0, to: 60)])
        let kcal = try tmp.store.statistics(StatisticsQuery(type: .activeEnergyBurned, options: .cumulativeSum)).converted(to: .kilocalorie)
        #expect(abs(kcal.values.sum! - 1) < 1e-12)
    }

    @Test("an empty range gives nil values and a zero count")
    func empty() throws {
        let tmp = try TempStore()
        let st = try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: .cumulativeSum))
        #expect(st.values.sum == nil && st.values.sampleCount == 0)
    }
}
