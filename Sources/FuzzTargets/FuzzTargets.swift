import BluetoothLinux
import Capture
import Foundation
import GATT
import HealthGateConfiguration
import HealthModel
import HealthStore
import HeartRateProfile
import SerialPedometer

/// An input that broke a parser's promise without crashing it: a round trip that changed a
/// value, a sample a parser accepted that the model forbids. libFuzzer sees it as a crash (the
/// fuzzing entry point aborts); the corpus test reports it as a failed expectation.
package struct FuzzViolation: Error, CustomStringConvertible {
    /// What went wrong, with the values involved.
    package let description: String

    package init(_ description: String) { self.description = description }
}

/// One parser under fuzzing: a name (`scripts/fuzz.sh NAME`, the corpus directory
/// `Tests/FuzzCorpus/NAME`) and what it does with one input. Every parser of bytes from the air,
/// the serial line or a file the user hands over has one. Errors the parser throws for bad input
/// are the expected outcome and are swallowed; a trap, a hang or a ``FuzzViolation`` is a bug.
package struct FuzzTarget: Sendable {
    /// The target's name: a directory name and a command-line word.
    package let name: String
    /// What the bytes are, for `--help` and docs/fuzzing.md.
    package let summary: String
    /// Runs one input.
    package let run: @Sendable (UnsafeRawBufferPointer) throws(FuzzViolation) -> Void

    /// Runs one input held in memory: the promise it broke, or nil.
    package func violation(in input: Data) -> FuzzViolation? {
        input.withUnsafeBytes { raw -> FuzzViolation? in
            do throws(FuzzViolation) { try run(raw); return nil } catch { return error }
        }
    }

    /// Every target, in a fixed order.
    package static let all: [FuzzTarget] = [
        heartRateMeasurement, profileValues, attPDU, advertising, pedometerLines, stepCounter,
        configuration, importLine, changeAnchor, capture,
    ]

    /// The target called `name`, if any.
    package static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}

// MARK: Bluetooth LE

extension FuzzTarget {
    /// A Heart Rate Measurement notification (0x2A37). A decoded measurement encodes to bytes
    /// that decode to the same values (the decoder and the simulator's encoder agree), and the RR
    /// intervals kept are a prefix of every RR interval the payload holds.
    static let heartRateMeasurement = FuzzTarget(
        name: "heart-rate-measurement", summary: "Heart Rate Measurement notifications (0x2A37)"
    ) { raw throws(FuzzViolation) in
        let all = HeartRateMeasurement.allRRIntervals(in: raw)
        guard let m = try? HeartRateMeasurement.decode(raw) else { return }
        guard Array(m.rrIntervals).elementsEqual(all.prefix(Array(m.rrIntervals).count)) else {
            throw FuzzViolation("the RR intervals kept \(Array(m.rrIntervals)) are not a prefix of the payload's \(all)")
        }
        guard let again = try? HeartRateMeasurement.decode(bytes: m.encode()) else {
            throw FuzzViolation("a decoded measurement's encoding \(m.encode()) does not decode")
        }
        guard again.beatsPerMinute == m.beatsPerMinute, again.sensorContact == m.sensorContact,
              again.energyExpendedKJ == m.energyExpendedKJ, again.rrIntervals == m.rrIntervals else {
            throw FuzzViolation("decode(encode(m)) changed \(m) into \(again)")
        }
    }

    /// The strap's other characteristics, told apart by the first byte: Body Sensor Location
    /// (0x2A38), Battery Level (0x2A19), a Device Information string (0x180A).
    static let profileValues = FuzzTarget(
        name: "profile-values", summary: "Body Sensor Location, Battery Level and Device Information values"
    ) { raw throws(FuzzViolation) in
        guard let selector = raw.first else { return }
        let value = Array(raw.dropFirst())
        switch selector % 3 {
        case 0:
            if let location = try? BodySensorLocation(bytes: value), location.rawValue != value.first {
                throw FuzzViolation("Body Sensor Location \(value) decoded to \(location.rawValue)")
            }
        case 1:
            if let level = try? BatteryLevel.decode(value), !(0...100).contains(level) {
                throw FuzzViolation("Battery Level \(value) decoded to \(level)%, outside 0…100")
            }
        default:
            if let text = DeviceInformation.string(value), text.unicodeScalars.contains(where: { $0.value == 0 }) {
                throw FuzzViolation("a Device Information string kept a NUL: \(value)")
            }
        }
    }

