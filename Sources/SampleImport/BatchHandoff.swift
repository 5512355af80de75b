import Dispatch
import Locking

/// A queue of at most one item between a reading thread and the saving one (the import's
/// pipelines: ``ParsedBatches`` for JSON lines and CSV, ``AppleHealthImport``'s export reader):
/// the reader parses the next batch while the caller saves the one before, and memory stays
/// bounded by about three batches whatever the file's size.
final class BatchHandoff<Item: Sendable>: Sendable {
    private let queue = Lock<(items: [Item], cancelled: Bool)>(([], false))
    private let space = DispatchSemaphore(value: 1)
    private let filled = DispatchSemaphore(value: 0)
    /// The reading thread signals this once when it has ended (``stop``-style callers wait on it).
    let finished = DispatchSemaphore(value: 0)

    /// Waits for room, then queues `item`; false when the saver cancelled (stop reading then).
    func put(_ item: Item) -> Bool {
        space.wait()
        let queued = queue.withLock { q -> Bool in
            if q.cancelled { return false }
            q.items.append(item)
            return true
        }
        if queued { filled.signal() }
        return queued
    }

    /// The next item (blocks until the reader has put one).
    func take() -> Item {
        filled.wait()
        let item = queue.withLock { $0.items.removeFirst() }
        space.signal()
        return item
    }

    /// No item is queued after this; a reader waiting for room wakes up (and gets false).
    func cancel() {
        queue.withLock { $0.cancelled = true }
        space.signal()
    }
}
