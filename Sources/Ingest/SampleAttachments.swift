import Foundation
import HealthModel
import Synchronization
import Locking

/// The rare extras a ``SampleRecord`` cannot carry inline: the sample's metadata (a sync
/// identifier and version, free keys such as `HGTimingUncertain`) and per-device state to
/// persist in the same transaction as the sample (a pedometer's counter).
///
/// Attachments travel beside the ring, not in it (``SampleAttachments``): the ring stays a ring
/// of 64-byte trivially copyable records and the strap path never touches them.
package struct SampleAttachment: Sendable, Equatable {
    /// Metadata stored with the sample. A sync identifier makes the store apply the same
    /// upsert rule as `HealthStore.save`: a re-saved identical identifier does not duplicate.
    package var metadata: Metadata
    /// The state stream the sample belongs to (for example `serial.counter.<device id>`): the
    /// writer never commits a newer value of this key while this sample is still uncommitted.
    package var stateKey: String?
    /// The key's value after this sample, written in the sample's transaction; nil leaves the
    /// key's value as it was (a later sample or ``SampleRing/setState(_:forKey:)`` carries it).
    package var state: Data?
    /// Every RR interval of a heart-rate sample (1/1024 s ticks, oldest first) when there are
    /// more than fit inline (``SampleRecord/maxRR``, possible only with a raised ATT MTU): they
    /// replace the record's inline ones, so nothing a strap sent is cut.
    package var rrIntervals: [UInt16]?

    /// An attachment with `metadata`, optionally the state after the sample, and optionally the
    /// sample's full RR list.
    package init(metadata: Metadata = Metadata(), stateKey: String? = nil, state: Data? = nil, rrIntervals: [UInt16]? = nil) {
        self.metadata = metadata
        self.stateKey = stateKey
        self.state = state
        self.rrIntervals = rrIntervals
    }
}

/// The extras of one batch, handed to ``SampleSink/write(_:slots:attachments:)``.
package struct BatchAttachments: Sendable, Equatable {
    /// Attachments by index into the batch (only records flagged ``SampleRecord/Flags/attached``).
    package var samples: [Int: SampleAttachment]
    /// State to write in the batch's transaction: the newest value per key.
    package var state: [String: Data]

    /// Extras for a batch.
    package init(samples: [Int: SampleAttachment] = [:], state: [String: Data] = [:]) {
        self.samples = samples
        self.state = state
    }

    /// No extras: a plain batch.
    package static let none = BatchAttachments()

    /// True when there is nothing beyond the records.
    package var isEmpty: Bool { samples.isEmpty && state.isEmpty }
}

