import Foundation
import HealthModel
import Testing
@testable import HealthStore

/// The lower bound a range query takes from the rollups (`earliestOverlappingStart`): a query
/// from `from` no longer searches the type's index from its first sample, and loses nothing —
/// long spans that began slots or days before `from`, instants on `from`, slot edges, a span
/// whose slot a delete made stale. Every answer is compared with a filter over all samples.
@Suite struct OverlapBoundTests {
    @Test("range queries equal a brute-force overlap filter: long spans, instants on the bound, slot edges, after deletes")
    func equalsBruteForce() throws {
        let tmp = try TempStore()
        var rng = SplitMix64(seed: 15)
        var all: [QuantitySample] = []
        for _ in 0..<400 {
            let start = Double(rng.next() % 200_000) - 5_000
            let kind = rng.next() % 4
            let length: Double = kind == 0 ? 0 : kind == 1 ? Double(rng.next() % 900) : kind == 2 ? 900 : Double(rng.next() % 250_000)
            all.append(try sample(.stepCount, 10, from: start, to: start + length))
        }
        // On slot edges (multiples of 900 s past the epoch) and exactly on the bounds used below.
        all.append(try sample(.stepCount, 1, from: 99_900, to: 99_900))
        all.append(try sample(.stepCount, 1, from: 99_000, to: 99_900.5))
        all.append(try sample(.stepCount, 1, from: -3_000, to: 400_000))
        try tmp.store.save(all)
        func check(_ label: String) throws {
            let stored = try tmp.store.samples(SampleQuery(type: .stepCount))
            for from in [-5_000.0, 0, 899, 900, 99_900, 99_900.5, 150_000, 199_999, 400_000] {
                for length in [0.5, 900, 10_000] {
                    let (a, b) = (t(from), t(from + length))
                    let got = Set(try tmp.store.samples(SampleQuery(type: .stepCount, start: a, end: b)).map(\.uuid))
                    let want = Set(stored.filter { s in
                        s.startDate < b && (s.endDate > a || (s.startDate == s.endDate && s.startDate >= a))
                    }.map(\.uuid))
                    #expect(got == want, "\(label): [\(from), \(from + length)): \(got.count) vs \(want.count)")
                    let openEnd = Set(try tmp.store.samples(SampleQuery(type: .stepCount, start: a)).map(\.uuid))
                    #expect(openEnd == Set(stored.filter { $0.endDate > a || ($0.startDate == $0.endDate && $0.startDate >= a) }.map(\.uuid)), "\(label): from \(from)")
                }
            }
        }
        try check("as saved")
        // Deleting the longest spans leaves their slots stale until refreshed: still a superset.
        let long = all.filter { $0.duration > 50_000 }.map(\.uuid)
        #expect(try tmp.store.delete(uuids: Array(long.prefix(long.count / 2))) > 0)
        try check("after deletes")
    }
}
