import HealthModel
import GATT
import HealthGateTesting
import Testing

/// Random ATT PDUs (seeded, reproducible), as a misbehaving peer could send them, never trap the
/// codec: each decodes to a value that encodes without trapping, or is refused with a typed
/// ``ATTDecodeError`` (issue #17: no trap on data from outside).
@Suite struct HostileATTTests {
    @Test func randomPDUsDecodeOrAreRefused() {
        var g = SplitMix64(seed: 0x41_54_54)
        // Known opcodes most of the time, so the list responses' entry-length arithmetic is hit.
        let opcodes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x10, 0x11,
                                0x12, 0x13, 0x1B, 0x1D, 0x1E, 0x52, 0xD2, 0xFF]
        var decoded = 0, refused = 0
        for _ in 0..<5000 {
            var pdu = g.bytes(Int.random(in: 0...40, using: &g))
            if !pdu.isEmpty, Int.random(in: 0...3, using: &g) > 0 { pdu[0] = opcodes[Int.random(in: 0..<opcodes.count, using: &g)] }
            if pdu.count > 1, Bool.random(using: &g) { pdu[1] = UInt8.random(in: 0...20, using: &g) }   // small entry lengths
            do {
                let value = try ATTPDU(decoding: pdu)
                decoded += 1
                #expect(!value.encode().isEmpty, "\(pdu)")
            } catch {
                refused += 1
                #expect(!error.reason.isEmpty, "\(pdu)")
            }
        }
        #expect(decoded > 1000 && refused > 500, "decoded \(decoded), refused \(refused)")
    }
}
