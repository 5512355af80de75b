import Foundation
@testable import Sysexits
import Testing

/// `JSONOutput`'s own writer (`CompactJSON`) against JSONSerialization: byte for byte the same
/// text on random values (keys that sort by collation, numbers of every magnitude, strings with
/// controls and non-ASCII text), and nil, not a guess, where it cannot be sure.
@Suite struct CompactJSONTests {
    struct Rng: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 { state = state &* 6364136223846793005 &+ 1442695040888963407; return state ^ (state >> 29) }
    }

    static func reference(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value, options: JSONOutput.textOptions), as: UTF8.self)
    }

    static func key(_ r: inout Rng) -> String {
        let alphabet = Array("aAbBzZ_019")
        return String((0..<Int.random(in: 1...6, using: &r)).map { _ in alphabet.randomElement(using: &r)! })
    }

    static func value(_ r: inout Rng, depth: Int) -> Any {
        switch Int.random(in: 0...(depth > 2 ? 5 : 7), using: &r) {
        case 0: return Int.random(in: -1_000_000...1_000_000, using: &r) * (Bool.random(using: &r) ? 1 : 1_000_000_000)
        case 1:
            let mantissa = Double.random(in: -10...10, using: &r)
            return [mantissa, mantissa.rounded(), mantissa * pow(10, Double(Int.random(in: -30...30, using: &r))), 0.1, 97.65625, -0.0][Int.random(in: 0...5, using: &r)]
        case 2: return Bool.random(using: &r)
        case 3: return NSNull()
        case 4, 5:
            let pieces = ["a", "é", "😀", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{7f}", "\u{2028}", " ", "\u{0}", "\r", "\u{8}", "\u{c}"]
            return (0..<Int.random(in: 0...8, using: &r)).map { _ in pieces.randomElement(using: &r)! }.joined()
        case 6: return (0..<Int.random(in: 0...4, using: &r)).map { _ in value(&r, depth: depth + 1) }
        default:
            var o: [String: Any] = [:]
            for _ in 0..<Int.random(in: 0...6, using: &r) { o[key(&r)] = value(&r, depth: depth + 1) }
            return o
        }
    }

    @Test("random values: the same text as JSONSerialization whenever it answers; it answers for most")
    func matchesJSONSerialization() throws {
        var r = Rng(state: 42)
        var answered = 0
        for _ in 0..<3_000 {
            let v: [String: Any] = ["v": Self.value(&r, depth: 0), "w": Self.value(&r, depth: 0)]
            if let mine = CompactJSON.string(v) {
                answered += 1
                #expect(mine == (try Self.reference(v)), "\(v)")
            }
        }
        #expect(answered > 2_000, "it should answer for most values, answered \(answered)")
    }

    @Test("keys: collation order (_ before digits before letters, no case, digit runs by value)")
    func keyOrder() throws {
        let keys = ["a_b", "ab", "a1b", "a_1", "a1", "a2", "a10", "x_", "x", "x0", "_", "__", "0", "9", "10", "a", "ab_",
                    "heart_rate", "header", "hrvIntervals", "HRV", "start_date_time", "startDate", "source_name", "sourceIdentifier"]
        let o = Dictionary(uniqueKeysWithValues: keys.map { ($0, 1 as Any) })
        #expect(CompactJSON.string(o) == (try Self.reference(o)))
    }

    @Test("where it cannot be sure it answers nil: a key outside [A-Za-z0-9_], keys equal but for case or zeros, NaN, NSNumber")
    func declines() throws {
        #expect(CompactJSON.string(["a-b": 1]) == nil)
        #expect(CompactJSON.string(["ab": 1, "AB": 2]) == nil && CompactJSON.string(["a1": 1, "a01": 2]) == nil)
        #expect(CompactJSON.string([Double.nan]) == nil && CompactJSON.string([Double.infinity]) == nil)
        #expect(CompactJSON.string([NSNumber(value: 1)]) == nil)
        // JSONOutput still writes them (through JSONSerialization), or refuses NaN with its sentence.
        #expect(try JSONOutput.string(["ab": 1, "AB": 2]) == (try Self.reference(["ab": 1, "AB": 2])))
        #expect(throws: CLIFailure.self) { try JSONOutput.string([Double.nan]) }
    }
}
