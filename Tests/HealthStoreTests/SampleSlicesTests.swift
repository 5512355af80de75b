import Foundation
import HealthModel
@testable import HealthStore
import Testing

/// `forEachSlice(of:seconds:)`: a query read a slice of start dates at a time gives exactly the
/// samples and the order of the whole query, whatever the range, the strict flags and the
/// samples that span or touch a slice's edges.
@Suite struct SampleSlicesTests {
    @Test("slices give the whole query's samples in its order: instants on edges, spans across them, series quantities, strict flags")
    func slicesEqualTheWholeQuery() throws {
        let tmp = try TempStore()
        var rng = SystemRandomNumberGenerator()
        var samples: [QuantitySample] = []
        // 0…1,000 s: instants on every 60-s edge and between, spans across edges, long spans.
        for t in stride(from: 0.0, through: 1_000, by: 30) { samples.append(try sample(.heartRate, 60 + t.truncatingRemainder(dividingBy: 40), from: t)) }
        for _ in 0..<200 {
            let a = Double(Int.random(in: 0...1_000, using: &rng)), len = Double(Int.random(in: 0...250, using: &rng))
            samples.append(try sample(.stepCount, Double(Int.random(in: 1...100, using: &rng)), from: a, to: a + len))
        }
        try tmp.store.save(samples)
        // A quantity series: one UUID, a quantity every 13 s, several on slice edges.
        try SeriesSampleTests.append(tmp.store, SeriesWriter(), times: (0..<70).map { t(Double($0) * 13).timeIntervalSince1970 })
        let starts: [Double?] = [nil, 0, 59, 60, 61, 500]
        let ends: [Double?] = [nil, 60, 61, 600, 1_001]
        for type in [nil, QuantityType.stepCount] {
            for from in starts {
                for to in ends where to == nil || from == nil || to! > from! {
                    for (strictStart, strictEnd) in [(false, false), (true, false), (false, true), (true, true)] {
                        let q = SampleQuery(type: type, start: from.map(t),
                                            end: to.map(t),
                                            strictStartDate: strictStart, strictEndDate: strictEnd)
                        var sliced: [QuantitySample] = []
                        var calls = 0
                        try tmp.store.forEachSlice(of: q, seconds: 60) { sliced += $0; calls += 1 }
                        let whole = try tmp.store.samples(q)
                        #expect(sliced.map(\.uuid) == whole.map(\.uuid), "\(String(describing: type)) [\(String(describing: from)), \(String(describing: to))) strict \(strictStart)/\(strictEnd)")
                        if whole.count > 100 { #expect(calls > 1, "a long range is read in several slices") }
                    }
                }
            }
        }
    }

    @Test("an empty store, a range before every sample, a descending or limited query: one answer, no slices")
    func edges() throws {
        let tmp = try TempStore()
        var calls = 0
        try tmp.store.forEachSlice(of: SampleQuery()) { _ in calls += 1 }
        #expect(calls == 0)
        try tmp.store.save([try sample(.heartRate, 60, from: 100), try sample(.heartRate, 61, from: 5_000)])
        try tmp.store.forEachSlice(of: SampleQuery(end: t(50))) { _ in calls += 1 }
        #expect(calls == 0)
        var got: [[Double]] = []
        try tmp.store.forEachSlice(of: SampleQuery(ascending: false)) { got.append($0.map(\.quantity.value)) }
        #expect(got == [[61, 60]])
        got = []
        try tmp.store.forEachSlice(of: SampleQuery(), seconds: 60) { got.append($0.map(\.quantity.value)) }
        #expect(got == [[60], [61]], "empty slices between are not handed out")
    }

    @Test("a stray sample centuries before the rest costs a query, not one per empty slice; a start too large for a slice to move ends the walk")
    func emptySpansAreSkipped() throws {
        let tmp = try TempStore()
        let stray = -62_135_596_800 - t(0).timeIntervalSince1970   // 0001-01-01T00:00:00Z
        let now = t(0)
        try tmp.store.save([try sample(.bodyMass, 70, from: stray), try sample(.bodyMass, 71, from: 0), try sample(.bodyMass, 72, from: 7_200)])
        var got: [[Double]] = []
        let queries = try tmp.store.slices(of: SampleQuery(), seconds: 3600) { got.append($0.map(\.quantity.value)) }
        #expect(got == [[70], [71], [72]])
        #expect(queries <= 12, "\(queries) queries for three samples (one an hour: 17.6 million)")
        // The same with a range that starts in the empty span, and with a type filter.
        got = []
        _ = try tmp.store.slices(of: SampleQuery(type: .bodyMass, start: Date(timeIntervalSince1970: 0)), seconds: 3600) { got.append($0.map(\.quantity.value)) }
        #expect(got == [[71], [72]])
        // Seconds below the resolution of the dates: one slice for the rest, no endless walk.
        got = []
        _ = try tmp.store.slices(of: SampleQuery(start: now), seconds: 1e-9) { got.append($0.map(\.quantity.value)) }
        #expect(got.flatMap { $0 } == [71, 72])
    }
}
