import Foundation
import Synchronization
import Locking

/// What a ring does when it is full (the writer is behind: a stalled SD card, a full disk).
package enum OverflowPolicy: Sendable, Equatable, CustomStringConvertible {
    /// Keep samples in an in-memory overflow list (up to `limit` samples per ring) that the
    /// writer drains, in order, once it catches up; past the limit, drop the newest and count it.
    case spill(limit: Int)
    /// Drop the newest sample and count it. Nothing is held beyond the ring.
    case dropNewest

    package var description: String {
        switch self {
        case .spill(let limit): return "spill(limit: \(limit))"
        case .dropNewest: return "drop-newest"
        }
    }
}

/// What happened to one pushed sample.
package enum PushOutcome: Sendable, Equatable {
    /// In the ring; the writer will commit it.
    case queued
    /// The ring was full; the sample waits in the overflow list and will be committed in order.
    case spilled
    /// The ring and (if any) the overflow list were full: the sample was dropped and counted.
    case dropped
}

/// A bounded single-producer / single-consumer ring of ``SampleRecord``s with an overflow path.
///
/// **Thread rules.** Exactly one thread at a time pushes (the source that owns the ring) and
/// exactly one thread drains (the pipeline's writer). The fast path of ``push(_:)`` is a copy
/// into preallocated storage and one release store: no lock, no allocation, no system call, and
/// it never waits for the writer. Only when the ring is full does the producer take the
/// overflow path (a lock and, under ``OverflowPolicy/spill(limit:)``, an array append), which
/// happens when the store is already behind.
///
/// **Ordering.** Once a sample has spilled, later pushes also spill until the writer has taken
/// the overflow list, and the writer drains the ring before the list, so samples reach the
/// store in push order.
///
/// **Accounting.** Every push is counted once in ``pushedCount`` and ends as exactly one of:
/// drained by the writer (``drainedCount``), or dropped (``droppedCount``); the rest is
/// ``pendingCount``.
package final class SampleRing: @unchecked Sendable {
    /// The ring's capacity (a power of two).
    package let capacity: Int
    /// The overflow policy chosen when the ring was made.
    package let policy: OverflowPolicy
    /// A name for reports (the source's name).
    package let name: String
    /// The side channel for records' extras (shared by all rings of a pipeline).
    package let attachments: SampleAttachments

    private let mask: Int
    private let storage: UnsafeMutablePointer<SampleRecord>
    /// Next index the producer writes (monotonic). Written by the producer only.
    private let head = Atomic<Int>(0)
    /// Next index the consumer reads (monotonic). Written by the consumer only.
    private let tail = Atomic<Int>(0)
    /// Producer-local copy of `tail`, refreshed only when the ring looks full.
    private var cachedTail = 0
    /// Samples in the overflow list (producer adds, writer resets); read without the lock.
    private let spillCount = Atomic<Int>(0)
    private let spill = Lock<[SampleRecord]>([])

    private let pushed = Atomic<UInt64>(0)
    private let dropped = Atomic<UInt64>(0)
    private let spilled = Atomic<UInt64>(0)
    private let drained = Atomic<UInt64>(0)
    private let closed = Atomic<Bool>(false)

    /// Makes a ring holding `capacity` records (rounded up to a power of two, at least 2).
    /// `attachments` is the side channel ``push(_:attachment:)`` uses (a private one by default).
    package init(capacity: Int, policy: OverflowPolicy = .spill(limit: 100_000), name: String = "",
                attachments: SampleAttachments = SampleAttachments()) {
        self.attachments = attachments
        var c = 2
        while c < capacity { c <<= 1 }
        self.capacity = c
        self.mask = c - 1
        self.policy = policy
        self.name = name
        self.storage = .allocate(capacity: c)
    }

    deinit { storage.deallocate() }

    // MARK: Producer side

    /// Pushes one record. Never blocks on the writer; see ``PushOutcome`` for what happened.
    @inline(__always)
    @discardableResult
    package func push(_ record: SampleRecord) -> PushOutcome {
        // Counters the producer alone writes: a relaxed load + store, not a locked add.
        pushed.store(pushed.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        if spillCount.load(ordering: .relaxed) == 0 {
            let h = head.load(ordering: .relaxed)
            if h &- cachedTail < capacity || refreshTail(h) {
                storage[h & mask] = record
                head.store(h &+ 1, ordering: .releasing)
                return .queued
            }
        }
        return overflow(record)
    }

    @inline(__always)
    private func refreshTail(_ h: Int) -> Bool {
        cachedTail = tail.load(ordering: .acquiring)
        return h &- cachedTail < capacity
    }

    @inline(never)
    private func overflow(_ record: SampleRecord) -> PushOutcome {
        switch policy {
        case .dropNewest:
            dropped.store(dropped.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
            return .dropped
        case .spill(let limit):
            let outcome = spill.withLock { list -> PushOutcome in
                // Re-check under the lock: the writer may have emptied the list and the ring.
                if list.isEmpty {
                    let h = head.load(ordering: .relaxed)
                    if refreshTail(h) {
                        storage[h & mask] = record
                        head.store(h &+ 1, ordering: .releasing)
                        return .queued
                    }
                }
                guard list.count < limit else { return .dropped }
                list.append(record)
                spillCount.store(list.count, ordering: .releasing)
                return .spilled
            }
            switch outcome {
            case .dropped: dropped.store(dropped.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
            case .spilled: spilled.store(spilled.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
            case .queued: break
            }
            return outcome
        }
    }

    /// Pushes a record with extras the record cannot carry (a sync identifier, state to persist
    /// with it). Not the hot path: it takes the side channel's mutex and allocates. The record
    /// gets the ``SampleRecord/Flags/attached`` flag and its ``SampleRecord/tag`` names the
    /// attachment; if the ring drops the record, the attachment is discarded with it.
    @discardableResult
    package func push(_ record: SampleRecord, attachment: SampleAttachment) -> PushOutcome {
        var r = record
        let seq = attachments.register(attachment)
        r.flags.insert(.attached)
        r.tag = seq
        let outcome = push(r)
        if outcome == .dropped { attachments.discard(seq) }
        return outcome
    }

    /// Sets state to persist (key → value) once every record this producer pushed so far that
    /// belongs to the same key (``SampleAttachment/stateKey``) is committed: with the batch
    /// that commits the last of them, or within one flush interval when none is in flight. A
    /// newer value for the key replaces one not yet committed. Not the hot path.
    package func setState(_ value: Data, forKey key: String) {
        attachments.setState(value, forKey: key)
    }

    /// The value to resume `key` from: the newest one still on its way to the store (pushed by
    /// any ring of the pipeline, e.g. before a re-plug), else the committed one.
    /// - Throws: ``SinkError`` when the store cannot be read.
    package func resumeState(forKey key: String) throws(SinkError) -> Data? {
        try attachments.resumeState(forKey: key)
    }

    /// Tells the writer this producer is finished: once drained, the ring is retired.
    package func close() { closed.store(true, ordering: .releasing) }

    // MARK: Consumer side (the writer)

    /// Copies up to `into.count` records out of the ring (not the overflow list), oldest first;
    /// returns how many. Consumer thread only.
    package func drain(into buffer: UnsafeMutableBufferPointer<SampleRecord>) -> Int {
        let t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        let n = min(h &- t, buffer.count)
        guard n > 0 else { return 0 }
        let start = t & mask
        let first = min(n, capacity - start)
        buffer.baseAddress!.update(from: storage + start, count: first)
        if first < n { (buffer.baseAddress! + first).update(from: storage, count: n - first) }
        tail.store(t &+ n, ordering: .releasing)
        drained.store(drained.load(ordering: .relaxed) &+ UInt64(n), ordering: .relaxed)
        return n
    }

    /// True when the ring itself holds nothing (the overflow list may still).
    package var ringIsEmpty: Bool { head.load(ordering: .acquiring) == tail.load(ordering: .relaxed) }

    /// Takes the whole overflow list, oldest first — but only when the ring itself is empty, so
    /// order is kept: returns `[]` while the ring still holds (older) records. Consumer thread
    /// only; counts the records as drained.
    ///
    /// The emptiness check happens under the overflow lock: while the list is non-empty the
    /// producer never writes the ring (it sees its own non-zero ``spillCount`` and takes the
    /// lock), so a ring found empty here cannot receive records older than the list's.
    package func takeSpill() -> [SampleRecord] {
        guard spillCount.load(ordering: .acquiring) > 0 else { return [] }
        let list = spill.withLock { list -> [SampleRecord] in
            guard !list.isEmpty, ringIsEmpty else { return [] }
            let taken = list
            list = []
            spillCount.store(0, ordering: .releasing)
            return taken
        }
        drained.store(drained.load(ordering: .relaxed) &+ UInt64(list.count), ordering: .relaxed)
        return list
    }

    /// True once the producer closed the ring and everything in it has been drained.
    package var isFinished: Bool {
        closed.load(ordering: .acquiring) && ringIsEmpty && spillCount.load(ordering: .acquiring) == 0
    }

    /// True once the producer called ``close()``.
    package var isClosed: Bool { closed.load(ordering: .acquiring) }

    // MARK: Counters (any thread)

    /// Samples pushed so far.
    package var pushedCount: UInt64 { pushed.load(ordering: .relaxed) }
    /// Samples dropped by the overflow policy so far.
    package var droppedCount: UInt64 { dropped.load(ordering: .relaxed) }
    /// Samples that went through the overflow list so far.
    package var spilledCount: UInt64 { spilled.load(ordering: .relaxed) }
    /// Samples the writer has taken out (ring and overflow list) so far.
    package var drainedCount: UInt64 { drained.load(ordering: .relaxed) }
    /// Samples waiting (in the ring or the overflow list).
    package var pendingCount: Int {
        head.load(ordering: .acquiring) &- tail.load(ordering: .acquiring) + spillCount.load(ordering: .acquiring)
    }
}
