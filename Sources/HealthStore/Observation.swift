import Foundation
import HealthModel

/// Where a ``ChangeObserver`` starts.
public enum ObservationStart: Sendable, Hashable {
    /// Only changes committed after the observer was created.
    case now
    /// Everything in the store (every matching sample and retained tombstone), then new changes.
    case beginning
    /// Everything after this anchor (resume where a previous observer or `changes` call stopped).
    case anchor(ChangeAnchor)
}

/// Observes a store file for committed changes, whichever process commits them (HealthKit's
/// observer query paired with an anchored query).
///
/// **Mechanism** (docs/change-feed.md): the observer owns a connection of its own and polls
/// SQLite's `PRAGMA data_version` on it — a read of the WAL index in shared memory, no disk
/// I/O — every ``interval``. The value changes when any other connection commits; then the
/// observer runs an anchored query (``HealthStore/changes(types:matching:since:limit:)``) from
/// its anchor and delivers the result in pages. Because the anchor only moves past what was
/// delivered, nothing is missed or delivered twice, across batches, writer restarts and
/// observer restarts (resume with ``anchor``). It needs no daemon, and access follows the
/// database file's permissions: whoever may read the file may observe it.
///
/// ```swift
/// let observer = try ChangeObserver(path: db, types: [.heartRate], start: .now)
/// try observer.run(while: { !stop.isTriggered }) { change in
///     for s in change.samples { print(s) }
/// }
/// ```
///
/// Not thread-safe: use one observer from one thread or task at a time.
public final class ChangeObserver {
    /// The store being observed (this observer's own connection).
    public let store: HealthStore
    /// Only these types (empty: every type).
    public let types: [QuantityType]
    /// Filters additions (see ``HealthStore/changes(types:matching:since:limit:)``).
    public let predicate: SampleQuery?
    /// Everything up to here has been delivered; save it to resume later.
    public private(set) var anchor: ChangeAnchor?
    /// How often `data_version` is checked by ``run(while:_:)``.
    public var interval: Duration = .milliseconds(20)
    /// At most this many items per delivered ``ChangeSet``.
    public var pageSize = 1000

    private var lastVersion: Int64?

    /// Opens its own read-only connection to the store at `path` (it never creates, migrates
    /// or writes the store, so a user who may only read the file can observe it) and fixes
    /// the starting point.
    /// - Throws: ``StoreError`` when there is no current HealthGate store at `path` or it cannot
    ///   be opened, ``ChangeFeedError`` when a given anchor is unusable (expired or from
    ///   another store).
    public init(path: String, registry: QuantityTypeRegistry = .standard, types: [QuantityType] = [],
                predicate: SampleQuery? = nil, start: ObservationStart = .now) throws {
        store = try HealthStore(path: path, registry: registry, mode: .readOnly)
        self.types = types
        self.predicate = predicate
        switch start {
        case .now: anchor = try store.currentAnchor()
        case .beginning: anchor = nil
        case .anchor(let a):
            try store.validate(a)
            anchor = a
        }
    }

    /// Checks once. When another connection has committed since the last check (the first
    /// check always looks), delivers every change since ``anchor`` to `handler`, page by page,
    /// skipping empty pages; the anchor moves past a page only after `handler` returns, so a
    /// handler that throws gets the same page again on the next poll.
    /// - Returns: true when something was delivered.
    @discardableResult
    public func poll(_ handler: (ChangeSet) throws -> Void) throws -> Bool {
        let version = try store.dataVersion()
        if version == lastVersion { return false }
        lastVersion = version
        var delivered = false
        while true {
            let change = try store.changes(types: types, matching: predicate, since: anchor, limit: pageSize)
            if !change.isEmpty {
                try handler(change)
                delivered = true
            }
            anchor = change.anchor
            if !change.hasMore { return delivered }
        }
    }

    /// Forgets the commit last seen, so the next ``poll(_:)`` runs the anchored query even when
    /// nothing was committed since (after a transient error, such as a busy database).
    public func lookAgain() { lastVersion = nil }

    /// Polls every ``interval`` while `shouldContinue()` returns true, delivering changes as
    /// ``poll(_:)`` does. A transiently locked database (a busy ``StoreError``, e.g. during WAL
    /// recovery after a writer crashed — from the feed or from `handler`) is retried on the next
    /// tick; the anchor has not moved, so the same changes come again. Any other error ends the
    /// loop and is rethrown. Returns when `shouldContinue()` is false.
    public func run(while shouldContinue: () -> Bool, _ handler: (ChangeSet) throws -> Void) throws {
        let pause = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        while shouldContinue() {
            let delivered: Bool
            do {
                delivered = try poll(handler)
            } catch let e as StoreError where e.kind == .busy {
                lookAgain()   // look again next tick
                delivered = false
            }
            if !delivered { Thread.sleep(forTimeInterval: pause) }
        }
    }
}