    /// An ATT PDU from the L2CAP channel. A decoded PDU encodes to bytes that decode to the same PDU.
    static let attPDU = FuzzTarget(name: "att-pdu", summary: "ATT protocol data units (the GATT client's wire)") { raw throws(FuzzViolation) in
        guard let pdu = try? ATTPDU(decoding: raw) else { return }
        let bytes = pdu.encode()
        guard let again = try? ATTPDU(decoding: bytes), again.encode() == bytes else {
            throw FuzzViolation("the PDU \(pdu) from \(Array(raw)) does not survive encode → decode")
        }
    }

    /// Advertising data and whole HCI LE Advertising Report events, as the scanner receives them.
    static let advertising = FuzzTarget(name: "advertising", summary: "advertising data and HCI LE advertising reports") { raw throws(FuzzViolation) in
        _ = AdvertisingData(parsing: raw)
        _ = try? HCIEventParser.reports(fromPacket: Array(raw))
    }
}

// MARK: Serial pedometers

extension FuzzTarget {
    /// A serial byte stream: framed into lines, each parsed in every format (auto, JSON,
    /// key-value, integer and each built-in vendor profile). A line the framer passes is valid
    /// UTF-8 within its length cap.
    static let pedometerLines = FuzzTarget(name: "pedometer-lines", summary: "serial pedometer byte streams and lines") { raw throws(FuzzViolation) in
        var framer = LineFramer()
        var lines: [String] = []
        for framed in framer.feed(raw) { if case .line(let l) = framed { lines.append(l) } }
        if case .line(let l)? = framer.finish() { lines.append(l) }
        for line in lines {
            guard line.utf8.count <= LineFramer.defaultMaxLineBytes else {
                throw FuzzViolation("the framer passed a line of \(line.utf8.count) bytes, over its cap")
            }
            for format in pedometerFormats { _ = LineParser.parse(line, format: format, receivedAt: pedometerReceivedAt) }
        }
    }

    /// Every format `pedometer-lines` parses each line in: auto, JSON, key-value, integer and each
    /// built-in vendor profile (by name). Built once, not per input.
    static let pedometerFormats: [LineFormat] =
        [.auto, .json, .keyValue, .integer] + VendorProfile.builtIn.keys.sorted().map { .profile(VendorProfile.builtIn[$0]!) }
    /// The receipt time of every line `pedometer-lines` parses.
    static let pedometerReceivedAt = Date(timeIntervalSince1970: 1_700_000_000)

