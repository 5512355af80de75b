import HealthModel
import Foundation
import Testing
@testable import HealthStore

/// The quantity-series chunk codec: exact round trips on random streams (property tests with
/// fixed seeds), boundaries, compactness for what straps send, and refusal of damaged bytes.
@Suite struct SeriesCodecTests {
    func roundTrips(_ q: [SeriesQuantity], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = SeriesCodec.encode(q)
        let back = try SeriesCodec.decode(bytes)
        #expect(back.count == q.count, sourceLocation: sourceLocation)
        for (a, b) in zip(q, back) where !a.isIdentical(to: b) {
            Issue.record("\(a) came back as \(b)", sourceLocation: sourceLocation)
            return
        }
    }

    /// A random stream: receipt times at a random resolution (ms, µs, the clock's own double)
    /// with gaps, clock steps backwards and duplicate times; instants or intervals; integral or
    /// fractional values; RR lists of 0…12 ticks; attributes that change now and then.
    func randomStream(_ rng: inout SplitMix64) -> [SeriesQuantity] {
        let n = Int(rng.next() % 200)
        let resolution = [1.0, 1e-3, 1e-6, 0][Int(rng.next() % 4)]
        let intervals = rng.next() % 3 == 0
        let fractional = rng.next() % 3 == 0
        var t = Double(1_600_000_000 + rng.next() % 400_000_000)
        var attrs = rng.next() % 8
        var out: [SeriesQuantity] = []
        for _ in 0..<n {
            switch rng.next() % 20 {
            case 0: t += Double(rng.next() % 100_000)          // a gap (reconnect)
            case 1: t -= Double(rng.next() % 5_000) / 1000       // the clock steps back
            case 2: break                                        // a duplicate receipt time
            default: t += Double(800 + rng.next() % 400) / 1000
            }
            var time = t + Double(rng.next() % 1_000_000) / 1e7
            if resolution > 0 { time = (time / resolution).rounded() * resolution }
            let end = intervals ? time + Double(rng.next() % 120_000) / 1000 : time
            let value = fractional ? Double(rng.next() % 100_000) / Double(1 + rng.next() % 1000) : Double(40 + rng.next() % 180)
            if rng.next() % 25 == 0 { attrs = rng.next() % 3 == 0 ? rng.next() : rng.next() % 1024 }
            let rr = (0..<Int(rng.next() % 13)).map { _ in UInt16(1 + rng.next() % 65534) }
            out.append(SeriesQuantity(start: time, end: end, value: value, attributes: attrs, rr: rng.next() % 4 == 0 ? [] : rr))
        }
        return out
    }

    @Test("random streams round-trip exactly (1,000 seeded streams)")
    func randomStreamsRoundTrip() throws {
        var rng = SplitMix64(seed: 20261124)
        for _ in 0..<1_000 { try roundTrips(randomStream(&rng)) }
    }

    @Test("any bit pattern round-trips: NaN, infinities, -0.0, subnormals, huge and negative times")
    func oddDoubles() throws {
        let odd: [Double] = [.nan, .infinity, -.infinity, -0.0, 0, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
                             -1e300, 1e-300, 0.1, -1_790_000_000.123, 2_000_000_000.000001, 9_007_199_254_740_992, 9_007_199_254_740_994]
        for a in odd {
            for b in odd {
                try roundTrips([SeriesQuantity(start: a, end: b, value: b), SeriesQuantity(start: b, end: a, value: a)])
            }
        }
        var rng = SplitMix64(seed: 7)
        for _ in 0..<200 {
            try roundTrips((0..<Int(rng.next() % 20)).map { _ in
                SeriesQuantity(start: Double(bitPattern: rng.next()), end: Double(bitPattern: rng.next()),
                               value: Double(bitPattern: rng.next()), attributes: rng.next())
            })
        }
    }

    @Test("boundaries: empty, one quantity, the extreme RR ticks and attributes, a long RR list")
    func boundaries() throws {
        try roundTrips([])
        try roundTrips([SeriesQuantity(start: 1_790_000_000, end: 1_790_000_000, value: 72)])
        try roundTrips([SeriesQuantity(start: 0, end: 0, value: 0, attributes: .max, rr: [1, 65535, 0, 65534])])
        try roundTrips([SeriesQuantity(start: 1, end: 2, value: -3, attributes: 0, rr: (0..<1000).map { UInt16($0 * 65) })])
        #expect(SeriesCodec.Scale.choose([1_790_000_000, 1_790_000_060]) == .decimal(0))
        #expect(SeriesCodec.Scale.choose([1_790_000_000.123, 1_790_000_000.5]) == .decimal(3))
        #expect(SeriesCodec.Scale.choose([1_790_000_000.123456]) == .decimal(6))
        #expect(SeriesCodec.Scale.choose([1_790_000_000 + 1.0 / 4_194_304]) == .binary(22))
        #expect(SeriesCodec.Scale.choose([-0.0]) == .raw)
        #expect(SeriesCodec.Scale.choose([.nan]) == .raw)
    }

