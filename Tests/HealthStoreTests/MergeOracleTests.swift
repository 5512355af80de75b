import Foundation
import HealthModel
import Testing
@testable import HealthStore

/// Random overlapping step samples from three sources, checked against a brute-force oracle that
/// walks the timeline second by second: in each second, only the highest-priority source with a
/// sample covering it counts, each of its covering samples adding value/duration.
@Suite("Merging matches a second-by-second oracle on random overlapping data")
struct MergeOracleTests {
    @Test("merged sums and hourly buckets equal the oracle", arguments: [1, 2, 3, 4, 5] as [UInt64])
    func oracle(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let sources = (0..<3).map { Source(name: "S\($0)", identifier: "com.example.s\($0)") }
        var samples: [QuantitySample] = []
        var spans: [(src: Int, start: Int, end: Int, value: Double)] = []
        for _ in 0..<60 {
            let src = Int.random(in: 0..<3, using: &rng)
            let start = Int.random(in: 0..<7000, using: &rng)
            let end = start + Int.random(in: 1..<900, using: &rng)
            let value = Double(Int.random(in: 0..<500, using: &rng))
            spans.append((src, start, end, value))
            samples.append(try sample(.stepCount, value, from: Double(start), to: Double(end), source: sources[src]))
        }
        let tmp = try TempStore()
        try tmp.store.save(samples)
        // Shuffle priorities so the test does not depend on first-seen order.
        let order = sources.shuffled(using: &rng)
        for (i, s) in order.enumerated() { try tmp.store.setPriority(source: s.identifier, rank: i + 1) }
        let rank = Dictionary(uniqueKeysWithValues: try tmp.store.sources().map { ($0.source.name, $0.rank) })

        var perSecond = [Double](repeating: 0, count: 8000)
        for s in 0..<8000 {
            let covering = spans.filter { $0.start <= s && s + 1 <= $0.end }
            guard let best = covering.map({ rank["S\($0.src)"]! }).min() else { continue }
            for c in covering where rank["S\(c.src)"]! == best {
                perSecond[s] += c.value / Double(c.end - c.start)
            }
        }
        let total = perSecond.reduce(0, +)
        let st = try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: .cumulativeSum))
        #expect(abs((st.values.sum ?? 0) - total) < 1e-6)

        let buckets = try tmp.store.statisticsCollection(
            StatisticsQuery(type: .stepCount, options: .cumulativeSum, start: t(0), end: t(7200)),
            interval: .hours(1), timeZone: TimeZone(identifier: "UTC")!)
        #expect(buckets.count == 2)
        for (i, b) in buckets.enumerated() {
            let expected = perSecond[(i * 3600)..<((i + 1) * 3600)].reduce(0, +)
            #expect(abs((b.values.sum ?? 0) - expected) < 1e-6, "bucket \(i)")
        }
    }
}
