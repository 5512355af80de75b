// Release micro-benchmark of HeartRateMeasurement.decode against an array-based baseline,
// measured in the same run. Built and run by scripts/bench-hrm-decode.sh (not part of the package).
import Foundation

func bytes(_ hex: String) -> [UInt8] {
    let h = Array(hex.utf8)
    return stride(from: 0, to: h.count - 1, by: 2).map { UInt8(String(decoding: h[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
}

/// The usual way: a fresh array per packet and RR as milliseconds in a `[Double]`.
func baselineDecode(_ b: [UInt8]) -> (bpm: Int, rr: [Double])? {
    guard b.count >= 2 else { return nil }
    let wide = b[0] & 1 != 0
    var i = wide ? 3 : 2
    guard b.count >= i else { return nil }
    let bpm = wide ? Int(b[1]) | Int(b[2]) << 8 : Int(b[1])
    if b[0] & 0x08 != 0 { i += 2 }
    var rr: [Double] = []
    if b[0] & 0x10 != 0 { while i + 1 < b.count { rr.append(Double(Int(b[i]) | Int(b[i + 1]) << 8) * 1000 / 1024); i += 2 } }
    return (bpm, rr)
}

let payloads: [[UInt8]] = ["164d1603", "164e1b031203", "10495e039603", "1c482c01f4010002",
                           "1048000400040004000400040004000400040004"].map(bytes)
let rounds = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 2_000_000
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
        for p in payloads { let c = Array(p); if let r = baselineDecode(c) { sumBase &+= r.bpm &+ r.rr.count } }
    }
}
precondition(sumOurs == sumBase, "the two decoders disagree")
let n = Double(rounds * payloads.count)
func ns(_ d: Duration) -> Double { (Double(d.components.seconds) * 1e9 + Double(d.components.attoseconds) / 1e9) / n }
print(String(format: "hrm-decode: %.0f decodes; inline decoder %.1f ns/decode, array baseline %.1f ns/decode, baseline/ours %.1fx",
             n, ns(ours), ns(base), ns(base) / ns(ours)))
