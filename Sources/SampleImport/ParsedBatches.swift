import Dispatch
import Foundation
import HealthModel
import HealthStore
import Synchronization
import Sysexits
import Locking

/// The file's good samples in batches of the import's transaction size, read and parsed on a
/// thread of their own while the caller saves the batch before: reading and parsing a line
/// (bytes to a ``QuantitySample``) and saving it (SQLite, the kernel) take about as long as
/// each other, so on two cores an import takes the longer of the two, not their sum
/// (docs/performance.md, "Import"). At most one batch waits ahead, so memory stays about
/// three batches whatever the file's size.
///
/// What the caller sees is exactly the sequential reading's: a batch carries the bad records
/// met while it was read (said on stderr by the caller when it takes the batch, in order), the
/// count of records read when it was handed over, and a read failure is handed over with the
/// samples read before it, which the caller then does not save. When the caller stops early (a
/// failed save), the thread stops at its next batch and is joined: nothing is read after it.
final class ParsedBatches {
    /// One batch: up to the import's batch size of samples, and what happened while reading them.
    struct Batch: Sendable {
        var samples: [QuantitySample] = []
        /// The batch's workouts, saved with its samples.
        var workouts: [Workout] = []
        /// The record number of the first sample.
        var firstNumber = 0
        /// The records skipped since the previous batch: number, the line it starts on, why.
        var bad: [(number: Int, line: Int, error: String)] = []
        /// Records read when the batch was handed over.
        var read = 0
        /// Records and bytes read (for the progress line).
        var records = 0, bytes = 0
        /// A JSON array broke off: nothing after it was read.
        var stoppedEarly = false
        /// The file ends after this batch.
        var end = false
        /// Reading failed after the samples here (which are not to be saved).
        var failure: CLIFailure?
    }

    private let handoff = BatchHandoff<Batch>()

    /// Starts reading `input` on a thread of its own.
    init(input: ImportInput, path: String, what: String, array: Bool, registry: QuantityTypeRegistry, size: Int) {
        let handoff = self.handoff
        let thread = Thread {
            Self.produce(input: input, path: path, what: what, array: array, registry: registry, size: size, into: handoff)
            handoff.finished.signal()
        }
        thread.name = "import-parse"
        thread.start()
    }

    /// The next batch (blocks until it is read). Not to be called after a batch with `end` set.
    func next() -> Batch { handoff.take() }

    /// Stops the reading thread and waits for it to end (it closes what it read with). Call once.
    func stop() {
        handoff.cancel()
        handoff.finished.wait()
    }

    private static func produce(input: ImportInput, path: String, what: String, array: Bool,
                                registry: QuantityTypeRegistry, size: Int, into handoff: BatchHandoff<Batch>) {
        var stream = SampleStream(input: input, path: path, what: what, array: array, registry: registry)
        defer { stream.close() }
        var progress = ImportReport(array: array)
        var batch = Batch()
        batch.samples.reserveCapacity(min(size, 65_536))
        func handOver(end: Bool, failure: CLIFailure? = nil) -> Bool {
            batch.bad = progress.bad
            progress.bad.removeAll(keepingCapacity: true)
            batch.read = progress.read
            (batch.records, batch.bytes) = stream.position
            batch.stoppedEarly = progress.stoppedEarly
            batch.end = end || failure != nil
            batch.failure = failure
            defer {
                batch = Batch()
                batch.samples.reserveCapacity(min(size, 65_536))
            }
            return handoff.put(batch)
        }
        while true {
            let next: (ImportRecord, Int)?
            do {
                next = try stream.next(&progress)
            } catch {
                let (message, code) = ExitCodeMapping.describe(error)
                _ = handOver(end: true, failure: CLIFailure(message, code: code))
                return
            }
            guard let (record, number) = next else {
                _ = handOver(end: true)
                return
            }
            if batch.samples.isEmpty, batch.workouts.isEmpty { batch.firstNumber = number }
            switch record {
            case .sample(let s): batch.samples.append(s)
            case .workout(let w): batch.workouts.append(w)
            }
            if batch.samples.count + batch.workouts.count >= size, !handOver(end: false) { return }
        }
    }
}
