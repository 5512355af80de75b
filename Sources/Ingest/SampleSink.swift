import Foundation

/// Where the ingest writer commits batches: the health store, or a test double.
///
/// The pipeline's writer thread is the only caller, one batch at a time, so an implementation
/// may own a connection and prepared statements without locking; it is `Sendable` only so the
/// pipeline can hand it to that thread.
package protocol SampleSink: AnyObject, Sendable {
    /// Writes every record of `records` in ONE transaction, or none of them.
    ///
    /// - Parameters:
    ///   - records: the batch, in push order per source. Valid only during the call.
    ///   - slots: resolves the records' type, source and device slots.
    /// - Throws: ``SinkError``; the writer keeps the batch and retries it later, so a failed
    ///   write must leave nothing of the batch behind (roll back).
    func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable) throws(SinkError)

    /// Makes every batch written so far durable (survives a power cut), when ``write(_:slots:)``
    /// does not already do that per batch. The writer calls it at most once per
    /// ``IngestConfiguration/syncInterval`` — when it has caught up (no sample waiting) after a
    /// commit, or after a commit once the longer of the flush and sync intervals has passed while
    /// it is behind — and before it stops. A failure is reported once (``IngestPipeline/onSyncFailure(_:)``) and not
    /// retried — after a failed fsync the kernel may already have dropped the unwritten pages —
    /// so the sink must make later commits safe on its own (``StoreSink`` switches to one fsync
    /// per commit).
    func sync() throws(SinkError)

    /// Writes `records` with their extras in ONE transaction, or nothing: each record flagged
    /// ``SampleRecord/Flags/attached`` with its ``SampleAttachment`` metadata (sync identifiers
    /// upserted as `HealthStore.save` does), and `attachments.state` (newest value per key).
    /// `records` may be empty (a state-only commit). The default ignores the extras and calls
    /// ``write(_:slots:)`` (test doubles); the store sink writes them.
    func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable,
               attachments: BatchAttachments) throws(SinkError)

    /// The committed value of a state key (to resume a pedometer counter), or nil. Called from
    /// source threads, not the writer's. The default has no state and returns nil.
    func persistedState(forKey key: String) throws(SinkError) -> Data?

    /// The writer stops cleanly: every batch was written and nothing more will come. Called once,
    /// by the writer thread, after the last batch and before the last ``sync()``; not called when
    /// the writer gave up on a failing store (batches abandoned at the stop deadline). The store
    /// sink marks its open quantity series closed (docs/store.md, "Quantity series"). A failure
    /// loses nothing written (``IngestPipeline/onFinishFailure(_:)`` reports it). Returns whether
    /// it committed anything (the writer's last sync then covers it). The default does nothing.
    func finish() throws(SinkError) -> Bool
}

extension SampleSink {
    /// Nothing to do: each ``write(_:slots:)`` is durable on its own.
    package func sync() throws(SinkError) {}

    /// Ignores the extras: writes the records only.
    package func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable,
                      attachments: BatchAttachments) throws(SinkError) {
        guard !records.isEmpty else { return }
        try write(records, slots: slots)
    }

    /// No persisted state.
    package func persistedState(forKey key: String) throws(SinkError) -> Data? { nil }

    /// Nothing to close.
    package func finish() throws(SinkError) -> Bool { false }
}

/// Why a batch could not be committed. The writer keeps the batch and retries every kind.
package struct SinkError: Error, Equatable, CustomStringConvertible {
    /// The broad cause, which decides how the gateway reports it.
    package enum Kind: String, Sendable, Equatable {
        /// The disk (or the database's size limit) is full: SQLITE_FULL.
        case diskFull = "disk full"
        /// Another connection holds a lock: SQLITE_BUSY / SQLITE_LOCKED.
        case busy
        /// Reading or writing the file failed: SQLITE_IOERR and friends.
        case io = "I/O error"
        /// A sample was refused (bad value for its type): a bug in a source.
        case rejected
        /// Anything else.
        case other
    }

    /// The broad cause.
    package var kind: Kind
    /// What the store said, for logs.
    package var message: String

    /// Creates an error of `kind` with the store's `message`.
    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    package var description: String { "\(kind.rawValue): \(message)" }
}
