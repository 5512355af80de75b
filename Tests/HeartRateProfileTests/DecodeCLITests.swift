import Foundation
import HealthGateTesting
import Testing

/// `healthgate decode heart-rate HEX [--json]` on every shared vector, through the real binary.
@Suite struct DecodeCLITests {
    static func run(_ args: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let r = try HealthGateExecutable.run(args)
        return (r.status, r.stdout, r.stderr)
    }

    @Test(arguments: (try? Vector.load()) ?? [])
    func jsonMatchesTheVector(_ v: Vector) throws {
        let r = try Self.run(["decode", "heart-rate", v.hex, "--json"])
        if let error = v.error {
            #expect(r.status == 65)
            #expect(r.stderr.contains(error))
            #expect(r.stdout.isEmpty)
            return
        }
        #expect(r.status == 0)
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(Set(obj.keys) == ["bpm", "sensorContact", "energyExpendedKJ", "rr", "truncated"])
        #expect(obj["bpm"] as? Int == v.bpm)
        #expect(obj["sensorContact"] as? String == v.sensorContact)
        if let e = v.energyExpendedKJ { #expect(obj["energyExpendedKJ"] as? Int == e) } else { #expect(obj["energyExpendedKJ"] is NSNull) }
        #expect(obj["rr"] as? [Int] == v.rr)
        #expect(obj["truncated"] as? Bool == v.truncated)
    }

    @Test func humanOutputAndBadHex() throws {
        let ok = try Self.run(["decode", "heart-rate", "0x16 4e 1b03 1203"])
        #expect(ok.status == 0 && ok.stdout.contains("78") && ok.stdout.contains("[795, 786]"))
        let bad = try Self.run(["decode", "heart-rate", "16z"])
        #expect(bad.status == 65 && bad.stderr.contains("not hex"))
        // Issue #17 item 8: digits outside ASCII pass `Character.isHexDigit` and crashed the
        // command (a force unwrap of UInt8(_:radix:)); they are bad data, exit 65 with a sentence.
        for text in ["\u{FF10}048", "00\u{FF14}8", "\u{0660}\u{0664}", "1\u{FF21}", "\u{FF10}\u{FF10}"] {
            let r = try Self.run(["decode", "heart-rate", text])
            #expect(r.status == 65 && r.stderr.contains("not hex") && r.stderr.contains("ASCII"), "\(text): \(r.status) \(r.stderr)")
        }
        let help = try Self.run(["decode", "heart-rate", "--help"])
        #expect(help.status == 0 && help.stdout.contains("1/1024 s") && help.stdout.contains("Example"))
    }
}
