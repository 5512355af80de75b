import Foundation
import HealthModel
import Testing
@testable import HealthStore

@Suite("Merging across sources: the higher-priority source wins, nothing counts twice")
struct SourceMergingTests {
    let phone = Source(name: "iPhone", identifier: "com.example.phone")
    let watch = Source(name: "Watch", identifier: "com.example.watch")

    /// The walk: the phone counts 1000 steps over 08:00–08:10, the watch 1100 over 08:00–08:10
    /// (the same walk) plus 300 over 08:10–08:15 when the phone was left behind.
    func walk(_ tmp: TempStore) throws {
        try tmp.store.save([
            try sample(.stepCount, 1000, from: 0, to: 600, source: phone),
            try sample(.stepCount, 1100, from: 0, to: 600, source: watch),
            try sample(.stepCount, 300, from: 600, to: 900, source: watch),
        ])
    }

    @Test("the iPhone + Watch walk: the overlap is counted once, from the higher-priority source")
    func walkNotDoubleCounted() throws {
        let tmp = try TempStore()
        try walk(tmp)
        // Both are third-party; the watch was seen last, so it ranks first (newest on top).
        #expect(try tmp.store.sources().map(\.source.name) == ["Watch", "iPhone"])
        let st = try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: .cumulativeSum))
        #expect(st.values.sum == 1400)
        try tmp.store.setPriority(source: "iPhone", rank: 1)
        let again = try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: .cumulativeSum))
        #expect(again.values.sum == 1300)   // phone's 1000, plus the watch's uncovered 300
    }

    @Test("a partly covered lower-priority sample counts only its uncovered fraction")
    func partialCover() throws {
        let tmp = try TempStore()
        try tmp.store.save([
            try sample(.stepCount, 600, from: 0, to: 600, source: phone),     // ranked second
            try sample(.stepCount, 100, from: 200, to: 300, source: watch),   // ranked first
        ])
        let sum = try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: .cumulativeSum)).values.sum!
        #expect(abs(sum - (100 + 500)) < 1e-9)
    }

    @Test("discrete: a covered lower-priority reading is dropped, an uncovered one kept")
    func discreteMerge() throws {
        let tmp = try TempStore()
        try tmp.store.save([
            try sample(.heartRate, 200, from: 30, source: phone),             // inside the watch's span: dropped
            try sample(.heartRate, 50, from: 100, source: phone),             // outside: kept
            try sample(.heartRate, 80, from: 0, to: 60, source: watch),
        ])
        let v = try tmp.store.statistics(StatisticsQuery(type: .heartRate, options: [.discreteMax, .discreteMin])).values
        #expect(v.maximum == 80 && v.minimum == 50 && v.sampleCount == 2)
    }

    @Test("separateBySource gives each source's own numbers next to the merged ones")
    func separateBySource() throws {
        let tmp = try TempStore()
        try walk(tmp)
        let st = try tmp.store.statistics(StatisticsQuery(type: .stepCount, options: [.cumulativeSum, .separateBySource]))
        #expect(st.values.sum == 1400)
        let per = try #require(st.sources)
        #expect(per.map(\.source.name) == ["Watch", "iPhone"])
        #expect(per.map(\.values.sum) == [1400, 1000])
        #expect(per.map(\.rank) == [1, 2])
    }

    @Test("default priority: manual entry, then HealthGate's own sources, then newest third-party first")
    func defaultPriority() throws {
        let tmp = try TempStore()
        let ble = Source(name: "HealthGate BLE", identifier: "org.healthgate.ble")
        for src in [phone, ble, watch, Source.manual, Source(name: "Scale", identifier: "com.example.scale")] {
            try tmp.store.save([try sample(.bodyMass, 70, from: 0, source: src)])
        }
        #expect(try tmp.store.sources().map(\.source.name) == ["Manual entry", "HealthGate BLE", "Scale", "Watch", "iPhone"])
        #expect(try tmp.store.sources().map(\.rank) == [1, 2, 3, 4, 5])
        try tmp.store.setPriority(source: "com.example.phone", rank: 2)
        #expect(try tmp.store.sources().map(\.source.name) == ["Manual entry", "iPhone", "HealthGate BLE", "Scale", "Watch"])
        try tmp.store.setPriority(source: "Manual entry", rank: 99)
        #expect(try tmp.store.sources().map(\.source.name) == ["iPhone", "HealthGate BLE", "Scale", "Watch", "Manual entry"])
        #expect(throws: StoreError.self) { try tmp.store.setPriority(source: "nobody", rank: 1) }
        #expect(try tmp.store.sources(type: .heartRate).isEmpty)
        #expect(try tmp.store.sources(type: .bodyMass).map(\.sampleCount) == [1, 1, 1, 1, 1])
    }
}
