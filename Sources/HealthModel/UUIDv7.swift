import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// HealthGate's one maker of version 7 UUIDs (RFC 9562): 48 bits of Unix milliseconds, the
/// version, a 12-bit counter, the variant and 62 random bits.
///
/// HealthGate gives new samples v7 ids because the store indexes ids with a UNIQUE index: ids
/// that grow with time append to the B-tree, while random (v4) ids scatter writes across it,
/// which measured 14–25× slower on bulk inserts (docs/performance.md).
///
/// ``next()`` is the hot path (the store's bulk writer calls it for every row): no allocation,
/// one `clock_gettime`, random bits from a ``KernelRandomPool``. Within one millisecond the
/// counter orders the ids (RFC 9562 method 1: it starts at a random value below 512 each new
/// millisecond, and borrows the next millisecond when it runs out), so the ids one generator
/// makes strictly ascend even at hundreds of thousands a second or if the clock steps back.
/// ``UUID/timeOrdered(at:using:)`` lays out the same bits for a caller-chosen time and generator.
///
/// Thread rules: a value type owned by one thread (or used under a lock); not shared.
public struct UUIDv7Generator {
    private var random = KernelRandomPool()
    private var lastMillis: UInt64 = 0
    private var counter: UInt16 = 0

    /// A generator whose first id is made from the current time.
    public init() {}

    /// The next id's 16 bytes as two words in memory order (each word big-endian, as the UUID's
    /// bytes lie): bind them as a 16-byte blob. Allocation-free.
    public mutating func nextWords() -> (UInt64, UInt64) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var ms = UInt64(max(0, ts.tv_sec)) * 1000 + UInt64(max(0, ts.tv_nsec)) / 1_000_000
        if ms <= lastMillis {
            // Same (or an earlier) millisecond: keep order with the counter, borrowing a
            // millisecond when the counter runs out.
            ms = lastMillis
            counter &+= 1
            if counter > 0x0FFF { ms += 1; counter = UInt16(truncatingIfNeeded: random.next() as UInt64) & 0x01FF }
        } else {
            counter = UInt16(truncatingIfNeeded: random.next() as UInt64) & 0x01FF
        }
        lastMillis = ms
        return Self.words(millis: ms, counter: counter, random: random.next())
    }

    /// The next id as a `UUID` (see ``nextWords()``).
    public mutating func next() -> UUID {
        UUID(words: nextWords())
    }

    /// The bit layout, in one place: `millis` (48 bits), version 7, `counter` (its low 12
    /// bits), variant `10`, the low 62 bits of `random`; as two words in memory order.
    @inline(__always)
    public static func words(millis: UInt64, counter: UInt16, random: UInt64) -> (UInt64, UInt64) {
        let hi = (millis << 16) | 0x7000 | UInt64(counter & 0x0FFF)
        let lo = (random & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        return (hi.bigEndian, lo.bigEndian)
    }
}

extension UUID {
    /// The UUID whose 16 bytes are `words` in memory order (``UUIDv7Generator/nextWords()``).
    init(words: (UInt64, UInt64)) {
        var w = words
        self.init(uuid: withUnsafeBytes(of: &w) { $0.load(as: uuid_t.self) })
    }
}

extension UUID {
    /// A time-ordered UUID (version 7, ``UUIDv7Generator``'s layout) for `date`, with random
    /// bits from the system generator. For many ids in a row use a ``UUIDv7Generator``, which
    /// also orders ids made within one millisecond.
    public static func timeOrdered(at date: Date = Date()) -> UUID {
        var rng = SystemRandomNumberGenerator()
        return timeOrdered(at: date, using: &rng)
    }

    /// A version 7 UUID for `date`, drawing its 74 random bits (counter and random part) from
    /// two values of `generator`. A seeded generator gives the same id for the same date every
    /// time, in every version of HealthGate (`import` derives ids of samples that have none
    /// this way, so re-importing a file does not duplicate them): the bits taken from the two
    /// values are fixed.
    public static func timeOrdered<G: RandomNumberGenerator>(at date: Date, using generator: inout G) -> UUID {
        // The field is 48 bits of milliseconds (to year 10889): clamp instead of trapping on a
        // date from outside that is far off (or NaN, which max(0, _) turns into 0).
        let ms = UInt64(min(max(0, date.timeIntervalSince1970 * 1000), 0xFFFF_FFFF_FFFF).rounded(.down))
        let r1 = generator.next() as UInt64
        let r2 = generator.next() as UInt64
        // Bytes 6–7 come from r1's top two bytes, bytes 8–13 from its low six, 14–15 from r2's top two.
        let counter = UInt16(truncatingIfNeeded: r1 >> 48).byteSwapped
        let random = (r1.byteSwapped & 0xFFFF_FFFF_FFFF_0000) | (r2.byteSwapped & 0xFFFF)
        return UUID(words: UUIDv7Generator.words(millis: ms, counter: counter, random: random))
    }
}
