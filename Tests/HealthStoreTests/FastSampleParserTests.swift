import Foundation
import HealthGateTesting
import HealthModel
import Testing
@testable import HealthStore

/// The import's fast parser against the Foundation one (`SampleJSON.sample(fromLine:)`), which
/// decides every line the fast one declines: on every line the fast parser accepts, both must
/// give the same sample (UUID, value, unit, dates, source, device, metadata, RR), and a line the
/// Foundation parser refuses must never be accepted. Seeded, so a failure names its line.
@Suite("Fast import parser: same samples as the Foundation parser, on random and hostile lines")
struct FastSampleParserTests {
    /// Both parsers on one line (bytes without the line end). Returns whether the fast one took it.
    @discardableResult
    static func compare(_ line: [UInt8], _ parser: inout FastSampleParser, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard let text = String(validating: line, as: UTF8.self) else { return false }   // the reader skips these first
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let slow = try? SampleJSON.sample(fromLine: trimmed)
        let fast = line.withUnsafeBufferPointer { parser.sample($0) }
        guard let fast else { return false }
        #expect(slow != nil, "the fast parser accepted a line the Foundation parser refuses: \(text)", sourceLocation: sourceLocation)
        #expect(slow == fast, "different samples for: \(text)\nslow: \(String(describing: slow))\nfast: \(fast)", sourceLocation: sourceLocation)
        if let slow, slow == fast {
            // Hashable equality treats 0 and -0 alike: the stored bits must match too.
            #expect(slow.quantity.value.bitPattern == fast.quantity.value.bitPattern, "value bits differ: \(text)", sourceLocation: sourceLocation)
            #expect(slow.startDate.timeIntervalSince1970.bitPattern == fast.startDate.timeIntervalSince1970.bitPattern, sourceLocation: sourceLocation)
        }
        return true
    }

    @Test("the export's own lines take the fast path and give the Foundation parser's samples")
    func exportShape() async throws {
        // Heavy and synchronous: off the cooperative pool, whose threads the other suites' async
        // tests (simulated straps with wall-clock watchdogs) need meanwhile.
        try await offThreadOneAtATime {
            var parser = FastSampleParser()
            var rng = SplitMix64(seed: 1)
            for i in 0..<500 {
                let t = Date(timeIntervalSince1970: 1_793_577_600 + Double(i) * 1.25 + Double(Int.random(in: 0..<1000, using: &rng)) / 1000)
                let made = try QuantitySample(
                    uuid: UUID.timeOrdered(at: t, using: &rng), type: i % 3 == 0 ? .stepCount : .heartRate,
                    quantity: Quantity(i % 3 == 0 ? Double(i) : 40 + Double(i % 150) + 0.25, i % 3 == 0 ? .count : .countPerMinute),
                    start: t, end: i % 3 == 0 ? t.addingTimeInterval(60) : t,
                    source: i % 2 == 0 ? Source(name: "HealthGate BLE", identifier: "org.healthgate.ble") : Source(name: "Wätch", identifier: "w", version: "1.\(i % 4)"),
                    device: i % 5 == 0 ? nil : Device(name: "Strap \(i % 3)", manufacturer: "Polar", localIdentifier: "ble:\(i % 3)"),
                    metadata: i % 3 == 0 ? Metadata(syncIdentifier: "s\(i)", syncVersion: i, wasUserEntered: i % 2 == 0, user: ["note": .string("n\(i)"), "k": .number(Double(i) / 7)])
                        : Metadata(heartRateSensorLocation: .chest, sensorContact: i % 4 == 0 ? .notDetected : .detected),
                    rrIntervals: i % 3 == 0 ? nil : RRIntervals(ticks: [UInt16(600 + i % 300), 800], precededByGap: i % 7 == 0))
                // Every fourth a quantity of a quantity series (a strap's export: "series": {"index": n}).
                let sample = i % 4 == 1 ? try made.inSeries(index: i * 37) : made
                let object = try SampleJSON.object(sample)
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                #expect(Self.compare(Array(data), &parser), "the fast parser declined an export line: \(String(decoding: data, as: UTF8.self))")
            }
        }
    }

