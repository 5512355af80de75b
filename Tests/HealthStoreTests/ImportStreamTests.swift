import Foundation
import HealthGateTesting
import HealthModel
import Testing
@testable import HealthStore

/// The import's streaming pieces: the block line reader (same lines as reading the whole file),
/// the incremental JSON array reader, and the bulk save (same outcomes and rows as `save`).
@Suite("Import streaming: block reader, array reader, bulk save")
struct ImportStreamTests {
    /// A pipe holding `bytes`, read end returned (written from another thread: pipes are small).
    static func withPipe<T>(_ bytes: [UInt8], _ body: (Int32) throws -> T) throws -> T {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        let writeEnd = fds[1]
        let writer = Thread {
            var done = 0
            bytes.withUnsafeBytes { b in
                while done < b.count {
                    let n = write(writeEnd, b.baseAddress! + done, min(7_919, b.count - done))   // odd sizes: short reads
                    if n <= 0 { break }
                    done += n
                }
            }
            close(writeEnd)
        }
        writer.start()
        defer { close(fds[0]) }
        return try body(fds[0])
    }

    /// The rule the reader must follow, on the whole file at once (what `TextLines` did).
    static func reference(_ bytes: [UInt8]) -> [[UInt8]] {
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var out: [[UInt8]] = []
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != 0x0A { end += 1 }
            let next = end + 1
            if end > start, bytes[end - 1] == 0x0D { end -= 1 }
            out.append(Array(bytes[start..<end]))
            start = next
        }
        return out
    }

    static func lines(_ bytes: [UInt8], blockSize: Int) throws -> [[UInt8]] {
        try withPipe(bytes) { fd in
            var r = ByteLines(fd: fd, blockSize: blockSize)
            defer { r.close() }
            var out: [[UInt8]] = []
            while let l = try r.next() {
                out.append(Array(l))
                #expect(r.number == out.count)
            }
            #expect(r.bytesRead == bytes.count)
            return out
        }
    }

    @Test("lines across block edges: CRLF split between blocks, BOM, no final LF, empty lines, a line longer than a block")
    func blockEdges() throws {
        let cases: [[UInt8]] = [
            [], [0x0A], [0x0D], [0x0D, 0x0A], [0xEF, 0xBB, 0xBF], [0xEF, 0xBB], [0xEF, 0xBB, 0xBF, 0x0A, 0x61],
            Array("a\r\nb\r\n\r\nc".utf8), Array("a\n\nb\n".utf8), Array("x\r\r\n".utf8), Array("only".utf8),
            Array(String(repeating: "y", count: 100).utf8) + [0x0D, 0x0A] + Array("z".utf8),
        ]
        var rng = SplitMix64(seed: 3)
        var random: [[UInt8]] = []
        for _ in 0..<300 {
            let n = Int.random(in: 0...400, using: &rng)
            random.append((0..<n).map { _ in [0x0A, 0x0D, 0x61, 0xEF, 0xBB, 0xBF, 0x7B][Int.random(in: 0..<7, using: &rng)] })
        }
        for bytes in cases + random {
            for block in [16, 17, 31, 1 << 20] {
                #expect(try Self.lines(bytes, blockSize: block) == Self.reference(bytes), "block \(block): \(bytes)")
            }
        }
    }

    @Test("a large file read in small blocks gives every line once, in order")
    func manyLines() throws {
        var text = ""
        for i in 0..<20_000 { text += "line \(i)" + (i % 3 == 0 ? "\r\n" : "\n") }
        let got = try Self.lines(Array(text.utf8), blockSize: 4_096)
        #expect(got.count == 20_000)
        #expect(got.enumerated().allSatisfy { String(decoding: $1, as: UTF8.self) == "line \($0)" })
    }

    @Test("UTF-8 check: ASCII fast path, the first bad byte's column, valid multi-byte text")
    func utf8() {
        func bad(_ b: [UInt8]) -> LineText.BadText? { b.withUnsafeBufferPointer { LineText.firstBadByte($0) } }
        #expect(bad(Array("plain ascii, longer than eight bytes".utf8)) == nil)
        #expect(bad(Array("Wätch ☃ 😀".utf8)) == nil)
        let latin1 = bad(Array("caf".utf8) + [0xE9] + Array(" ok".utf8))
        #expect(latin1?.byte == 0xE9 && latin1?.offset == 4)
        #expect(bad([0xED, 0xA0, 0x80])?.offset == 1)      // a surrogate
        #expect(bad([0xC0, 0x80])?.byte == 0xC0)            // overlong
        #expect(bad([0x61, 0xF4, 0x90, 0x80, 0x80])?.offset == 2)   // above U+10FFFF
        #expect(bad(Array("12345678".utf8) + [0xE2, 0x82])?.offset == 9)   // cut short after the ASCII words
    }

    static func elements(_ text: String, blockSize: Int = 16) throws -> (elements: [(Int, Int, String)], error: ArrayElements.StructureError?) {
        try withPipe(Array(text.utf8)) { fd in
            var r = ArrayElements(fd: fd, blockSize: blockSize)
            defer { r.close() }
            var out: [(Int, Int, String)] = []
            do {
                while let e = try r.next() { out.append((e.number, e.line, String(decoding: e.bytes, as: UTF8.self))) }
            } catch let e as ArrayElements.StructureError {
                return (out, e)
            }
            return (out, nil)
        }
    }

    @Test("a JSON array's elements, with the line each starts on, across block edges")
    func arrayElements() throws {
        let text = "\u{FEFF}[\n  {\"a\": \"x]}\\\"\"},\r\n  {\"b\": [1, {\"c\": 2}]} ,\n\n 5, \"s\", null,\n[1]\n]\n\n"
        for block in [16, 23, 1 << 20] {
            let (els, err) = try Self.elements(text, blockSize: block)
            #expect(err == nil)
            #expect(els.map(\.0) == [1, 2, 3, 4, 5, 6])
            #expect(els.map(\.1) == [2, 3, 5, 5, 5, 6])
            #expect(els.map(\.2) == ["{\"a\": \"x]}\\\"\"}", "{\"b\": [1, {\"c\": 2}]}", "5", "\"s\"", "null", "[1]"])
        }
        #expect(try Self.elements("[]").elements.isEmpty && Self.elements("  [ ]  ").error == nil)
    }

    @Test("what is not a JSON array stops the reader with the element and line, after the good elements",
          arguments: [("", 1, "empty"), ("{\"a\":1}", 1, "does not start with '['"), ("[{}", 2, "not closed"),
                      ("[{} {}]", 2, "expected ',' or ']' after element 1"), ("[{},]", 2, "expected an element"),
                      ("[{}]\n x", 2, "after the array's closing ']'"), ("[{},\n{\"a\":\"", 2, "ends inside element 2"),
                      ("[,{}]", 1, "expected an element")])
    func notAnArray(text: String, element: Int, mentions: String) throws {
        let (_, err) = try Self.elements(text)
        let e = try #require(err, "\(text)")
        #expect(e.element == element, "\(text)")
        #expect(e.reason.contains(mentions), "\(text): \(e.reason)")
    }

    @Test("import's bulk path (insertImported) stores exactly what save stores, with the same counts: duplicates, sync versions, repeats in one batch")
    func bulkSaveMatchesSave() throws {
        var rng = SplitMix64(seed: 5)
        var samples: [QuantitySample] = []
        for i in 0..<700 {
            let t = Date(timeIntervalSince1970: 1_793_577_600 + Double(i))
            let sync = Int.random(in: 0..<10, using: &rng) == 0
            samples.append(try QuantitySample(
                uuid: UUID.timeOrdered(at: t, using: &rng), type: i % 2 == 0 ? .heartRate : .stepCount, quantity: Quantity(Double(60 + i % 50), i % 2 == 0 ? .countPerMinute : .count),
                start: t, end: t.addingTimeInterval(i % 2 == 0 ? 0 : 30), source: Source(name: "S\(i % 3)"),
                device: i % 4 == 0 ? nil : Device(name: "D\(i % 2)", localIdentifier: "d\(i % 2)"),
                metadata: sync ? Metadata(syncIdentifier: "k\(Int.random(in: 0..<8, using: &rng))", syncVersion: Int.random(in: 0..<4, using: &rng))
                    : Metadata(sensorContact: .detected, user: i % 5 == 0 ? ["n": .number(Double(i))] : [:]),
                rrIntervals: i % 3 == 0 ? RRIntervals(ticks: [800, UInt16(700 + i % 100)], precededByGap: i % 6 == 0) : nil))
        }
        // Repeats: some samples twice in one batch, some again in a later batch.
        var batches = [Array(samples[0..<300]) + Array(samples[10..<70]), Array(samples[250..<700]), Array(samples[0..<120])]
        batches[1].insert(contentsOf: samples[400..<460], at: 100)
        // And a clean batch first: new UUIDs, no sync identifiers, so the bulk writer's ids run on
        // and its per-slot sums stand as written (a repeat makes its slots stale and recomputed
        // from the rows, which would hide a rollup counted twice).
        batches.insert(try (0..<240).map { i in
            let t = Date(timeIntervalSince1970: 1_793_500_000 + Double(i) * 7)
            return try QuantitySample(uuid: UUID.timeOrdered(at: t, using: &rng), type: i % 2 == 0 ? .heartRate : .stepCount,
                                      quantity: Quantity(Double(50 + i % 70), i % 2 == 0 ? .countPerMinute : .count),
                                      start: t, end: t.addingTimeInterval(i % 2 == 0 ? 0 : 5), source: Source(name: "S\(i % 2)"))
        }, at: 0)
        let a = try TempStore(), b = try TempStore()
        for batch in batches {
            let viaSave = try a.store.save(batch)
            let viaBulk = try b.store.write { w in try w.insertImported(batch) }
            #expect(viaSave == viaBulk)
        }
        #expect(try a.store.samples(SampleQuery()) == b.store.samples(SampleQuery()))
        let tombstones = "SELECT count(*) FROM deleted_samples"
        #expect(try scalar(a.store, tombstones) == scalar(b.store, tombstones))
        #expect(try scalar(a.store, tombstones) > 0)
        // The per-source rollups statistics read (schema 3) come out the same too.
        func rollups(_ store: HealthStore) throws -> [String] {
            try store.withConnection { db in
                let st = try db.prepare("SELECT type_id, slot, source_id, count, sum, vmin, vmax, recent_value, stale FROM sample_rollups ORDER BY 1, 2, 3", cached: false)
                var rows: [String] = []
                while try st.step() { rows.append((0..<9).map { String(st.double($0)) }.joined(separator: " ")) }
                return rows
            }
        }
        let ra = try rollups(a.store)
        #expect(!ra.isEmpty)
        #expect(ra == (try rollups(b.store)))
        // And so do the statistics read from them: a rollup skipped or counted twice by the bulk
        // writer changes counts, sums and averages here (hourly buckets cut the 15-minute slots
        // the rollups answer from whole; the rows-only sweep is the rollups' own oracle).
        let utc = TimeZone(identifier: "UTC")!
        for (type, options) in [(QuantityType.heartRate, StatisticsOptions([.discreteAverage, .discreteMin, .discreteMax, .mostRecent])),
                                (.stepCount, .cumulativeSum)] {
            let q = StatisticsQuery(type: type, options: options)
            let want = try a.store.statisticsCollection(q, interval: .hours(1), timeZone: utc, path: .streamingRowsOnly)
            #expect(want.contains { $0.values.sampleCount > 0 })
            #expect(try a.store.statisticsCollection(q, interval: .hours(1), timeZone: utc) == want)
            #expect(try b.store.statisticsCollection(q, interval: .hours(1), timeZone: utc) == want)
        }
    }
}
