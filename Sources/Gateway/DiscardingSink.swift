import Foundation
import Ingest
import Synchronization

/// A sink that stores nothing: the pipeline of a front-end told not to store (`serial watch
/// --no-store`). Batches are "committed" at once, so the committed-batch observers still see
/// what would have been stored; state values are kept in memory only, so a device that is
/// re-plugged while the process runs continues its count without anything reaching a disk.
public final class DiscardingSink: SampleSink {
    private let state = Mutex<[String: Data]>([:])

    /// A sink with no state.
    public init() {}

    public func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable) throws(SinkError) {}

    public func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable,
                      attachments: BatchAttachments) throws(SinkError) {
        state.withLock { $0.merge(attachments.state) { _, new in new } }
    }

    public func persistedState(forKey key: String) throws(SinkError) -> Data? { state.withLock { $0[key] } }
}
