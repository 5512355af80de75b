#if canImport(Glibc)
import Glibc
#endif

/// Random numbers from the kernel's CSPRNG (`getentropy(3)`, i.e. `getrandom(2)`), fetched 256
/// bytes at a time.
///
/// `SystemRandomNumberGenerator` makes one `getrandom` system call per value; the writer needs
/// 64 random bits for every sample's v7 UUID, and at ingest rates that call was about 5 % of the
/// writer's time; 32 values per call make it negligible. The values are the same kind (the kernel's cryptographic generator, as RFC
/// 9562 recommends for UUID random bits), only fetched in bulk.
///
/// Thread rules: a value type owned by one thread (the writer); not shared.
public struct KernelRandomPool: RandomNumberGenerator {
    private var values = [UInt64](repeating: 0, count: 32)   // getentropy's limit: 256 bytes a call
    private var used = 32

    /// An empty pool; the first ``next()`` fills it.
    public init() {}

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        if used == values.count { refill() }
        defer { used += 1 }
        return values[used]
    }

    private mutating func refill() {
        values.withUnsafeMutableBytes { buf in
            if getentropy(buf.baseAddress!, buf.count) != 0 {
                // Cannot fail on Linux ≥ 3.17 for ≤ 256 bytes; if it ever does, fall back to the
                // standard generator rather than hand out stale values.
                var g = SystemRandomNumberGenerator()
                for i in stride(from: 0, to: buf.count, by: 8) { buf.storeBytes(of: g.next() as UInt64, toByteOffset: i, as: UInt64.self) }
            }
        }
        used = 0
    }
}
