import ArgumentParser
import Foundation
import Gateway
import SerialPedometer

/// `healthgate decode pedometer LINE`: parse one serial pedometer line.
struct DecodePedometerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pedometer",
        abstract: "Parse one serial pedometer line and show what it carries.",
        discussion: """
            Accepted by default: JSON lines ({"steps":1234,"t":1700000001.25,"seq":7,"boot":"b3"}), \
            key:value or key=value pairs separated by ',', tab or space (steps:1234,seq:7), and a bare \
            cumulative count (1234, or 123.00). Vendor text such as "Step: 1234" needs a profile: \
            --format profile:seeed-bma456 (built-ins: \(VendorProfile.builtIn.keys.sorted().joined(separator: ", "))).

            Exits 65 with the reason when the line is not a pedometer line, or when a device time (t, t0, \
            t1) is not a plausible Unix time: before 2000-01-01 or more than a day past this machine's clock \
            (the same rule the reader applies).

            Example:
              healthgate decode pedometer 'steps:42,seq:3' --json
              {"seq":3,"steps":42}
            """)

    @Argument(help: "The line, as the device printed it.")
    var line: String

    @Option(help: ArgumentHelp("Line format: auto, json, kv, int or profile:NAME.", valueName: "format"))
    var format = "auto"

    @Flag(help: "Print a JSON object with steps and whichever of t, seq, boot, dsteps, t0, t1 the line carried.")
    var json = false

    @OptionGroup var serialConfig: SerialConfigOption

    func run() throws {
        let profiles = try serialConfig.load().allProfiles
        let fmt = try LineFormat(parsing: format, profiles: profiles)
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: "\0")))
        guard trimmed.utf8.count <= LineFramer.defaultMaxLineBytes else {
            throw CLIFailure("not a pedometer line: \(LineRejection.tooLong(bytes: trimmed.utf8.count))", code: .dataError)
        }
        switch LineParser.parse(trimmed, format: fmt, receivedAt: Date()) {
        case .failure(let why):
            throw CLIFailure("not a pedometer line: \(why)", code: .dataError)
        case .success(let r):
            if json {
                try JSONOutput.emit(r.jsonObject)
            } else {
                var parts: [String] = []
                if let s = r.steps { parts.append("steps \(s) (cumulative)") }
                if let d = r.deltaSteps { parts.append("dsteps \(d) (delta)") }
                if let t = r.deviceTime { parts.append("t \(t)") }
                if let s = r.seq { parts.append("seq \(s)") }
                if let b = r.boot { parts.append("boot \(b)") }
                if let t0 = r.deltaStart { parts.append("t0 \(t0)") }
                if let t1 = r.deltaEnd { parts.append("t1 \(t1)") }
                print(parts.joined(separator: ", "))
            }
        }
    }
}
