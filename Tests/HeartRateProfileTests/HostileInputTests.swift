import HealthModel
import Foundation
import HealthGateTesting
import Testing
@testable import HeartRateProfile

/// Random Heart Rate Measurement payloads (seeded, reproducible) never crash the decoder: each
/// either decodes to exactly what an independent reading of the
/// specification gives, or is refused with a typed ``HeartRateMeasurementError``. Cheap insurance
/// before real fuzzing (issue #17: no trap on data from outside).
@Suite struct HostileInputTests {
    /// What the specification says a payload carries (GATT Specification Supplement 3.113),
    /// written independently of the decoder: flags, then uint8/uint16 bpm, then optional energy,
    /// then RR pairs to the end; at most 32 RR kept.
    struct Expected: Equatable {
        var bpm: UInt16
        var energy: UInt16?
        var rr: [UInt16]
        var energyMissing = false
        var oddByte = false
        var dropped = 0
        var ignored = 0
    }

    static func expected(_ p: [UInt8]) -> Expected? {
        guard let flags = p.first else { return nil }
        func u16(_ i: Int) -> UInt16 { UInt16(p[i]) | UInt16(p[i + 1]) << 8 }
        var i = 1
        let bpm: UInt16
        if flags & 0x01 != 0 {
            guard p.count >= 3 else { return nil }
            bpm = u16(1); i = 3
        } else {
            guard p.count >= 2 else { return nil }
            bpm = UInt16(p[1]); i = 2
        }
        var e = Expected(bpm: bpm, energy: nil, rr: [])
        if flags & 0x08 != 0 {
            if p.count - i < 2 { e.energyMissing = true; return e }
            e.energy = u16(i); i += 2
        }
        if flags & 0x10 != 0 {
            var all: [UInt16] = []
            while p.count - i >= 2 { all.append(u16(i)); i += 2 }
            e.rr = Array(all.prefix(RRTicks.capacity))
            e.dropped = all.count - e.rr.count
            e.oddByte = p.count - i == 1
        } else {
            e.ignored = p.count - i
        }
        return e
    }

    /// Lengths 0…80 (past the 32-RR capacity), flags biased towards every field being announced.
    static func payloads(seed: UInt64, count: Int) -> [[UInt8]] {
        var g = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            var p = g.bytes(Int.random(in: 0...80, using: &g))
            if !p.isEmpty, Bool.random(using: &g) { p[0] |= 0x18 }
            return p
        }
    }

    @Test func randomPayloadsDecodeAsSpecifiedOrAreRefusedWithATypedError() {
        var decoded = 0, refused = 0
        for p in Self.payloads(seed: 0x48_52_4D, count: 5000) {
            let want = Self.expected(p)
            do {
                let m = try HeartRateMeasurement.decode(bytes: p)
                decoded += 1
                guard let want else { Issue.record("\(p) decoded, but has no heart-rate value"); continue }
                var got = Expected(bpm: m.beatsPerMinute, energy: m.energyExpendedKJ, rr: m.rrIntervals.array)
                got.ignored = m.ignoredTrailingBytes
                switch m.malformation {
                case .energyExpendedMissing?: got.energyMissing = true
                case .oddTrailingByte?: got.oddByte = true
                case .rrOverflow(let n)?: got.dropped = n
                case nil: break
                }
                // The decoder reports one malformation: an odd byte wins over dropped RR.
                var spec = want
                if spec.oddByte { spec.dropped = 0 }
                #expect(got == spec, "payload \(p)")
            } catch {
                refused += 1
                #expect(want == nil, "payload \(p) refused: \(error)")
                #expect(p.count <= 2, "only a missing heart-rate value is refused: \(p)")
            }
        }
        // The generator reaches both outcomes (not a test that cannot fail).
        #expect(decoded > 4000 && refused > 10)
    }
}