/// The side channel of an ``IngestPipeline``: attachments of records still on their way to the
/// store, and state updates waiting to be committed, shared by all the pipeline's rings.
///
/// A producer registers an attachment when it pushes a record (``SampleRing/push(_:attachment:)``):
/// the record gets the ``SampleRecord/Flags/attached`` flag and the attachment's sequence number
/// in ``SampleRecord/tag``. The writer looks the attachments of a batch up just before the
/// commit and forgets them only after it (a failed commit is retried with the same extras). A
/// record the ring drops takes its attachment with it. All of this takes one mutex — fine for the
/// rare sources that need it (a pedometer: a few samples a minute), and never on the strap path:
/// the writer skips the side channel entirely while it is empty (one atomic load per batch).
///
/// Thread-safe.
package final class SampleAttachments: Sendable {
    private struct Loose {
        var seq: UInt64
        var value: Data
    }
    private struct Inner {
        var nextSeq: UInt64 = 1
        var outstanding: [UInt64: SampleAttachment] = [:]
        var loose: [String: Loose] = [:]
    }
    private let inner = Lock(Inner())
    /// Outstanding attachments plus loose state values: zero means the writer can skip the channel.
    private let entries = Atomic<Int>(0)
    private let looseEntries = Atomic<Int>(0)
    private let persisted: (@Sendable (String) throws(SinkError) -> Data?)?

    /// A side channel; `persisted` reads a key's committed value (the pipeline's sink).
    package init(persisted: (@Sendable (String) throws(SinkError) -> Data?)? = nil) {
        self.persisted = persisted
    }

    /// Records with attachments not yet committed or dropped (tests check nothing leaks).
    package var outstandingCount: Int { inner.withLock { $0.outstanding.count } }
    /// State values waiting for a commit.
    package var pendingStateCount: Int { looseEntries.load(ordering: .acquiring) }
    /// True when nothing waits in the side channel.
    package var isEmpty: Bool { entries.load(ordering: .acquiring) == 0 }

    // MARK: Producer side (through the ring)

    func register(_ attachment: SampleAttachment) -> UInt64 {
        let seq = inner.withLock { i -> UInt64 in
            let s = i.nextSeq
            i.nextSeq += 1
            i.outstanding[s] = attachment
            return s
        }
        entries.add(1, ordering: .releasing)
        return seq
    }

    func discard(_ seq: UInt64) {
        let removed = inner.withLock { $0.outstanding.removeValue(forKey: seq) != nil }
        if removed { entries.subtract(1, ordering: .releasing) }
    }

    func setState(_ value: Data, forKey key: String) {
        let added = inner.withLock { i -> Bool in
            let s = i.nextSeq
            i.nextSeq += 1
            let new = i.loose[key] == nil
            i.loose[key] = Loose(seq: s, value: value)
            return new
        }
        if added {
            entries.add(1, ordering: .releasing)
            looseEntries.add(1, ordering: .releasing)
        }
    }

    /// The newest value of `key` not yet committed, else the committed one (nil when none).
    func resumeState(forKey key: String) throws(SinkError) -> Data? {
        let pending = inner.withLock { i -> Data? in
            var best: (UInt64, Data)?
            if let l = i.loose[key] { best = (l.seq, l.value) }
            for (s, a) in i.outstanding where a.stateKey == key {
                if let v = a.state, s > (best?.0 ?? 0) { best = (s, v) }
            }
            return best?.1
        }
        if let pending { return pending }
        return try persisted?(key)
    }

    // MARK: Writer side

    /// What a commit took from the channel, to forget once it is committed.
    struct Taken {
        var batch = BatchAttachments()
        var seqs: [UInt64] = []
        var loose: [(key: String, seq: UInt64)] = []
    }

    /// The extras of `records` (the writer's batch), plus every state value whose earlier
    /// samples are all committed or in this batch.
    func collect(_ records: UnsafeBufferPointer<SampleRecord>) -> Taken {
        var taken = Taken()
        var indexed: [(Int, UInt64)] = []
        for i in records.indices where records[i].flags.contains(.attached) { indexed.append((i, records[i].tag)) }
        inner.withLock { i in
            var newest: [String: (seq: UInt64, value: Data)] = [:]
            for (index, seq) in indexed {
                guard let a = i.outstanding[seq] else { continue }
                taken.batch.samples[index] = a
                taken.seqs.append(seq)
                if let k = a.stateKey, let v = a.state, seq > (newest[k]?.seq ?? 0) { newest[k] = (seq, v) }
            }
            if !i.loose.isEmpty {
                let inBatch = Set(taken.seqs)
                for (key, l) in i.loose {
                    // Not before every earlier sample of the same stream is committed (or with it).
                    let blocked = i.outstanding.contains { s, a in a.stateKey == key && s < l.seq && !inBatch.contains(s) }
                    guard !blocked else { continue }
                    taken.loose.append((key, l.seq))
                    if l.seq > (newest[key]?.seq ?? 0) { newest[key] = (l.seq, l.value) }
                }
            }
            for (k, v) in newest { taken.batch.state[k] = v.value }
        }
        return taken
    }

    /// Forgets what a commit wrote (or, with `statesToo` false, only the samples of a batch the
    /// store rejected).
    func resolve(_ taken: Taken, statesToo: Bool = true) {
        var removed = 0, looseRemoved = 0
        inner.withLock { i in
            for s in taken.seqs where i.outstanding.removeValue(forKey: s) != nil { removed += 1 }
            guard statesToo else { return }
            for (k, s) in taken.loose where i.loose[k]?.seq == s {
                i.loose[k] = nil
                looseRemoved += 1
            }
        }
        if removed + looseRemoved > 0 { entries.subtract(removed + looseRemoved, ordering: .releasing) }
        if looseRemoved > 0 { looseEntries.subtract(looseRemoved, ordering: .releasing) }
    }
}
