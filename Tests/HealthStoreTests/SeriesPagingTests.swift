import Foundation
import HealthGateTesting
import HealthModel
import Testing
@testable import HealthStore

/// The change feed hands out a long series in pieces (docs/change-feed.md, "Quantity series"):
/// every quantity counts toward `limit`, an anchor can point inside a series, and a replica that
/// upserts by (uuid, index) ends equal to the store whatever is written, grown or deleted
/// between two pages.
@Suite struct SeriesPagingTests {
    typealias Replica = [String: QuantitySample]

    static func key(_ s: QuantitySample) -> String { "\(s.uuid)/\(s.seriesIndex.map(String.init) ?? "-")" }

    /// Applies one page to `replica`, checking the page keeps to the limit.
    static func apply(_ page: ChangeSet, to replica: inout Replica, limit: Int?) {
        if let limit { #expect(page.samples.count + page.deleted.count <= limit) }
        let gone = Set(page.deleted.map(\.uuid))
        if !gone.isEmpty { replica = replica.filter { !gone.contains($0.value.uuid) } }
        for s in page.samples { replica[key(s)] = s }
    }

    static func expectEqual(_ replica: Replica, _ store: HealthStore, _ note: String) throws {
        let all = try store.samples(SampleQuery())
        #expect(Set(replica.keys) == Set(all.map(key)), "\(note)")
        #expect(replica.count == all.count, "\(note)")
        for s in all where replica[key(s)]?.quantity.value != s.quantity.value {
            Issue.record("\(note): \(key(s)) differs")
            break
        }
    }

    @Test("a series written in one transaction (one position) comes in pages of at most the limit, the anchors pointing inside it")
    func oneLongSeries() throws {
        let tmp = try TempStore()
        let writer = SeriesWriter()
        try tmp.store.save([try sample(.stepCount, 10, from: 0, to: 60)])
        // 2,000 readings in one commit: seven chunks, all with the same change_seq.
        try SeriesSampleTests.append(tmp.store, writer, times: (0..<2000).map { 1_790_000_000 + Double($0) }, rr: [1000])
        try tmp.store.save([try sample(.stepCount, 20, from: 60, to: 120)])
        for limit in [1, 99, 300, 301, 2002] {
            var replica = Replica()
            var anchor: ChangeAnchor?
            var pages = 0, inside = 0
            while true {
                let page = try tmp.store.changes(since: anchor, limit: limit)
                Self.apply(page, to: &replica, limit: limit)
                if page.anchor.cursor != nil { inside += 1 }
                anchor = page.anchor
                pages += 1
                if !page.hasMore { break }
            }
            try Self.expectEqual(replica, tmp.store, "limit \(limit)")
            #expect(anchor == (try tmp.store.currentAnchor()))
            #expect(pages >= 2002 / limit, "limit \(limit): \(pages) pages")
            if limit < 2000 { #expect(inside > 0, "limit \(limit): no page ended inside the series") }
            // The anchor text carries the cursor and reads back equal.
            if let a = anchor { #expect(try ChangeAnchor(string: a.description) == a) }
        }
    }

    @Test("writes, growth (the open chunk rewritten), silences and deletes between pages: the replica always ends equal to the store")
    func churnBetweenPages() async throws {
        // Seconds of store work: off the cooperative pool (the one-thread pass has one thread).
        try await offThread { try Self.churn() }
    }

    static func churn() throws {
        let tmp = try TempStore()
        let writer = SeriesWriter()
        var rng = SplitMix64(seed: 0x5e71e5)
        var t = 1_790_000_000.0
        for limit in [1, 7, 299, 301] {
            var replica = Replica()
            var anchor: ChangeAnchor?
            for round in 0..<5 {
                // A page, then a change, until the feed is drained.
                var steps = 0
                while true {
                    let page = try tmp.store.changes(since: anchor, limit: limit)
                    Self.apply(page, to: &replica, limit: limit)
                    anchor = page.anchor
                    steps += 1
                    if steps % 3 == 1, steps < 40 {   // changes while pages are read, then the feed drains
                        switch Int.random(in: 0..<5, using: &rng) {
                        case 0, 1:   // grow the open series by a few (rewrites its open chunk)
                            let n = Int.random(in: 1...40, using: &rng)
                            try SeriesSampleTests.append(tmp.store, writer, times: (0..<n).map { t + Double($0) })
                            t += Double(n)
                        case 2:      // a long burst in one commit
                            try SeriesSampleTests.append(tmp.store, writer, times: (0..<400).map { t + Double($0) })
                            t += 400
                        case 3:      // a silence, then a new series, and a sample beside it
                            t += 600
                            try SeriesSampleTests.append(tmp.store, writer, times: [t])
                            t += 1
                            try tmp.store.save([try sample(.stepCount, Double(round), from: Double(round) * 60)])
                        default:     // delete the series a page may be inside of, or any sample
                            let victims = try tmp.store.samples(SampleQuery(sortBy: .startDate, ascending: false, limit: 1))
                            if let v = victims.first { try tmp.store.delete(uuids: [v.uuid]) }
                        }
                    }
                    if !page.hasMore && steps >= 40 { break }
                    if steps > 20_000 { Issue.record("limit \(limit): the feed does not drain"); return }
                }
                try Self.expectEqual(replica, tmp.store, "limit \(limit), round \(round)")
            }
        }
    }

    @Test("a time range pages like the unpaged answer: the same quantities, none outside it")
    func rangeFiltered() throws {
        let tmp = try TempStore()
        let writer = SeriesWriter()
        try SeriesSampleTests.append(tmp.store, writer, times: (0..<1500).map { 1_790_000_000 + Double($0) })
        let q = SampleQuery(start: Date(timeIntervalSince1970: 1_790_000_250), end: Date(timeIntervalSince1970: 1_790_001_100))
        let whole = try tmp.store.changes(matching: q, since: nil)
        #expect(whole.samples.count == 850)
        var replica = Replica()
        var anchor: ChangeAnchor?
        while true {
            let page = try tmp.store.changes(matching: q, since: anchor, limit: 37)
            Self.apply(page, to: &replica, limit: 37)
            anchor = page.anchor
            if !page.hasMore { break }
        }
        #expect(Set(replica.keys) == Set(whole.samples.map(Self.key)))
    }

    @Test("an anchor inside a series: its text, the forms refused, what it covers")
    func anchorText() throws {
        let inside = try ChangeAnchor(string: "v1:00ff:41:3:7.42.2.150")
        #expect(inside.cursor == ChangeAnchor.SeriesCursor(seriesID: 7, changeSeq: 42, chunkSeq: 2, sent: 150))
        #expect(inside.description == "v1:00ff:41:3:7.42.2.150")
        for bad in ["v1:00ff:41:3:", "v1:00ff:41:3:7.42.2", "v1:00ff:41:3:0.42.2.1", "v1:00ff:41:3:7.42.-2.1",
                    "v1:00ff:41:3:7.42.2.1.5", "v1:00ff:41:3:a.b.c.d", "v1:00ff:41:3:7.42.2.1:9"] {
            #expect(throws: ChangeFeedError.self, "\(bad)") { try ChangeAnchor(string: bad) }
        }
        let before = try ChangeAnchor(string: "v1:00ff:41:3")
        let after = try ChangeAnchor(string: "v1:00ff:50:3")
        #expect(inside.covers(before))          // everything up to 41, and part of a series past it
        #expect(!before.covers(inside))
        #expect(!after.covers(inside))          // the series may sit past 50
        #expect(inside.covers(inside))
    }
}
