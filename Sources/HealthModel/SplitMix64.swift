/// A small deterministic random generator (SplitMix64, Steele, Lea & Flood 2014).
///
/// The one seeded generator of the package: the store derives an imported sample's UUID bits
/// from its content with it (the same line always gets the same UUID), the benchmark makes
/// reproducible workloads with it, and property tests draw reproducible cases from it (the same
/// seed gives the same cases on every run and machine, so a failure names a case). Not for
/// secrets: use `SystemRandomNumberGenerator` (getrandom(2)) for those.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator starting from `seed`.
    package init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random bytes.
    package mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}