    /// A sequence of readings (counts, device times, sequence numbers, boots, receipt times
    /// taken from the bytes, 13 bytes a reading) through a step counter of 16, 24 or 32 bits or
    /// none. No interval ends before it starts, none counts more steps than the counter's
    /// plausibility cap allows for its span, and nothing traps (counter resets, wraps, clock steps).
    static let stepCounter = FuzzTarget(name: "step-counter", summary: "pedometer reading sequences through the step counter") { raw throws(FuzzViolation) in
        guard let first = raw.first else { return }
        let bits: Int? = [nil, 16, 24, 32][Int(first % 4)]
        guard let configuration = try? CounterConfiguration(deviceID: "fuzz", counterBits: bits, trustDeviceTime: first & 4 != 0) else { return }
        var counter = StepCounter(configuration: configuration)
        var bytes = Array(raw.dropFirst())[...]
        var clock = 1_700_000_000.0
        while bytes.count >= 13 {
            let r = Array(bytes.prefix(13)); bytes = bytes.dropFirst(13)
            let count = UInt64(r[0]) | UInt64(r[1]) << 8 | UInt64(r[2]) << 16 | UInt64(r[3]) << 24
            let deviceTime = r[4] & 1 == 0 ? nil : clock + Double(Int8(bitPattern: r[5])) * 7.5
            let seq = r[6] & 1 == 0 ? nil : UInt64(r[7])
            let boot = r[8] & 1 == 0 ? nil : "b\(r[8] >> 5)"
            let delta = r[9] & 1 == 0 ? nil : UInt64(r[10])
            clock += Double(Int8(bitPattern: r[11])) * 0.5 + Double(r[12]) * 30
            let reading = PedometerReading(steps: delta == nil ? count : nil, deviceTime: deviceTime, seq: seq, boot: boot,
                                           deltaSteps: delta, deltaStart: delta.map { _ in clock - 1 }, deltaEnd: delta.map { _ in clock })
            let out = counter.process(reading, receivedAt: Date(timeIntervalSince1970: clock))
            for s in out.samples where s.end < s.start {
                throw FuzzViolation("a step interval ends before it starts: \(s)")
            }
        }
    }
}

// MARK: Files the user hands over

extension FuzzTarget {
    /// A configuration file (TOML): every error is a ``ConfigError`` with a message, never a trap.
    static let configuration = FuzzTarget(name: "configuration", summary: "the TOML configuration file") { raw throws(FuzzViolation) in
        guard let text = String(validating: raw, as: UTF8.self) else { return }
        _ = try? GatewayConfig.parse(text, file: "fuzz.toml")
    }

    /// One `import --jsonl` line. The fast parser and the Foundation path agree on every line the
    /// fast one accepts (its promise: it never accepts what the other refuses or reads differently).
    static let importLine = FuzzTarget(name: "import-line", summary: "import JSON lines (fast parser against the Foundation path)") { raw throws(FuzzViolation) in
        let bytes = Array(raw)
        // The importer refuses a line that is not UTF-8 before either parser sees it (docs/input-rules.md).
        guard let text = String(validating: bytes, as: UTF8.self) else { return }
        var fast = FastSampleParser()
        let quick = bytes.withUnsafeBufferPointer { fast.sample($0) }
        let slow = try? SampleJSON.sample(fromLine: text.trimmingCharacters(in: .whitespaces))
        guard let quick else { return }
        guard let slow else { throw FuzzViolation("the fast parser accepted a line the Foundation path refuses: \(text)") }
        // A line without a uuid gets a fresh one from each parser; one that names it gives both the same.
        let named = text.lowercased().contains(quick.uuid.uuidString.lowercased())
        guard quick.type == slow.type, quick.quantity == slow.quantity, quick.startDate == slow.startDate,
              quick.endDate == slow.endDate, quick.source == slow.source, quick.device == slow.device,
              quick.metadata == slow.metadata, quick.rrIntervals == slow.rrIntervals, quick.seriesIndex == slow.seriesIndex,
              !named || quick.uuid == slow.uuid else {
            throw FuzzViolation("the two parsers read \(text) differently: \(quick) vs \(slow)")
        }
    }

    /// A change-feed anchor as a client sends it back: one that parses prints as itself.
    static let changeAnchor = FuzzTarget(name: "change-anchor", summary: "change-feed anchors") { raw throws(FuzzViolation) in
        guard let text = String(validating: raw, as: UTF8.self), let anchor = try? ChangeAnchor(string: text) else { return }
        guard let again = try? ChangeAnchor(string: anchor.description), again == anchor else {
            throw FuzzViolation("the anchor \(text) prints as \(anchor.description), which does not parse back to it")
        }
    }

    /// A capture file (`record`'s output, `replay`'s input).
    static let capture = FuzzTarget(name: "capture", summary: "capture files (record / replay)") { raw throws(FuzzViolation) in
        _ = try? CaptureReader(data: Data(raw))
    }
}
