import Foundation
import Gateway
import HealthModel
import HealthStore
import Ingest
import Logging
import SerialPedometer

/// One "daemon process" for pedometer tests: its own store connection, pipeline (short flush
/// window), runner — what `healthgate run` builds, without the signal handling.
final class DaemonRig: @unchecked Sendable {
    let store: HealthStore
    let pipeline: IngestPipeline
    let runner: SourceRunner

    init(path: String) throws {
        store = try HealthStore(path: path)
        pipeline = try IngestPipeline(sink: try StoreSink(store: store),
                                      configuration: IngestConfiguration(flushInterval: .milliseconds(50)))
        runner = SourceRunner(pipeline: pipeline, logger: Logger(label: "test"))
        pipeline.start()
    }

    /// Stops the sources (the session is finished), drains, commits; returns the counters.
    func stop() -> IngestStats {
        runner.stopAll()
        return pipeline.stop()
    }

    /// The stored step samples, oldest first.
    func steps() -> [QuantitySample] {
        ((try? store.samples(SampleQuery(type: .stepCount))) ?? []).sorted { $0.startDate < $1.startDate }
    }

    /// The stored step total.
    func total() -> Double { steps().reduce(0) { $0 + $1.quantity.value } }

    /// The persisted counter state of `deviceID` (read as `serial watch` reads it).
    func counterState(_ deviceID: String) -> CounterState? {
        (try? store.state(PedometerSource.stateKey(deviceID: deviceID))).flatMap { $0 }
            .flatMap { try? JSONDecoder().decode(CounterState.self, from: $0) }
    }
}

/// A fresh store path in a directory of its own.
func temporaryStorePath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("hg-pedo-\(UUID().uuidString)")
        .appendingPathComponent("health.sqlite").path
}

/// A JSON pedometer line.
func pedometerLine(_ steps: Int, seq: Int) -> String { "{\"steps\":\(steps),\"seq\":\(seq)}" }
