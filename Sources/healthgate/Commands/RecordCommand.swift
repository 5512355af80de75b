import ArgumentParser
import BluetoothLinux
import Capture
import Foundation
import Gateway
import Logging
import Systemd

/// `healthgate record`: raw notifications to a capture file.
struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a strap's raw heart-rate notifications, with receipt times, to a capture file.",
        discussion: """
            Writes HealthGate's capture format (JSON lines, see docs/capture-format.md): a header \\
            line, then one line per Heart Rate Measurement notification with its receipt time \\
            (t, Unix seconds), the device record, the address, the characteristic (2A37) and the \\
            payload as hex. Each line is written as it arrives. Nothing is stored in the health \\
            store; a capture can be replayed later. It runs the same strap path as `live` and \\
            `run` (the pipeline ends in a sink that keeps nothing) and reconnects like them; \\
            Ctrl-C, SIGTERM, --duration or --count end it.

            Example:
              healthgate record chest --out hr.capture.jsonl --duration 60
              healthgate record C4:7C:8D:6A:1F:02 --out /tmp/h7.jsonl --count 100 --overwrite
            """)

    @Argument(help: ArgumentHelp("The strap: its address, or the name it was paired under.", valueName: "address|name"))
    var strap: String

    @Option(help: ArgumentHelp("The capture file to write.", valueName: "file"))
    var out: String

    @Flag(help: "Replace the file if it exists.")
    var overwrite = false

    @OptionGroup var limits: SessionLimits
    @OptionGroup var connect: ConnectOptions
    @OptionGroup var store: StoreLocation

    func run() throws {
        let adapter = try connect.adapterOption.resolve()
        // Read-only: it only looks the name up (a missing store stays missing).
        let target = try StrapTarget.resolve(strap, storeAt: store.path, addressType: connect.addressType)
        let writer = try CaptureFileWriter(path: out, overwrite: overwrite)
        Output.note("Recording \(target) to \(out); Ctrl-C to stop.")
        let started = Date()
        let recording = try StrapRecording(straps: [.kernel(target, adapter: adapter, timeout: connect.attemptTimeout)],
                                           writer: writer, maxNotifications: limits.count, logger: Logger.standardError(level: .error)) { event in
            // Progress as `live` says it; the readings go to the file, not the terminal.
            if case .note(let s) = event.text(straps: [target]) { Output.note(s) }
        }
        let n = try recording.run(duration: limits.duration.map { .milliseconds(Int($0 * 1000)) })
        Output.note("Recorded \(n) notifications in \(TerminalText.seconds(Date().timeIntervalSince(started).rounded())) to \(out).")
    }
}