    // Sizes: the Foundation parser throws internally for most values, and Swift Testing records a
    // backtrace for every throw, so each line costs milliseconds here (not in the product).
    @Test("6,000 random lines (every field's spellings, good and bad) and 6,000 mutated ones")
    func randomAndHostile() async {
        // Heavy and synchronous: off the cooperative pool, whose threads the other suites' async
        // tests (simulated straps with wall-clock watchdogs) need meanwhile.
        await offThreadOneAtATime {
            var fuzz = LineFuzzer(seed: 12)
            var parser = FastSampleParser()
            var accepted = 0, total = 0
            for _ in 0..<6_000 {
                let line = fuzz.line()
                total += 1
                if Self.compare(Array(line.utf8), &parser) { accepted += 1 }
            }
            // Hostile: a good line with bytes deleted, inserted, replaced, or cut short.
            var mutatedAccepted = 0
            for _ in 0..<6_000 {
                var bytes = Array(fuzz.goodLine().utf8)
                for _ in 0..<Int.random(in: 1...3, using: &fuzz.rng) { fuzz.mutate(&bytes) }
                if Self.compare(bytes, &parser) { mutatedAccepted += 1 }
            }
            // The comparison means something only if the fast path takes many lines.
            #expect(accepted > 1_000, "the fast parser took only \(accepted) of \(total) random lines")
            #expect(mutatedAccepted > 300, "the fast parser took only \(mutatedAccepted) mutated lines")
        }
    }

    @Test("a parser's remembered source, device and metadata never leak into a line that differs")
    func cachesFollowTheBytes() {
        var parser = FastSampleParser()
        let lines = [
            #"{"type":"heartRate","value":70,"start":"2026-11-02T08:00:00Z","source":"A","device":{"name":"X"},"metadata":{"sensorContact":"detected"}}"#,
            #"{"type":"heartRate","value":70,"start":"2026-11-02T08:00:00Z","source":"A","sourceIdentifier":"a","device":{"name":"Y"},"metadata":{"sensorContact":"notDetected"}}"#,
            #"{"type":"heartRate","value":70,"start":"2026-11-02T08:00:00Z","source":"A","sourceVersion":"a","device":{"name":"Y"},"metadata":{"sensorContact":"notDetected"}}"#,
            #"{"type":"heartRate","value":70,"start":"2026-11-02T08:00:00Z","source":"Aa","device":"Y","metadata":{}}"#,
            #"{"type":"heartRate","value":70,"start":"2026-11-02T08:00:00Z","source":"A","sourceIdentifier":"","device":null}"#,
            #"{"type":"heartRate","value":70,"start":"2026-11-02T08:00:00Z","source":"A","sourceVersion":""}"#,
        ]
        for line in lines + lines.reversed() + lines {
            #expect(Self.compare(Array(line.utf8), &parser))
        }
    }

    @Test("numbers: every spelling the fast parser reads gives Foundation's double, bit for bit")
    func numbers() async {
        // Heavy and synchronous: off the cooperative pool, whose threads the other suites' async
        // tests (simulated straps with wall-clock watchdogs) need meanwhile.
        await offThreadOneAtATime {
            var parser = FastSampleParser()
            var rng = SplitMix64(seed: 7)
            var spellings = ["72", "72.0", "7.2e1", "720E-1", "0.72e+2", "1e2", "0", "0.0", "-0", "-0.0", "0e5", "1E0", "00", "01", "+1",
                             "1.", ".5", "1e", "1e+", "--1", "0x10", "1e400", "1e-400", "4.9e-324", "499.99999999999999999999",
                             "0.30000000000000004", "99.999999999999999", "123456789012345678", "72.00000000000001",
                             "NaN", "Infinity", "true", "\"72\"", "null", "1_0", "72 ", " 72"]
            for _ in 0..<700 {
                let v = Double.random(in: 0...500, using: &rng)
                spellings.append(String(v))
                spellings.append(String(format: "%.\(Int.random(in: 0...20, using: &rng))g", v))
                spellings.append(String(format: "%.\(Int.random(in: 0...17, using: &rng))e", v))
                spellings.append(String(Int.random(in: 0...500, using: &rng)))
                let mantissa = pick(["0", "1", "12", "0.5", "3.25", "100"], &rng), sign = pick(["", "+", "-"], &rng)
                spellings.append(mantissa + pick(["e", "E"], &rng) + sign + String(Int.random(in: 0...3, using: &rng)))
            }
            var accepted = 0
            for s in spellings {
                let line = #"{"type":"heartRate","value":\#(s),"start":"2026-11-02T08:00:00Z","metadata":{"k":\#(s)},"rrIntervals":{"ticks":[\#(s)]}}"#
                if Self.compare(Array(line.utf8), &parser) { accepted += 1 }
                let plain = #"{"type":"heartRate","value":\#(s),"start":"2026-11-02T08:00:00Z"}"#
                if Self.compare(Array(plain.utf8), &parser) { accepted += 1 }
            }
            #expect(accepted > 2_000)
        }
    }

