import Foundation

/// A sink that keeps nothing: every batch "commits" at once and is gone. The pipeline behind a
/// front-end that shows samples without storing them (`live --no-store`, `record`, `serial
/// watch --no-store`): the sources, the rings, the writer and the committed-batch observers work
/// exactly as with a store, so the same path runs whether or not anything is kept.
public final class NullSink: SampleSink {
    /// A sink that discards.
    public init() {}

    /// Discards the batch.
    public func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable) throws(SinkError) {}

    /// Discards the batch and its extras (attachments, state).
    public func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable,
                      attachments: BatchAttachments) throws(SinkError) {}
}
