import ArgumentParser
import Foundation
import HealthModel
import HeartRateProfile

/// `healthgate decode`: decode one raw item (a serial pedometer line, a BLE payload) offline.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode one raw payload or line the way the gateway would, without a device.",
        subcommands: [
            // Bluetooth LE (blecore)
            DecodeHeartRateCommand.self,
            // Serial pedometers (serial)
            DecodePedometerCommand.self,
        ])
}

/// `healthgate decode heart-rate HEX`: decode one Heart Rate Measurement (0x2A37) payload.
struct DecodeHeartRateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "heart-rate",
        abstract: "Decode one BLE Heart Rate Measurement (0x2A37) payload given as hex.",
        discussion: """
            Decodes exactly as `healthgate live` does: flags, a uint8 or uint16 bpm, sensor contact \
            (notSupported, notDetected, detected), energy expended in kJ when present, and RR \
            intervals in raw 1/1024 s ticks, oldest first.

            A payload with no valid heart-rate value (empty, flags only, a cut-short uint16 value) \
            is rejected: exit 65 with the reason on stderr. A payload whose energy field is missing \
            or whose RR list ends in a lone byte keeps what decoded and is marked truncated; \
            nothing is invented.

            Examples:
              healthgate decode heart-rate 164e1b031203
              healthgate decode heart-rate '1c 48 2c01 f401 0002' --json
              {"bpm":72,"energyExpendedKJ":300,"rr":[500,512],"sensorContact":"notDetected","truncated":false}
            """)

    @Argument(help: ArgumentHelp("The payload as hex (spaces, colons and a 0x prefix are allowed).", valueName: "hex"))
    var hex: String

    @Flag(help: "Print one JSON object: bpm, sensorContact, energyExpendedKJ (number or null), rr (ticks), truncated.")
    var json = false

    func run() throws {
        guard let payload = Hex.bytes(typed: hex) else {
            throw CLIFailure("'\(hex)' is not hex bytes: give an even number of ASCII hex digits (0-9, a-f), e.g. 164d1603", code: .dataError)
        }
        let m: HeartRateMeasurement
        do { m = try HeartRateMeasurement.decode(bytes: payload) } catch {
            throw CLIFailure("rejected heart-rate payload: \(error)", code: .dataError)
        }
        if json {
            try JSONOutput.emit(m.jsonObject)
        } else {
            print(Self.describe(m))
        }
    }

    /// One human line per field.
    static func describe(_ m: HeartRateMeasurement) -> String {
        var lines = ["bpm:        \(m.beatsPerMinute) (\(m.isUInt16 ? "uint16" : "uint8")\(m.beatsPerMinute == 0 ? ", 0 = no valid reading" : ""))",
                     "contact:    \(m.sensorContact.name)"]
        lines.append("energy:     " + (m.energyExpendedKJ.map { "\($0) kJ since the last reset" + ($0 == 0xFFFF ? " (saturated: reset it)" : "") } ?? "not sent"))
        if m.rrIntervals.isEmpty {
            lines.append("rr:         none")
        } else {
            let ms = m.rrIntervals.map { String(format: "%.1f", Double($0) * 1000 / 1024) }
            lines.append("rr:         \(m.rrIntervals.array) ticks of 1/1024 s = [\(ms.joined(separator: ", "))] ms")
        }
        if let why = m.malformation { lines.append("truncated:  yes, \(why); the fields above are the valid prefix") }
        if m.ignoredTrailingBytes > 0 { lines.append("note:       \(m.ignoredTrailingBytes) byte(s) after the last announced field were ignored") }
        return lines.joined(separator: "\n")
    }
}