    @Test("dates: every text the fast reader takes gives ISO8601.parse's instant, bit for bit; it takes the usual shapes")
    func dates() async {
        // Heavy and synchronous: off the cooperative pool, whose threads the other suites' async
        // tests (simulated straps with wall-clock watchdogs) need meanwhile.
        await offThreadOneAtATime {
            var rng = SplitMix64(seed: 99)
            var texts = ["2026-11-02T08:00:00Z", "2026-11-02 08:00:00Z", "2026-11-02T08:00Z", "2026-11-02T09:00:00+01:00",
                         "2026-11-02T03:30:00-04:30", "2026-11-02T08:00:00.941Z", "2026-11-02T08:00:00.123456789Z",
                         "2026-11-02T08:00:00.1234567891Z", "2026-11-02T08:00:00.Z", "2028-02-29T00:00:00Z", "2026-02-29T00:00:00Z",
                         "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
                         "1970-01-01T00:00:00Z", "1970-01-01T00:59:59+01:00", "1970-01-01T00:00:00.5+00:01", "1969-12-31T23:59:59Z",
                         "2026-11-02T24:00:00Z", "2026-11-02T23:60:00Z", "2026-11-02T23:59:60Z", "2026-11-02t08:00:00Z",
                         "2026-11-02T08:00:00z", "2026-11-02T08:00:00", "2026-11-02", "2026-11-2T08:00:00Z", "2026-11-02T08:00:00+0100",
                         "2026-11-02T08:00:00+24:00", "2026-11-02T08:00:00+23:59", "2026-11-02T08:00:00-00:60", " 2026-11-02T08:00:00Z",
                         "2026-11-02T08:00:00Z ", "２０２６-11-02T08:00:00Z", "2026-11-02T08:00:00.000Z", "2100-02-29T00:00:00Z",
                         "2000-02-29T12:00:00.000001Z", ""]
            for _ in 0..<20_000 {
                let y = Int.random(in: 1960...2300, using: &rng), mo = Int.random(in: 0...13, using: &rng), d = Int.random(in: 0...32, using: &rng)
                let h = Int.random(in: 0...25, using: &rng), mi = Int.random(in: 0...60, using: &rng), s = Int.random(in: 0...60, using: &rng)
                var t = String(format: "%04d-%02d-%02d%@%02d:%02d", y, mo, d, Bool.random(using: &rng) ? "T" : " ", h, mi)
                if Int.random(in: 0..<5, using: &rng) > 0 { t += String(format: ":%02d", s) }
                if Bool.random(using: &rng) {
                    let digits = Int.random(in: 1...10, using: &rng)
                    t += "." + String((0..<digits).map { _ in Character(String(Int.random(in: 0...9, using: &rng))) })
                }
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: t += "Z"
                case 1: t += String(format: "%@%02d:%02d", Bool.random(using: &rng) ? "+" : "-", Int.random(in: 0...24, using: &rng), Int.random(in: 0...60, using: &rng))
                case 2: t += String(format: "-%02d:%02d", Int.random(in: 0...14, using: &rng), [0, 30, 45][Int.random(in: 0..<3, using: &rng)])
                default: break
                }
                texts.append(t)
            }
            var taken = 0
            for t in texts {
                let fast = Array(t.utf8).withUnsafeBufferPointer { FastDate.parse($0) }
                guard let fast else { continue }
                taken += 1
                let slow = try? ISO8601.parse(t, localTimeZone: nil)
                #expect(slow != nil, "the fast reader took \(t), which ISO8601.parse refuses")
                #expect(slow?.timeIntervalSince1970.bitPattern == fast.timeIntervalSince1970.bitPattern, "\(t): \(String(describing: slow)) vs \(fast)")
            }
            #expect(taken > 2_000)
            for good in texts.prefix(7) + ["2026-11-02T08:00:00.941Z", "9999-12-31T23:59:59.999Z", "2000-02-29T12:00:00.000001Z"] {
                #expect(Array(good.utf8).withUnsafeBufferPointer { FastDate.parse($0) } != nil, "\(good) should take the fast path")
            }
            // Past 9999-12-31 in UTC (an offset, or a fraction rounding up): the full parser's to refuse.
            for past in ["9999-12-31T23:59:59.999999999Z", "9999-12-31T23:30:00-01:00"] {
                #expect(Array(past.utf8).withUnsafeBufferPointer { FastDate.parse($0) } == nil, "\(past)")
                #expect((try? ISO8601.parse(past, localTimeZone: nil)) == nil, "\(past)")
            }
        }
    }
}

