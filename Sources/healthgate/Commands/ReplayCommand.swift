import ArgumentParser
import Capture
import Foundation
import Gateway
import Logging
import Systemd
import HealthStore
import Ingest

/// `healthgate replay`: a capture file through the full pipeline.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Feed a capture file through the full ingest pipeline into the store.",
        discussion: """
            Reads a capture (docs/capture-format.md: what `healthgate record` writes) and feeds \
            every notification and serial line through the same decoders, rings, writer and store \
            as live data, with the capture's receipt times as sample times. Replaying a file \
            twice stores its heart-rate samples twice (they are new samples with new ids).

            Examples:
              healthgate replay samples/strap-session.capture.jsonl --db /tmp/replay.sqlite
              healthgate replay samples/mixed.capture.jsonl --max
              healthgate replay samples/pedometer-session.capture.jsonl --speed 10
            """)

    @Argument(help: ArgumentHelp("The capture file.", valueName: "file"))
    var file: String

    @Option(help: "Replay at this many times the recorded rate.")
    var speed: Double?

    @Flag(help: "Replay as fast as the pipeline takes it (the default).")
    var max = false

    @OptionGroup var store: StoreLocation

    @Flag(help: "Print the summary as one JSON object.")
    var json = false

    func validate() throws {
        if let speed, !(speed >= 0.001 && speed <= 1_000_000) {
            throw ValidationError("--speed must be 0.001…1000000 times the recorded rate; use --max for as fast as possible")
        }
        if speed != nil && max { throw ValidationError("give --speed X or --max, not both") }
    }

    func run() throws {
        let reader: CaptureReader
        do { reader = try CaptureReader(path: file) } catch {
            var isDirectory: ObjCBool = false
            let missing = !FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) || isDirectory.boolValue
            throw CLIFailure("cannot replay \(file): \(error)", code: missing ? .noInput : .dataError)
        }
        let db = try store.open()
        let r = try ReplaySummary.replay(file: file, reader: reader, into: db, speed: max ? nil : speed, logger: Logger.standardError(level: true ? .error : .notice))
        if json { try JSONOutput.emit(r.jsonObject); return }
        print("replayed \(r.records) records from \(file) in \(String(format: "%.2f", r.seconds)) s")
        print("  \(r.stats.committed) samples committed in \(r.stats.batches) transactions (\(String(format: "%.0f", r.samplesPerSecond)) samples/s), \(r.stats.dropped) dropped")
        print("  skipped: \(r.skippedNotifications) notifications without a heart rate, \(r.rejectedLines) rejected serial lines, \(r.truncatedTail) cut-off last line(s)")
    }
}
