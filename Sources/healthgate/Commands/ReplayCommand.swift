import ArgumentParser
import Capture
import Foundation
import Gateway
import HealthStore
import Ingest
import Synchronization

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
        try reporting {
            let reader: CaptureReader
            do { reader = try CaptureReader(path: file) } catch {
                let missing = !FileManager.default.fileExists(atPath: file)
                throw CLIFailure("cannot replay \(file): \(error)", code: missing ? .noInput : .dataError)
            }
            let db = try openHealthStore(store)
            let runtime = try GatewayRuntime(store: db, configuration: IngestConfiguration(), logger: demoLogger(quiet: true))
            let source = ReplaySource(file: file, records: reader.records, speed: max ? nil : speed)
            let start = Date()
            let final = try runtime.run(sources: [source], endWhenSourcesEnd: true, statusInterval: .seconds(3600))
            let elapsed = Date().timeIntervalSince(start)
            let s = source.stats
            let summary: [String: Any] = [
                "records": s.records.load(ordering: .relaxed), "pushed": final.pushed, "committed": final.committed,
                "dropped": final.dropped, "skippedNotifications": s.skippedBLE.load(ordering: .relaxed),
                "rejectedLines": s.rejectedLines.load(ordering: .relaxed), "truncatedTail": reader.truncatedTail,
                "seconds": elapsed, "samplesPerSecond": Double(final.committed) / Swift.max(elapsed, 1e-9),
            ]
            if json { JSONOutput.emit(summary); return }
            print("replayed \(s.records.load(ordering: .relaxed)) records from \(file) in \(String(format: "%.2f", elapsed)) s")
            print("  \(final.committed) samples committed in \(final.batches) transactions (\(String(format: "%.0f", Double(final.committed) / Swift.max(elapsed, 1e-9))) samples/s), \(final.dropped) dropped")
            print("  skipped: \(s.skippedBLE.load(ordering: .relaxed)) notifications without a heart rate, \(s.rejectedLines.load(ordering: .relaxed)) rejected serial lines, \(reader.truncatedTail) cut-off last line(s)")
        }
    }
}
