import HealthModel
import Foundation
import HealthGateTesting
import Testing
@testable import SerialPedometer

/// Random lines and byte streams (seeded, reproducible) never crash the line parser, the framer
/// or the counter: every line is accepted or refused with a typed ``LineRejection``, and what is
/// accepted keeps the rules (device times in range, sample start ≤ end). Cheap insurance before
/// real fuzzing (issue #17: no trap on data from outside).
@Suite struct HostileLineTests {
    static let now = Date(timeIntervalSince1970: 1_795_392_000)
    static let codes: Set<String> = ["too-long", "invalid-utf8", "not-pedometer", "bad-time"]

    /// Tokens that steer random lines into every branch of the parsers: keys, separators,
    /// numbers at and past the limits, non-ASCII digits, NUL, JSON punctuation.
    static let tokens = ["{", "}", "\"", ":", ",", "=", " ", "\t", ".", "-", "+", "e", "E", "0", "1", "9", "00",
                         "steps", "t", "t0", "t1", "seq", "boot", "dsteps", "\"steps\"", "\"t\"", "\"seq\"", "\"boot\"",
                         "\"dsteps\"", "\"t0\"", "\"t1\"", "1e300", "-1e300", "1e400", "nan", "inf", "NaN", "Infinity",
                         "18446744073709551615", "18446744073709551616", "9223372036854775808", "1.8e19", "123.00",
                         "1795392000", "1795392000.5", "946684800", "true", "null", "[", "]", "\u{FF10}", "\u{0660}",
                         "\u{0}", "\\", "\\u0000", "Step: ", "Total Steps: ", "\r", "é", "🦶"]

    /// Values for the structured lines: ordinary, at the limits, past them, and not numbers.
    static let values = ["0", "1", "42", "123.00", "12.5", "-4", "1e3", "1795392000", "1795392060.25", "1795478400",
                         "1795478401", "946684799", "946684800", "0.5", "1e300", "-1e300", "1e400", "nan", "Infinity",
                         "18446744073709551615", "18446744073709551616", "1.8e19", "\u{FF10}", "\"b3\"", "true", "null", ""]

    /// Half token soup, half a JSON / key-value / bare line with random values, mutated by a
    /// random token a third of the time, so both the refusal and the acceptance paths are exercised.
    static func line(_ g: inout SplitMix64) -> String {
        func any(_ list: [String]) -> String { list[Int.random(in: 0..<list.count, using: &g)] }
        if Bool.random(using: &g) {
            return (0..<Int.random(in: 0...24, using: &g)).map { _ in any(tokens) }.joined()
        }
        let keys = ["steps", "t", "seq", "boot", "dsteps", "t0", "t1"].filter { $0 == "steps" || Bool.random(using: &g) }
        var text: String
        switch Int.random(in: 0...2, using: &g) {
        case 0: text = "{" + keys.map { "\"\($0)\":\(any(values))" }.joined(separator: ",") + "}"
        case 1: text = keys.map { "\($0)\(any([":", "=", ": "]))\(any(values).replacingOccurrences(of: "\"", with: ""))" }.joined(separator: any([",", " ", "\t"]))
        default: text = any(values)
        }
        for _ in 0..<(Int.random(in: 0...2, using: &g) == 0 ? 1 : 0) {
            var chars = Array(text)
            let at = Int.random(in: 0...chars.count, using: &g)
            if Bool.random(using: &g) || chars.isEmpty { chars.insert(contentsOf: any(tokens), at: at) } else { chars.remove(at: min(at, chars.count - 1)) }
            text = String(chars)
        }
        return text
    }

    static let formats: [LineFormat] = [.auto, .json, .keyValue, .integer,
                                        .profile(VendorProfile.builtIn["nicla-total"]!), .profile(VendorProfile.builtIn["nicla-run"]!)]

    @Test func randomLinesAreAcceptedOrRefusedWithATypedReason() {
        var g = SplitMix64(seed: 0x50_45_44)
        var accepted = 0, refused = 0
        let latest = Self.now.timeIntervalSince1970 + DeviceTimeRule.maxAhead
        for _ in 0..<4000 {
            let text = LineFramer.trim(Self.line(&g))
            for format in Self.formats {
                switch LineParser.parse(text, format: format, receivedAt: Self.now) {
                case .success(let r):
                    accepted += 1
                    #expect(r.steps != nil || r.deltaSteps != nil, "\(text) in \(format)")
                    for t in [r.deviceTime, r.deltaStart, r.deltaEnd].compactMap({ $0 }) {
                        #expect(t >= DeviceTimeRule.earliest && t <= latest, "\(text): time \(t)")
                    }
                case .failure(let why):
                    refused += 1
                    #expect(Self.codes.contains(why.code) && !why.description.isEmpty, "\(text): \(why)")
                }
            }
        }
        // Both outcomes are reached, time refusals included (not a test that cannot fail).
        #expect(accepted > 300 && refused > 10_000, "accepted \(accepted), refused \(refused)")
    }

    @Test(arguments: [false, true])
    func randomByteStreamsNeverTrapTheSession(trust: Bool) throws {
        // Random bytes, and random token lines, in random chunks through framer → parser → counter.
        var g = SplitMix64(seed: trust ? 0x54_52 : 0x49_47)
        let config = try CounterConfiguration(deviceID: "FUZZ", counterBits: 16, trustDeviceTime: trust)
        var session = PedometerSession(format: .auto, counter: StepCounter(configuration: config))
        var receipt = Self.now
        var samples: [StepInterval] = []
        for _ in 0..<3000 {
            receipt = receipt.addingTimeInterval(Double.random(in: 0...120, using: &g))
            let chunk: [UInt8] = Int.random(in: 0...3, using: &g) == 0
                ? g.bytes(Int.random(in: 0...40, using: &g)) + (Bool.random(using: &g) ? [0x0A] : [])
                : Array((Self.line(&g) + (Bool.random(using: &g) ? "\n" : "\r\n")).utf8)
            for e in session.feed(chunk, receivedAt: receipt) {
                if case .sample(let s) = e { samples.append(s) }
                if case .rejected(_, let why) = e { #expect(Self.codes.contains(why.code)) }
            }
        }
        for e in session.finish(receivedAt: receipt) { if case .sample(let s) = e { samples.append(s) } }
        for s in samples {
            #expect(s.start <= s.end, "\(s)")
            #expect(s.end.timeIntervalSince1970 <= receipt.timeIntervalSince1970 + DeviceTimeRule.maxAhead, "\(s)")
            #expect(s.start.timeIntervalSince1970 >= DeviceTimeRule.earliest, "\(s)")
        }
        #expect(session.acceptedLines > 50 && session.rejects.values.reduce(0, +) > 1000, "accepted \(session.acceptedLines), \(session.rejects)")
        #expect(!samples.isEmpty)
        #expect(session.counter.state.tally.steps == samples.reduce(0) { $0 + $1.steps })
    }
}
