import Foundation
import HeartRateProfile
import Testing

/// Prints the decoder's cost against an array-based baseline measured in the same run (no
/// timed assertion: the figures are for people; the test checks both decoders agree).
@Suite struct DecodeBenchmarkTests {
    /// The usual way: a fresh array per packet and RR as milliseconds in a `[Double]`.
    static func baselineDecode(_ b: [UInt8]) -> (bpm: Int, rr: [Double])? {
        guard b.count >= 2 else { return nil }
        let wide = b[0] & 1 != 0
        var i = wide ? 3 : 2
        guard b.count >= i else { return nil }
        let bpm = wide ? Int(b[1]) | Int(b[2]) << 8 : Int(b[1])
        if b[0] & 0x08 != 0 { i += 2 }
        var rr: [Double] = []
        if b[0] & 0x10 != 0 {
            while i + 1 < b.count { rr.append(Double(Int(b[i]) | Int(b[i + 1]) << 8) * 1000 / 1024); i += 2 }
        }
        return (bpm, rr)
    }

    @Test func decodeCostAgainstArrayBaseline() {
        let payloads: [[UInt8]] = ["164d1603", "164e1b031203", "10495e039603", "1c482c01f4010002",
                                   "1048000400040004000400040004000400040004"].map(bytes)
        let rounds = 40_000
        var sumOurs = 0, sumBase = 0
        let clock = ContinuousClock()
        let ours = clock.measure {
            for _ in 0..<rounds {
                for p in payloads {
                    p.withUnsafeBytes { raw in
                        if let m = try? HeartRateMeasurement.decode(raw) { sumOurs &+= Int(m.beatsPerMinute) &+ m.rrIntervals.count }
                    }
                }
            }
        }
        let base = clock.measure {
            for _ in 0..<rounds {
                for p in payloads {
                    let copy = Array(p)  // a fresh buffer per packet, as the baseline decoders do
                    if let r = Self.baselineDecode(copy) { sumBase &+= r.bpm &+ r.rr.count }
                }
            }
        }
        #expect(sumOurs == sumBase)
        let n = Double(rounds * payloads.count)
        func ns(_ d: Duration) -> Double { (Double(d.components.seconds) * 1e9 + Double(d.components.attoseconds) / 1e9) / n }
        print(String(format: "DecodeBenchmark: %.0f decodes; inline decoder %.1f ns/decode, array baseline %.1f ns/decode, ratio %.2fx (build configuration as tested; use -c release for real figures)",
                     n, ns(ours), ns(base), ns(base) / max(ns(ours), 0.001)))
    }
}