    @Test("a strap's minute at 1 Hz with RR takes a few bytes per quantity")
    func compactForStraps() throws {
        var rng = SplitMix64(seed: 3)
        var q: [SeriesQuantity] = []
        for i in 0..<60 {
            let t = ((1_790_000_000.5 + Double(i) + Double(Int(rng.next() % 81) - 40) / 1000) * 1000).rounded() / 1000
            let bpm = 70 + Double(rng.next() % 5)
            q.append(SeriesQuantity(start: t, end: t, value: bpm, attributes: 3, rr: [UInt16(60 * 1024 / bpm)]))
        }
        let bytes = SeriesCodec.encode(q)
        try roundTrips(q)
        // Time delta-of-deltas within ±80 ms: 2 bytes; value delta 1; RR count 1 and delta 1–2.
        #expect(bytes.count <= 60 * 6 + 24, "\(bytes.count) bytes for 60 quantities")
    }

    /// RR counts of at most 15 are packed two to a byte (version 2, flags bit 2; since
    /// 2026-11-29: a day of a strap with RR is ~43 KB smaller); a count of 16 keeps the varints of
    /// version 1, as does a chunk without RR, byte for byte as before. An odd number of
    /// quantities leaves the last high nibble 0, which the decoder checks.
    @Test("RR counts up to 15 pack two to a byte (version 2); 16, or no RR, keep version 1")
    func packedRRCounts() throws {
        func chunk(_ counts: [Int]) -> [SeriesQuantity] {
            counts.enumerated().map { i, c in
                SeriesQuantity(start: 1_790_000_000 + Double(i), end: 1_790_000_000 + Double(i), value: 70,
                               rr: (0..<c).map { UInt16(800 + $0) })
            }
        }
        for counts in [[1], [1, 2], [1, 2, 1], [15, 0, 15], [0, 0, 1], Array(repeating: 1, count: 301)] {
            let bytes = SeriesCodec.encode(chunk(counts))
            #expect(bytes[0] == SeriesCodec.packedVersion && bytes[1] & 4 != 0, "\(counts)")
            try roundTrips(chunk(counts))
        }
        let wide = SeriesCodec.encode(chunk([15, 16]))
        #expect(wide[0] == SeriesCodec.version && wide[1] & 4 == 0)
        try roundTrips(chunk([15, 16]))
        let plain = SeriesCodec.encode(chunk([0, 0]))
        #expect(plain[0] == SeriesCodec.version && plain[1] == 1)
        // Packed is smaller by half a byte a quantity: 300 counts in 150 bytes instead of 300.
        let ones = chunk(Array(repeating: 1, count: 300))
        var unpacked = ones
        unpacked[0].rr = Array(repeating: 800, count: 16)   // forces the varints
        #expect(SeriesCodec.encode(unpacked).count - SeriesCodec.encode(ones).count >= 150)

        // Versions and flags that do not belong together are refused.
        let packed = SeriesCodec.encode(chunk([1, 2, 1]))
        var v1WithPacking = packed
        v1WithPacking[0] = SeriesCodec.version
        var v2WithoutPacking = packed
        v2WithoutPacking[1] &= ~4
        var v2UnknownFlag = packed
        v2UnknownFlag[1] |= 8
        var secondCountInLastByte = packed
        for bad in [v1WithPacking, v2WithoutPacking, v2UnknownFlag] {
            #expect(throws: SeriesCodecError.self) { try SeriesCodec.decode(bad) }
        }
        // [1, 2, 1]: the nibble bytes are 0x21 then 0x01; a 2 in the unused high nibble is refused.
        let at = try #require(packed.firstIndex(of: 0x21))
        #expect(packed[at + 1] == 0x01)
        secondCountInLastByte[at + 1] = 0x21
        #expect(throws: SeriesCodecError.self) { try SeriesCodec.decode(secondCountInLastByte) }
    }

    @Test("damaged bytes are refused, never misread into quantities (every truncation, flipped bytes)")
    func damagedBytesAreRefused() throws {
        var rng = SplitMix64(seed: 11)
        let q = randomStream(&rng) + [SeriesQuantity(start: 1, end: 1, value: 1, rr: [5])]
        let bytes = SeriesCodec.encode(q)
        for cut in 0..<bytes.count {
            #expect(throws: SeriesCodecError.self) { try SeriesCodec.decode(Array(bytes.prefix(cut))) }
        }
        #expect(throws: SeriesCodecError.self) { try SeriesCodec.decode(bytes + [0]) }
        var wrongVersion = bytes
        wrongVersion[0] = 99
        #expect(throws: SeriesCodecError.self) { try SeriesCodec.decode(wrongVersion) }
        // Random corruption may decode (the bytes still parse) but must never crash or hang.
        for _ in 0..<2_000 {
            var b = bytes
            b[Int(rng.next() % UInt64(b.count))] = UInt8(truncatingIfNeeded: rng.next())
            _ = try? SeriesCodec.decode(b)
        }
    }
}
