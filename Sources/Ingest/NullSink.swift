import Foundation
import Synchronization
import Locking

/// The one sink that keeps nothing on disk: every batch "commits" at once and is gone. The
/// pipeline behind a front-end that shows samples without storing them (`live --no-store`,
/// `record`, `serial watch --no-store`): the sources, the rings, the writer and the
/// committed-batch observers work exactly as with a store, so the same path runs whether or not
/// anything is kept.
///
/// State values (a pedometer's counter state) are kept in memory only, newest per key, and
/// ``persistedState(forKey:)`` returns them: a device re-plugged while the process runs
/// continues its count, and nothing reaches a disk.
package final class NullSink: SampleSink {
    private let state = Lock<[String: Data]>([:])

    /// A sink that discards, with no state.
    package init() {}

    /// Discards the batch.
    package func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable) throws(SinkError) {}

    /// Discards the batch and its attachments; keeps its state values in memory.
    package func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable,
                      attachments: BatchAttachments) throws(SinkError) {
        guard !attachments.state.isEmpty else { return }
        state.withLock { $0.merge(attachments.state) { _, new in new } }
    }

    /// The newest state value written under `key` in this process, or nil.
    package func persistedState(forKey key: String) throws(SinkError) -> Data? { state.withLock { $0[key] } }
}
