/// One quantity of a quantity series (HKQuantitySeriesSample's quantity with its date
/// interval), as the series codec sees it: times in Unix seconds, the value in the type's
/// canonical unit, the per-quantity attributes packed in ``attributes`` (sensor contact, RR gap,
/// metadata flags: the store decides their meaning) and the RR intervals (1/1024 s ticks).
struct SeriesQuantity: Sendable, Hashable {
    var start: Double
    var end: Double
    var value: Double
    var attributes: UInt64 = 0
    var rr: [UInt16] = []

    /// Bit-for-bit equality (`-0.0` differs from `0.0`, a NaN equals the same NaN): what the
    /// codec promises to give back.
    func isIdentical(to o: SeriesQuantity) -> Bool {
        start.bitPattern == o.start.bitPattern && end.bitPattern == o.end.bitPattern
            && value.bitPattern == o.value.bitPattern && attributes == o.attributes && rr == o.rr
    }
}

/// Why bytes could not be decoded as a series chunk.
struct SeriesCodecError: Error, Sendable, Hashable, CustomStringConvertible {
    var reason: String
    var description: String { "a series chunk is unreadable: \(reason)" }
}

/// The compact encoding of one chunk of a quantity series (docs/store.md, "Quantity series").
///
/// Pure and exact: `decode(encode(q))` gives back every quantity bit for bit, whatever the
/// input (clock steps backwards, duplicate times, gaps, intervals, non-integral values). It is
/// small for what sensors send: times become integers at the coarsest resolution that
/// represents every time of the chunk exactly (1 s, 1 ms, 1 µs, else the binary fraction the
/// doubles themselves have), stored as delta-of-deltas; values likewise as deltas of integers;
/// RR ticks as deltas; attributes run-length encoded. Anything no integer scale represents
/// exactly falls back to the 8-byte bit patterns, so exactness never depends on the data.
///
/// Layout (integers are LEB128 varints; signed ones zigzag-encoded first):
/// ```
/// u8 version (1, or 2 when bit 2 is set) · u8 flags (bit 0: every quantity instantaneous,
///   bit 1: RR present, bit 2: RR counts packed two to a byte)
/// count · time scale (u8 mode, u8 exponent) · value scale (u8 mode, u8 exponent)
/// starts: first as a signed integer, then delta-of-deltas      (raw mode: 8-byte patterns)
/// durations (unless all instantaneous): deltas of end − start    (raw mode: end patterns)
/// values: deltas                                                 (raw mode: 8-byte patterns)
/// RR (if present): per quantity its count (a varint each, or with bit 2, when every count is
///   at most 15, two to a byte, the first in the low nibble); all ticks as deltas
/// attributes: number of runs, then (length, value) per run
/// ```
enum SeriesCodec {
    static let version: UInt8 = 1
    /// The version of a chunk whose RR counts are packed (flags bit 2; since 2026-11-29): a
    /// decoder from before refuses it as unknown instead of misreading it. A chunk without RR,
    /// or with a count over 15, is still version 1, byte for byte as before.
    static let packedVersion: UInt8 = 2
    /// How a column of doubles became integers.
    enum Scale: Equatable {
        /// `x = Double(n) / 10^e` exactly (`e` in 0...6).
        case decimal(UInt8)
        /// `x = Double(n) / 2^k` exactly (`k` in 0...62).
        case binary(UInt8)
        /// No integer scale fits: the 8-byte bit patterns.
        case raw

        var divisor: Double {
            switch self {
            case .decimal(let e): return Self.powersOfTen[Int(e)]
            case .binary(let k): return Double(sign: .plus, exponent: Int(k), significand: 1)
            case .raw: return 1
            }
        }
        static let powersOfTen: [Double] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]
        static let limit = Double(1 << 53)

        /// The integer `x` is at this scale, when it is exactly that.
        @inline(__always)
        func integer(_ x: Double) -> Int64? {
            let d = divisor
            let n = (x * d).rounded()
            guard n.magnitude < Self.limit else { return nil }   // also refuses NaN and infinities
            let i = Int64(n)
            // Through the integer, as the decoder does it (so -0.0, which becomes 0, is refused).
            guard (Double(i) / d).bitPattern == x.bitPattern else { return nil }
            return i
        }

        /// The coarsest scale that represents every one of `xs` exactly.
        static func choose(_ xs: [Double]) -> Scale {
            for e in UInt8(0)...6 where xs.allSatisfy({ Scale.decimal(e).integer($0) != nil }) { return .decimal(e) }
            // The binary fraction the doubles have: the most fraction bits any of them needs
            // (a finite x = significand × 2^exponent needs significandWidth − exponent).
            var k = 0
            for x in xs where x != 0 || x.sign == .minus {
                guard x.isFinite, x != 0 else { return .raw }   // -0.0 has no integer
                k = max(k, Int(x.significandWidth) - Int(x.exponent))
            }
            guard k <= 62 else { return .raw }
            let binary = Scale.binary(UInt8(k))
            return xs.allSatisfy({ binary.integer($0) != nil }) ? binary : .raw
        }