/// Random JSON lines in the import shape: every field in good and bad spellings, keys in random
/// order, random spacing, sometimes an unknown or a repeated key.
struct LineFuzzer {
    var rng: SplitMix64

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    mutating func pick<T>(_ xs: [T]) -> T { xs[Int.random(in: 0..<xs.count, using: &rng)] }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }

    mutating func date() -> String {
        let base = 1_793_577_600.0 + Double.random(in: 0..<86_400 * 30, using: &rng)
        let ms = (base * 1000).rounded() / 1000
        let good = ISO8601.string(Date(timeIntervalSince1970: chance(0.5) ? base.rounded() : ms))
        if chance(0.8) { return good }
        return pick([good.replacingOccurrences(of: "T", with: " "), good.replacingOccurrences(of: "Z", with: "+00:00"),
                     "2026-11-02T09:00:00+01:00", "2026-11-02T08:00Z", "2026-11-02T08:00:00.123456789Z", "2026-11-02T08:00:00", "2026-11-02",
                     "2026-02-30T08:00:00Z", "2026-11-02T24:00:00Z", "1969-12-31T23:59:59Z", "2026-11-02t08:00:00Z",
                     "2026-11-02T08:00:00.1234567890Z", "2026-11-02T08:00:00+0100"])
    }

    mutating func number(_ v: Double) -> String {
        pick([String(Int(v)), "\(v)", "\(Int(v)).0", "\(v / 10)e1", "\(Int(v))E+0", "0\(Int(v))", "+\(Int(v))", "-\(Int(v))", "\(Int(v)).",
              "1e400", "-0", "0.30000000000000004", "\"\(Int(v))\"", "null", "true", String(Double.random(in: 0...600, using: &rng))])
    }

    mutating func string(_ s: String) -> String { "\"" + s + "\"" }

    /// One of `good` most of the time, else one of `bad` (odd or wrong spellings).
    mutating func mix(_ good: [String], _ bad: [String]) -> String { chance(0.85) ? pick(good) : pick(bad) }

    mutating func uuid() -> UUID { UUID.timeOrdered(at: Date(timeIntervalSince1970: 1_793_577_600), using: &rng) }

    mutating func fields() -> [(String, String)] {
        var f: [(String, String)] = []
        let type = mix(["heartRate", "heartRate", "stepCount"], ["bodyMass", "nope", "HeartRate"])
        if chance(0.97) { f.append(("type", chance(0.98) ? string(type) : "5")) }
        let v = type == "stepCount" ? Double(Int.random(in: 0...2_000, using: &rng)) : Double.random(in: 30...200, using: &rng).rounded()
        if chance(0.97) { f.append(("value", chance(0.8) ? String(Int(v)) : number(v))) }
        if chance(0.5) {
            f.append(("unit", type == "stepCount" ? mix(["\"count\""], ["\"count/min\"", "3"])
                : mix(["\"count/min\"", "\"count/s\""], ["\"count\"", "\"kg\"", "\"bpm\"", "\"\"", "3", "null"])))
        }
        let start = date()
        if chance(0.97) { f.append(("start", string(start))) }
        if chance(0.6) { f.append(("end", mix([string(start), string(start), string(date())], ["null", "5"]))) }
        if chance(0.5) {
            f.append(("uuid", mix([string(uuid().uuidString.lowercased()), string(uuid().uuidString)], ["null", "\"not-a-uuid\"",
                                    "\"{\(uuid().uuidString)}\"", "\"0190000g-0000-7000-8000-000000000000\"", "5"])))
        }
        if chance(0.7) {
            f.append(("source", mix(["\"Watch\"", "\"HealthGate BLE\"", "\"Wätch\""], ["{\"name\":\"x\",\"identifier\":\"y\"}", "null", "5",
                                      "\"with\\\"escape\"", "\"a\\u0000b\"", "\"\""])))
        }
        if chance(0.4) { f.append(("sourceIdentifier", mix(["\"org.healthgate.ble\"", "\"w\""], ["null", "5", "\"\""]))) }
        if chance(0.2) { f.append(("sourceVersion", mix(["\"1.0\""], ["null", "2"]))) }
        if chance(0.6) {
            f.append(("device", mix(["null", "\"Strap\"", "{\"localIdentifier\":\"bench:strap\",\"name\":\"Bench strap\"}",
                                     "{\"name\":null,\"model\":\"H10\"}", "{}", "{\"udiDeviceIdentifier\":\"u\",\"manufacturer\":\"Polar\"}"],
                                    ["{\"foo\":\"x\"}", "{\"name\":5}", "[1]", "{\"name\":\"a\",\"name\":\"b\"}", "5"])))
        }
        if chance(0.6) {
            let entries = ["\"heartRateSensorLocation\":" + pick(["\"chest\"", "\"CHEST\"", "\"1\"", "\"+1\"", "\"wrist\"", "\"nope\"", "1", "1.0", "\"éar\""]),
                           "\"sensorContact\":" + pick(["\"detected\"", "\"notDetected\"", "\"DeTeCtEd\"", "\"3\"", "3", "null"]),
                           "\"HKMetadataKeyHeartRateMotionContext\":" + pick(["\"active\"", "\"sedentary\"", "2", "\"x\""]),
                           "\"syncIdentifier\":\"s\(Int.random(in: 0...3, using: &rng))\",\"syncVersion\":" + pick(["1", "2", "1.5", "1e20", "\"1\""]),
                           "\"HKMetadataKeySyncIdentifier\":\"k\"", "\"syncVersion\":3",
                           "\"wasUserEntered\":" + pick(["true", "false", "1", "0", "\"yes\""]),
                           "\"note\":" + pick(["\"x\"", "\"2026-11-02T08:00:00Z\"", "1.5", "0", "true", "null", "[1]", "{}", "\"\""]),
                           "\"\":\"x\"", "\"HKMetadataKeySyncVersion\":1", "\"user.k\":2", "\"é\":1", "\"e\u{301}\":2"]
            var chosen: [String] = []
            for _ in 0..<Int.random(in: 0...2, using: &rng) { chosen.append(chance(0.6) ? pick(Array(entries.prefix(2))) : pick(entries)) }
            f.append(("metadata", chance(0.05) ? pick(["null", "5", "[]"]) : "{" + chosen.joined(separator: ",") + "}"))
        }
        if chance(0.5) {
            f.append(("rrIntervals", mix(["null", "{\"ticks\":[800,810]}", "{\"precededByGap\":true,\"ticks\":[]}", "{\"ticks\":[8e2]}"], ["{\"ticks\":[0]}",
                                           "{\"ticks\":[65535]}", "{\"ticks\":[65534,1]}", "{\"ticks\":[800.5]}", "{\"precededByGap\":false}",
                                           "{\"ticks\":[800],\"precededByGap\":1}", "{\"ticks\":\"x\"}", "{\"ticks\":[800],\"x\":1}", "[]",
                                           "{\"ticks\":[8e2]}", "{\"ticks\":[800],\"ticks\":[801]}"])))
        }
        // A series quantity needs its series' UUID: offered only beside one.
        if f.contains(where: { $0.0 == "uuid" }), chance(0.2) {
            f.append(("series", mix(["{\"index\":0}", "{\"index\":7}", "{\"index\":123456}", "{ \"index\" : 3 }", "null"],
                                    ["{\"index\":-1}", "{\"index\":1.5}", "{}", "5", "{\"index\":\"3\"}", "{\"index\":1e20}",
                                     "{\"index\":3,\"x\":1}", "{\"index\":9e15}", "{\"index\":true}", "[3]", "{\"index\":-0}",
                                     "{\"index\":3e0}", "{\"index\":8999999999999999}"])))
        }
        if chance(0.05) { f.append(("foo", "1")) }
        if chance(0.05), let dup = f.first { f.append(dup) }
        f.shuffle(using: &rng)
        return f
    }

    mutating func render(_ f: [(String, String)]) -> String {
        let colon = pick([":", ": ", " : ", ":\t"]), comma = pick([",", ", ", " ,"])
        var s = "{" + f.map { "\"\($0.0)\"" + colon + $0.1 }.joined(separator: comma) + "}"
        if chance(0.1) { s = pick([" ", "\t", "\u{A0}", "\r"]) + s }
        if chance(0.1) { s += pick([" ", "\t", "\u{A0}", "\r", " x", "}"]) }
        return s
    }

    mutating func line() -> String { render(fields()) }

    /// A line the Foundation parser accepts, in the export's shape with random choices.
    mutating func goodLine() -> String {
        let t = ISO8601.string(Date(timeIntervalSince1970: 1_793_577_600 + Double(Int.random(in: 0..<86_400_000, using: &rng)) / 1000))
        let f: [(String, String)] = [
            ("device", "{\"localIdentifier\":\"bench:strap\",\"name\":\"Bench strap\"}"), ("end", "\"\(t)\""),
            ("metadata", "{\"heartRateSensorLocation\":\"chest\",\"sensorContact\":\"detected\"}"),
            ("rrIntervals", "{\"precededByGap\":false,\"ticks\":[\(Int.random(in: 300...1500, using: &rng))]}"),
            ("source", "\"HealthGate BLE\""), ("sourceIdentifier", "\"org.healthgate.ble\""), ("start", "\"\(t)\""),
            ("type", "\"heartRate\""), ("unit", "\"count/min\""), ("uuid", "\"\(uuid().uuidString.lowercased())\""),
            ("value", String(Int.random(in: 40...200, using: &rng))),
        ]
        return "{" + f.map { "\"\($0.0)\":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// One random edit: delete, insert or replace a byte (JSON's significant bytes, control
    /// characters, non-ASCII, digits), or cut the line short.
    mutating func mutate(_ b: inout [UInt8]) {
        guard !b.isEmpty else { return }
        let i = Int.random(in: 0..<b.count, using: &rng)
        let byte: UInt8 = pick([0x7B, 0x7D, 0x5B, 0x5D, 0x22, 0x3A, 0x2C, 0x5C, 0x20, 0x09, 0x00, 0x1F, 0x7F, 0x30, 0x39, 0x2D, 0x2E,
                                0x65, 0x45, 0x2B, 0x5A, 0x54, 0x6E, 0x74, 0xC3, 0xA9, 0x41])
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: b.remove(at: i)
        case 1: b.insert(byte, at: i)
        case 2: b[i] = byte
        default: b.removeLast(b.count - i)
        }
    }
}

private func pick<T>(_ xs: [T], _ rng: inout SplitMix64) -> T { xs[Int.random(in: 0..<xs.count, using: &rng)] }
