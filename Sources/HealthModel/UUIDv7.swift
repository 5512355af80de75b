import Foundation

extension UUID {
    /// A time-ordered UUID (RFC 9562 version 7): 48 bits of Unix milliseconds, then random bits.
    ///
    /// HealthGate gives new samples v7 ids because the store indexes ids with a UNIQUE index:
    /// ids that grow with time append to the B-tree, while random (v4) ids scatter writes across
    /// it, which measured 14–25× slower on bulk inserts (docs/performance.md).
    public static func timeOrdered(at date: Date = Date()) -> UUID {
        var rng = SystemRandomNumberGenerator()
        return timeOrdered(at: date, using: &rng)
    }

    /// A version 7 UUID for `date`, drawing its random bits from `generator`.
    public static func timeOrdered<G: RandomNumberGenerator>(at date: Date, using generator: inout G) -> UUID {
        let ms = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        let r1 = generator.next() as UInt64
        let r2 = generator.next() as UInt64
        var b = [UInt8](repeating: 0, count: 16)
        for i in 0..<6 { b[i] = UInt8(truncatingIfNeeded: ms >> (40 - 8 * UInt64(i))) }
        for i in 6..<16 { b[i] = UInt8(truncatingIfNeeded: (i < 14 ? r1 : r2) >> (8 * UInt64(i % 8))) }
        b[6] = 0x70 | (b[6] & 0x0F)   // version 7
        b[8] = 0x80 | (b[8] & 0x3F)   // RFC 4122 variant
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                           b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}