        var code: (UInt8, UInt8) {
            switch self {
            case .decimal(let e): return (0, e)
            case .binary(let k): return (1, k)
            case .raw: return (2, 0)
            }
        }

        init(code: UInt8, exponent: UInt8) throws(SeriesCodecError) {
            switch code {
            case 0 where exponent <= 6: self = .decimal(exponent)
            case 1 where exponent <= 62: self = .binary(exponent)
            case 2: self = .raw
            default: throw SeriesCodecError(reason: "unknown scale \(code)/\(exponent)")
            }
        }
    }

    // MARK: Encoding

    /// The chunk's bytes.
    static func encode(_ q: [SeriesQuantity]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16 + q.count * 6)
        let instant = q.allSatisfy { $0.start.bitPattern == $0.end.bitPattern }
        let hasRR = q.contains { !$0.rr.isEmpty }
        // One RR interval a second is a strap's usual: its count (1 or 2) in half a byte.
        let packed = hasRR && q.allSatisfy { $0.rr.count <= 15 }
        out.append(packed ? packedVersion : version)
        out.append((instant ? 1 : 0) | (hasRR ? 2 : 0) | (packed ? 4 : 0))
        putVarint(&out, UInt64(q.count))
        let time = Scale.choose(instant ? q.map(\.start) : q.flatMap { [$0.start, $0.end] })
        let value = Scale.choose(q.map(\.value))
        out.append(time.code.0); out.append(time.code.1)
        out.append(value.code.0); out.append(value.code.1)

        if time == .raw {
            for x in q { putRaw(&out, x.start) }
            if !instant { for x in q { putRaw(&out, x.end) } }
        } else {
            var prev: Int64 = 0, prevDelta: Int64 = 0
            for (i, x) in q.enumerated() {
                let t = time.integer(x.start)!
                if i == 0 { putSigned(&out, t) } else {
                    let delta = t &- prev
                    putSigned(&out, delta &- prevDelta)
                    prevDelta = delta
                }
                prev = t
            }
            if !instant {
                var prevDuration: Int64 = 0
                for x in q {
                    let d = time.integer(x.end)! &- time.integer(x.start)!
                    putSigned(&out, d &- prevDuration)
                    prevDuration = d
                }
            }
        }
        if value == .raw {
            for x in q { putRaw(&out, x.value) }
        } else {
            var prev: Int64 = 0
            for x in q {
                let v = value.integer(x.value)!
                putSigned(&out, v &- prev)
                prev = v
            }
        }
        if packed {
            var i = 0
            while i < q.count {
                let high = i + 1 < q.count ? q[i + 1].rr.count : 0
                out.append(UInt8(q[i].rr.count) | UInt8(high) << 4)
                i += 2
            }
        } else if hasRR {
            for x in q { putVarint(&out, UInt64(x.rr.count)) }
        }
        if hasRR {
            var prev: Int64 = 0
            for x in q { for t in x.rr { putSigned(&out, Int64(t) - prev); prev = Int64(t) } }
        }
        var runs: [(length: Int, value: UInt64)] = []
        for x in q {
            if let last = runs.last, last.value == x.attributes { runs[runs.count - 1].length += 1 } else { runs.append((1, x.attributes)) }
        }
        putVarint(&out, UInt64(runs.count))
        for r in runs { putVarint(&out, UInt64(r.length)); putVarint(&out, UInt64(r.value)) }
        return out
    }

    // MARK: Decoding

    /// The quantities of a chunk read back from the store; `what` names the chunk (its series)
    /// in the error.
    /// - Throws: ``StoreError/corruptRow(_:)`` when the bytes are not a chunk this codec wrote.
    static func decodeStored(_ bytes: [UInt8], _ what: @autoclosure () -> String) throws -> [SeriesQuantity] {
        do { return try decode(bytes) } catch {
            throw StoreError.corruptRow("\(what()): \(error)")
        }
    }

    /// The quantities of a chunk.
    /// - Throws: ``SeriesCodecError`` when the bytes are not a chunk this codec wrote.
    static func decode(_ bytes: [UInt8]) throws(SeriesCodecError) -> [SeriesQuantity] {
        try bytes.withUnsafeBufferPointer { (b: UnsafeBufferPointer<UInt8>) throws(SeriesCodecError) -> [SeriesQuantity] in
            var r = Reader(bytes: b)
            let v = try r.byte()
            guard v == version || v == packedVersion else { throw SeriesCodecError(reason: "unknown version") }
            let flags = try r.byte()
            let instant = flags & 1 != 0, hasRR = flags & 2 != 0, packed = flags & 4 != 0
            // Version 2 is exactly the packed RR counts (which need RR), version 1 never has them.
            guard packed == (v == packedVersion), !packed || hasRR, v == version || flags & ~7 == 0 else {
                throw SeriesCodecError(reason: "flags \(flags) do not fit version \(v)")
            }
            let n64 = try r.varint()
            // Every quantity takes at least one byte of its own, so a count beyond the bytes is a lie.
            guard n64 <= UInt64(b.count) * 8 else { throw SeriesCodecError(reason: "count \(n64) exceeds the data") }
            let n = Int(n64)
            let time = try Scale(code: try r.byte(), exponent: try r.byte())
            let value = try Scale(code: try r.byte(), exponent: try r.byte())
            var q = [SeriesQuantity](repeating: SeriesQuantity(start: 0, end: 0, value: 0), count: n)
            if time == .raw {
                for i in 0..<n { q[i].start = try r.raw(); q[i].end = q[i].start }
                if !instant { for i in 0..<n { q[i].end = try r.raw() } }
            } else {
                let d = time.divisor
                var ticks = [Int64](repeating: 0, count: n)
                var prev: Int64 = 0, prevDelta: Int64 = 0
                for i in 0..<n {
                    let s = try r.signed()
                    let t: Int64
                    if i == 0 { t = s } else { prevDelta = prevDelta &+ s; t = prev &+ prevDelta }
                    ticks[i] = t
                    prev = t
                    q[i].start = Double(t) / d
                    q[i].end = q[i].start
                }
                if !instant {
                    var prevDuration: Int64 = 0
                    for i in 0..<n {
                        prevDuration = prevDuration &+ (try r.signed())
                        q[i].end = Double(ticks[i] &+ prevDuration) / d
                    }
                }
            }
            if value == .raw {
                for i in 0..<n { q[i].value = try r.raw() }
            } else {
                let d = value.divisor
                var prev: Int64 = 0
                for i in 0..<n { prev = prev &+ (try r.signed()); q[i].value = Double(prev) / d }
            }
            if hasRR {
                var counts = [Int](repeating: 0, count: n)
                if packed {
                    var i = 0
                    while i < n {
                        let pair = try r.byte()
                        counts[i] = Int(pair & 0x0F)
                        if i + 1 < n { counts[i + 1] = Int(pair >> 4) } else if pair >> 4 != 0 {
                            throw SeriesCodecError(reason: "the last packed RR count byte has a second count")
                        }
                        i += 2
                    }
                } else {
                    for i in 0..<n {
                        let c = try r.varint()
                        guard c <= UInt64(b.count) else { throw SeriesCodecError(reason: "RR count \(c) exceeds the data") }
                        counts[i] = Int(c)
                    }
                }
                var prev: Int64 = 0
                for i in 0..<n {
                    var ticks: [UInt16] = []
                    ticks.reserveCapacity(counts[i])
                    for _ in 0..<counts[i] {
                        prev = prev &+ (try r.signed())
                        guard let t = UInt16(exactly: prev) else { throw SeriesCodecError(reason: "an RR tick is out of range") }
                        ticks.append(t)
                    }
                    q[i].rr = ticks
                }
            }
            let runs = try r.varint()
            var i = 0
            for _ in 0..<runs {
                let length = try r.varint()
                let a = try r.varint()
                guard length <= UInt64(n - i) else {
                    throw SeriesCodecError(reason: "an attribute run is out of range")
                }
                for k in i..<(i + Int(length)) { q[k].attributes = a }
                i += Int(length)
            }
            guard i == n else { throw SeriesCodecError(reason: "attribute runs cover \(i) of \(n) quantities") }
            guard r.atEnd else { throw SeriesCodecError(reason: "trailing bytes") }
            return q
        }
    }

    // MARK: Integers

    static func putVarint(_ out: inout [UInt8], _ v: UInt64) {
        var v = v
        while v >= 0x80 { out.append(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }
        out.append(UInt8(v))
    }

    static func putSigned(_ out: inout [UInt8], _ v: Int64) {
        putVarint(&out, UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }

    static func putRaw(_ out: inout [UInt8], _ x: Double) {
        let b = x.bitPattern
        for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: b >> (8 * UInt64(k)))) }
    }

    struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        var atEnd: Bool { at == bytes.count }

        mutating func byte() throws(SeriesCodecError) -> UInt8 {
            guard at < bytes.count else { throw SeriesCodecError(reason: "it ends early") }
            defer { at += 1 }
            return bytes[at]
        }

        mutating func varint() throws(SeriesCodecError) -> UInt64 {
            var v: UInt64 = 0, shift: UInt64 = 0
            while true {
                let b = try byte()
                guard shift < 64 else { throw SeriesCodecError(reason: "a number is too long") }
                v |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { return v }
                shift += 7
            }
        }

        mutating func signed() throws(SeriesCodecError) -> Int64 {
            let u = try varint()
            return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
        }

        mutating func raw() throws(SeriesCodecError) -> Double {
            var b: UInt64 = 0
            for k in 0..<8 { b |= UInt64(try byte()) << (8 * UInt64(k)) }
            return Double(bitPattern: b)
        }
    }
}
