import Foundation
import HealthModel
import HeartRateProfile
import Testing

/// Every shared vector decodes to its `expect` (real strap payloads and synthetic edge cases).
@Suite struct VectorTests {
    static let vectors: [Vector] = (try? Vector.load()) ?? []

    @Test func vectorsAreAvailable() {
        #expect(Fixtures.sharedDirectory != nil, "../shared (or $HEALTHGATE_SHARED) holds the shared vectors")
        #expect(Self.vectors.count >= 20)
    }

    @Test(arguments: vectors)
    func vectorDecodesToExpectation(_ v: Vector) throws {
        if let error = v.error {
            #expect { _ = try decode(v.hex) } throws: { e in "\(e)".contains(error) }
            return
        }
        let m = try decode(v.hex)
        #expect(Int(m.beatsPerMinute) == v.bpm)
        #expect(m.sensorContact.name == v.sensorContact)
        #expect(m.energyExpendedKJ.map(Int.init) == v.energyExpendedKJ)
        #expect(m.rrIntervals.map(Int.init) == v.rr)
        #expect(m.truncated == v.truncated)
    }
}
