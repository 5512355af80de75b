import Foundation
import HealthModel
import Ingest
import Synchronization
import Locking

/// What the pipeline committed, tallied from its commit observer (`demo`'s live view): the
/// latest heart rate per device, the steps, the samples and commits, and how long the last
/// committed sample waited. Read with ``snapshot``; written on the writer thread.
package final class CommitTally: Sendable {
    /// The tally at one moment.
    package struct Snapshot: Sendable {
        /// The latest committed heart rate of each device, by the device's name (`?` unnamed),
        /// in device-slot order.
        package var latestBPM: [(device: String, bpm: Double)] = []
        /// The sum of every other committed value (the steps, in `demo`).
        package var steps: Double = 0
        /// Samples committed.
        package var committed = 0
        /// Transactions.
        package var batches = 0
        /// Milliseconds from the last committed sample's end to its commit.
        package var lastLatencyMs: Double = 0
    }

    private struct State {
        var latestBPM: [UInt16: Double] = [:]
        var steps: Double = 0
        var committed = 0
        var batches = 0
        var lastLatencyMs: Double = 0
    }
    private let state = Lock(State())
    private let slots: SlotTable
    private let heartRateSlot: UInt16?

    /// A tally of `pipeline`'s commits, from now on (it adds itself as an observer).
    package init(_ pipeline: IngestPipeline) {
        slots = pipeline.slots
        heartRateSlot = try? slots.slot(for: .heartRate)
        pipeline.addObserver { [self] in committed($0) }
    }

    private func committed(_ batch: CommittedBatch) {
        let now = Date().timeIntervalSince1970
        state.withLock { s in
            for r in batch.records {
                if r.typeSlot == heartRateSlot { s.latestBPM[r.deviceSlot] = r.value } else { s.steps += r.value }
            }
            s.committed += batch.records.count
            s.batches += 1
            if let last = batch.records.last { s.lastLatencyMs = (now - last.end) * 1000 }
        }
    }

    /// The tally now.
    package var snapshot: Snapshot {
        let s = state.withLock { $0 }
        return Snapshot(latestBPM: s.latestBPM.sorted { $0.key < $1.key }.map { (slots.device($0.key)?.name ?? "?", $0.value) },
                        steps: s.steps, committed: s.committed, batches: s.batches, lastLatencyMs: s.lastLatencyMs)
    }
}
