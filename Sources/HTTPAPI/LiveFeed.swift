import Foundation
import HealthModel
import HealthStore
import Logging
import Synchronization
import Locking

/// The event stream behind `GET /v1/live` (docs/http-api.md, "Live stream"): one follower of
/// the store's change feed per server, fanned out to every connected client.
///
/// **Where events come from.** One thread follows the change feed on a read-only connection
/// of its own: it checks `PRAGMA data_version` every ``pollInterval`` (any process's commit:
/// `serve` beside `run`, `import`, the server's own POSTs) and is woken at once by
/// ``wake()`` — `run` calls it from the pipeline's commit tap, so a committed batch is sent
/// without waiting for the next check. Samples come from the anchored query, not from the tap's
/// records, because only the query says where in the store's history an event lies: that
/// position is what a reconnecting client resumes from. Device events (connected, battery, …)
/// come from ``publish(device:)`` and are live only.
///
/// **Event ids and resume.** Every event has the id `<anchor>;<run>.<n>`: `anchor` is the
/// change-feed anchor just before the event's change set, `run` this server's random run id,
/// `n` the event's number in this run. After each change set an id-only block (no data, no
/// event dispatched in a browser) moves the client's last id to the anchor after the set.
/// A client reconnecting with `Last-Event-ID` is resumed from the ``retained`` most recent
/// events when its id is among them — exactly the events after it, none twice. An older id
/// (or one from a previous run) resumes from its anchor through the change feed: nothing is
/// missed, but samples of the set it was in and the open five-minute chunk of a series can
/// come again, identical (a client keys samples by `uuid`, series quantities by `uuid` and
/// `series.index`).
///
/// **Series.** A strap's heart rate is stored as a series whose open chunk the feed reports
/// whole at every growth; the follower remembers the indices it sent per series and sends each
/// quantity once.
///
/// **Slow clients.** Each client has a buffer of ``clientBuffer`` events. The follower never
/// waits for a client: when a client's buffer is full, its stream is ended (it gets what is
/// buffered, then the connection closes; ``overflows`` counts it) and it resumes with
/// `Last-Event-ID` when it reconnects. Ingest and other clients never wait.
package final class LiveFeed: Sendable {
    /// One event: its SSE text (`id`, `event`, `data` lines and the blank line) and the type
    /// it is about, for per-token filtering (nil: about no type's data, sent to every client).
    struct Item: Sendable {
        let number: UInt64
        let anchorBefore: ChangeAnchor?
        let typeIdentifier: String?
        /// Keys for de-duplication after a change-feed resume: `uuid` or `uuid#index`.
        let key: String?
        let text: String
    }

    /// What a client's stream carries: SSE text blocks.
    package typealias Stream = AsyncStream<String>

    private final class Client: Sendable {
        let continuation: Stream.Continuation
        let mayRead: @Sendable (String) -> Bool
        let terminated = Atomic<Bool>(false)
        /// After a change-feed resume: keys already sent, skipped until a set starts at or past `until`.
        let skip: Lock<(keys: Set<String>, until: ChangeAnchor?)>
        init(continuation: Stream.Continuation, mayRead: @escaping @Sendable (String) -> Bool,
             skip: Set<String> = [], until: ChangeAnchor? = nil) {
            self.continuation = continuation
            self.mayRead = mayRead
            self.skip = Lock((skip, until))
        }
    }

    private struct State {
        var log: [Item] = []
        var logStart = 0
        var clients: [Int: Client] = [:]
        var nextClient = 0
        var nextNumber: UInt64 = 1
        var anchor: ChangeAnchor?
        /// The workouts' change-feed position the follower has sent up to.
        var workoutPosition: Int64 = 0
        var closed = false
        var started = false
        var resumes: [@Sendable (HealthStore) -> Void] = []
        var lastHeartbeat = ContinuousClock.now
    }

    /// This run's id in event ids: a resume id from another run is not looked up in the log.
    package let runID: String
    /// How many recent events are kept for exact resume.
    package let retained: Int
    /// How many events a client may have waiting before its stream is ended.
    package let clientBuffer: Int
    /// How often the follower checks the store when not woken.
    package let pollInterval: Duration
    /// A comment line is sent to every client this often (keeps proxies and idle connections
    /// open, and finds closed ones).
    package let heartbeatInterval: Duration
    /// Streams ended because their client did not keep up.
    package let overflows = Atomic<Int>(0)

    private let path: String
    private let registry: QuantityTypeRegistry
    private let logger: Logger
    private let state = Lock(State())
    private let wakeUp = DispatchSemaphore(value: 0)

    /// A feed of the store at `path` (opened read-only by the follower when ``start()`` runs).
    package init(path: String, registry: QuantityTypeRegistry, retained: Int = 16_384, clientBuffer: Int = 4_096,
                 pollInterval: Duration = .milliseconds(50), heartbeatInterval: Duration = .seconds(15), logger: Logger) {
        self.path = path
        self.registry = registry
        self.retained = max(retained, 1)
        self.clientBuffer = max(clientBuffer, 1)
        self.pollInterval = pollInterval
        self.heartbeatInterval = heartbeatInterval
        self.logger = logger
        runID = String(UInt32.random(in: .min ... .max), radix: 16)
    }

    // MARK: Lifecycle

    /// Starts the follower thread at the store's current position.
    /// - Throws: the store's errors when it cannot be opened read-only.
    package func start() throws {
        let store = try HealthStore(path: path, registry: registry, mode: .readOnly)
        let anchor = try store.currentAnchor()
        let workouts = try store.workoutPosition()
        let go = state.withLock { s -> Bool in
            guard !s.started, !s.closed else { return false }
            s.started = true
            s.anchor = anchor
            s.workoutPosition = workouts
            return true
        }
        guard go else { return }
        let thread = Thread { [self] in follow(store) }
        thread.name = "healthgate.http.live"
        thread.start()
    }

    /// Wakes the follower to read the store now (the pipeline's commit tap calls this).
    package func wake() { wakeUp.signal() }

    /// Ends every stream — after the follower has sent what was committed up to now, so a
    /// daemon's last commits reach its clients — and stops the follower; later subscriptions end
    /// at once. Does not wait.
    package func close() {
        let clients = state.withLock { s -> [Client] in
            if s.closed { return [] }
            s.closed = true
            if s.started { return [] }   // the follower ends them after its last read
            let c = Array(s.clients.values)
            s.clients = [:]
            return c
        }
        for c in clients { c.continuation.finish() }
        wakeUp.signal()
    }

    private func finishAll() {
        let clients = state.withLock { s -> [Client] in
            let c = Array(s.clients.values)
            s.clients = [:]
            return c
        }
        for c in clients { c.continuation.finish() }
    }

    /// Clients connected now.
    package var clientCount: Int { state.withLock { $0.clients.count } }

    // MARK: Publishing

    /// Sends a device event (connected, disconnected, battery, sensor contact) to every client
    /// that may see it: a `contact` event is heart-rate data (the sensor contact of a strap's
    /// readings), so only tokens that may read heart rate get it; the others see the device come
    /// and go, as `/v1/devices` shows it to them. `object` is the event's JSON object; device
    /// events are live only (not in the change feed).
    package func publish(device object: [String: Any]) {
        guard let data = try? JSONResponse.string(object) else { return }
        let type = object["event"] as? String == "contact" ? QuantityType.heartRate.identifier : nil
        state.withLock { s in
            guard !s.closed else { return }
            append(&s, anchorBefore: s.anchor, type: type, key: nil, event: "device", data: data)
        }
    }

    private func append(_ s: inout State, anchorBefore: ChangeAnchor?, type: String?, key: String?, event: String?, data: String?) {
        let number = s.nextNumber
        s.nextNumber += 1
        var text = "id: \(anchorBefore?.description ?? "");\(runID).\(number)\n"
        if let event { text += "event: \(event)\n" }
        if let data { text += "data: \(data)\n" }
        text += "\n"
        let item = Item(number: number, anchorBefore: anchorBefore, typeIdentifier: type, key: key, text: text)
        s.log.append(item)
        if s.log.count - s.logStart > retained {
            s.logStart += 1
            if s.logStart > 4096 {
                s.log.removeFirst(s.logStart)
                s.logStart = 0
            }
        }
        deliver(item, to: &s)
    }

    private func deliver(_ item: Item, to s: inout State) {
        var gone: [Int] = []
        for (id, c) in s.clients {
            if c.terminated.load(ordering: .relaxed) { gone.append(id); continue }
            if let t = item.typeIdentifier, !c.mayRead(t) { continue }
            if let key = item.key {
                let skipped = c.skip.withLock { skip -> Bool in
                    guard let until = skip.until else { return false }
                    if let before = item.anchorBefore, before.covers(until) {
                        skip = ([], nil)
                        return false
                    }
                    return skip.keys.contains(key)
                }
                if skipped { continue }
            }
            switch c.continuation.yield(item.text) {
            case .enqueued: break
            case .dropped:
                overflows.add(1, ordering: .relaxed)
                logger.notice("a /v1/live client did not keep up (\(clientBuffer) events waiting): its stream is closed; it resumes with Last-Event-ID when it reconnects")
                c.continuation.finish()
                gone.append(id)
            case .terminated: gone.append(id)
            @unknown default: gone.append(id)
            }
        }
        for id in gone { s.clients[id] = nil }
    }

    // MARK: Subscribing

    /// Why a resume point is refused.
    package enum ResumeError: Error {
        /// The change feed refused the anchor (malformed, expired, another store).
        case feed(ChangeFeedError)
    }

    /// A client's stream: first ``replay`` (what it missed, written at the pace the client
    /// reads), then ``live`` (attached at the moment the replay ends, so nothing falls between).
    package struct Subscription: Sendable {
        /// SSE blocks to write first.
        package let replay: [String]
        /// The live events; it ends on overflow, on ``LiveFeed/close()``, on ``end()``, or right
        /// after the replay when that was cut short (the client resumes from its last id).
        package let live: Stream
        let continuation: Stream.Continuation

        /// Ends ``live`` (its token was revoked): the follower stops feeding it.
        package func end() { continuation.finish() }
    }

    /// The events after `lastEventID` (nil: from now on), for a token that may read the types
    /// `mayRead` accepts (``workoutType`` for workout events). `anchor` (the `anchor` query
    /// parameter) is used when there is no `lastEventID`. `types` narrows the samples (nil: all),
    /// `workouts` says whether workout events are wanted when `types` is given.
    /// - Throws: ``ChangeFeedError`` for a resume point the feed cannot answer without a gap.
    package func subscribe(lastEventID: String?, anchor: ChangeAnchor?, types: [QuantityType]?, workouts: Bool = true,
                           mayRead: @escaping @Sendable (String) -> Bool) async throws -> Subscription {
        let wanted = types.map { Set($0.map(\.identifier)).union(workouts ? [Self.workoutType] : []) }
        let filter: @Sendable (String) -> Bool = { t in mayRead(t) && (wanted?.contains(t) ?? true) }
        let (stream, continuation) = Stream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(clientBuffer))
        let retry = "retry: 2000\n\n"
        var resumeAnchor = anchor
        if let lastEventID {
            let parsed = Self.parse(lastEventID)
            // An id in the log of this run: exactly the events after it.
            let exact = state.withLock { s -> [String]? in
                guard let parsed, parsed.run == runID, s.log.count > s.logStart,
                      let first = s.log[s.logStart...].first, parsed.number + 1 >= first.number,
                      parsed.number < s.nextNumber else { return nil }
                let from = Int(parsed.number + 1 - first.number) + s.logStart
                let missed = s.log[from...].filter { $0.typeIdentifier.map(filter) ?? true }.map(\.text)
                attach(Client(continuation: continuation, mayRead: filter), to: &s)
                return missed
            }
            if let exact { return Subscription(replay: [retry] + exact, live: stream, continuation: continuation) }
            guard let parsed else {
                continuation.finish()
                throw ChangeFeedError.invalidAnchor(lastEventID)
            }
            resumeAnchor = parsed.anchor
        }
        guard let resumeAnchor else {
            state.withLock { s in attach(Client(continuation: continuation, mayRead: filter), to: &s) }
            return Subscription(replay: [retry], live: stream, continuation: continuation)
        }
        // From an anchor: the follower's thread reads the change feed from it, then attaches.
        let readable = registry.all.filter { filter($0.identifier) }
        do {
            let missed = try await withCheckedThrowingContinuation { (done: CheckedContinuation<[String], any Error>) in
                let queued = state.withLock { s -> Bool in
                    guard !s.closed, s.started else { return false }
                    s.resumes.append { [self] store in
                        done.resume(with: Result { try catchUp(store, from: resumeAnchor, types: readable, filter: filter, into: continuation) })
                    }
                    return true
                }
                if queued { wakeUp.signal() } else {
                    continuation.finish()
                    done.resume(returning: [])
                }
            }
            return Subscription(replay: [retry] + missed, live: stream, continuation: continuation)
        } catch {
            continuation.finish()
            throw error
        }
    }

    private func attach(_ client: Client, to s: inout State) {
        if s.closed {
            client.continuation.finish()
            return
        }
        let id = s.nextClient
        s.nextClient += 1
        client.continuation.onTermination = { [client] _ in client.terminated.store(true, ordering: .relaxed) }
        s.clients[id] = client
    }

    /// `<anchor>;<run>.<n>` or a bare anchor.
    static func parse(_ id: String) -> (anchor: ChangeAnchor, run: String?, number: UInt64)? {
        let text = id.trimmingCharacters(in: .whitespaces)
        if let semi = text.lastIndex(of: ";") {
            let tail = text[text.index(after: semi)...]
            guard let dot = tail.firstIndex(of: "."), let n = UInt64(tail[tail.index(after: dot)...]),
                  let a = try? ChangeAnchor(string: String(text[..<semi])) else { return nil }
            return (a, String(tail[..<dot]), n)
        }
        guard let a = try? ChangeAnchor(string: text) else { return nil }
        return (a, nil, 0)
    }

    // MARK: The follower thread

    /// Series quantities already sent: per series, the indices sent lately.
    private struct SentSeries {
        var indices: [UUID: (set: Set<Int>, touched: UInt64)] = [:]
        var tick: UInt64 = 0

        mutating func isNew(_ uuid: UUID, _ index: Int) -> Bool {
            tick += 1
            var e = indices[uuid] ?? ([], tick)
            let new = e.set.insert(index).inserted
            e.touched = tick
            if e.set.count > 4096 {
                // A series' open chunk holds at most a few hundred quantities: keep the newest.
                let keep = e.set.sorted().suffix(2048)
                e.set = Set(keep)
            }
            indices[uuid] = e
            if indices.count > 4096 {
                let old = indices.sorted { $0.value.touched < $1.value.touched }.prefix(2048).map(\.key)
                for k in old { indices[k] = nil }
            }
            return new
        }
    }

    private func follow(_ store: HealthStore) {
        var sent = SentSeries()
        var lastVersion: Int64?
        let seconds = Double(pollInterval.components.seconds) + Double(pollInterval.components.attoseconds) / 1e18
        while true {
            _ = wakeUp.wait(timeout: .now() + seconds)
            let (closed, resumes) = state.withLock { s -> (Bool, [@Sendable (HealthStore) -> Void]) in
                let r = s.resumes
                s.resumes = []
                return (s.closed, r)
            }
            if closed {
                try? advance(store, &sent)      // the last commits, then the end
                for r in resumes { r(store) }   // they find the feed closed and end their streams
                finishAll()
                return
            }
            do {
                let version = try store.dataVersion()
                if version != lastVersion || !resumes.isEmpty {
                    lastVersion = version
                    try advance(store, &sent)
                }
            } catch {
                lastVersion = nil   // a busy store: look again next time
                logger.warning("the live stream could not read the change feed: \(error); retrying")
            }
            for r in resumes { r(store) }
            heartbeatIfDue()
        }
    }

    /// Reads every change since the follower's anchor and sends it.
    private func advance(_ store: HealthStore, _ sent: inout SentSeries) throws {
        while true {
            let before = state.withLock { $0.anchor }
            let change = try store.changes(since: before, limit: 1000)
            var items: [(type: String, key: String, event: String, data: String)] = []
            for d in change.deleted {
                let data = try JSONResponse.string(["uuid": d.uuid.uuidString.lowercased(), "type": d.typeIdentifier])
                items.append((d.typeIdentifier, "d:" + d.uuid.uuidString, "deleted", data))
            }
            for sample in change.samples {
                var key = sample.uuid.uuidString
                if let i = sample.seriesIndex {
                    guard sent.isNew(sample.uuid, i) else { continue }
                    key += "#\(i)"
                }
                items.append((sample.type.identifier, key, "sample", try JSONResponse.string(try SampleJSON.object(sample))))
            }
            state.withLock { s in
                for i in items { append(&s, anchorBefore: before, type: i.type, key: i.key, event: i.event, data: i.data) }
                if change.anchor != before {
                    append(&s, anchorBefore: change.anchor, type: nil, key: nil, event: nil, data: nil)
                }
                s.anchor = change.anchor
            }
            if !change.hasMore { break }
        }
        try advanceWorkouts(store)
    }

    /// The type name workout events are filtered by: a token sees them with `workout` in its
    /// read scope (``AccessTokens/TokenScopes/mayReadWorkouts``), and `type=workout` selects them.
    package static let workoutType = "workout"

    /// Sends every workout started, paused, resumed, ended, edited or deleted since the last
    /// call (the workouts' own change feed: `workout start` in a shell, `live --workout`, an
    /// import), as `workout` events (the record `export` writes) and `deleted` events with
    /// type `workout`. Live only: a client resuming through the sample change feed catches
    /// workouts up with `/v1/workouts/changes`.
    private func advanceWorkouts(_ store: HealthStore) throws {
        while true {
            let after = state.withLock { $0.workoutPosition }
            let page = try store.workoutChanges(after: after, limit: 200)
            guard page.position > after else { return }
            var items: [(event: String, data: String)] = []
            for w in page.workouts {
                var o = WorkoutRecordJSON.object(w)
                o["state"] = w.state.rawValue
                items.append(("workout", try JSONResponse.string(o)))
            }
            for uuid in page.deleted {
                items.append(("deleted", try JSONResponse.string(["uuid": uuid.uuidString.lowercased(), "type": Self.workoutType])))
            }
            state.withLock { s in
                for i in items { append(&s, anchorBefore: s.anchor, type: Self.workoutType, key: nil, event: i.event, data: i.data) }
                s.workoutPosition = page.position
            }
            if !page.hasMore { return }
        }
    }

    /// A client resuming from `anchor` through the change feed: what it missed (at most
    /// ``retained`` events; when more are left its live stream ends after them and it resumes
    /// from its last id), then the live events, skipping those the catch-up already sent (a
    /// set both overlapped).
    private func catchUp(_ store: HealthStore, from anchor: ChangeAnchor, types: [QuantityType], filter: @escaping @Sendable (String) -> Bool,
                         into continuation: Stream.Continuation) throws -> [String] {
        var from = anchor
        var keys = Set<String>()
        var sentSeries = SentSeries()
        var out: [String] = []
        if types.isEmpty {
            try store.validate(anchor)
            from = try store.currentAnchor()
        }
        while !types.isEmpty {
            let change = try store.changes(types: types, since: from, limit: 1000)
            for d in change.deleted {
                let data = try JSONResponse.string(["uuid": d.uuid.uuidString.lowercased(), "type": d.typeIdentifier])
                keys.insert("d:" + d.uuid.uuidString)
                out.append("id: \(from)\nevent: deleted\ndata: \(data)\n\n")
            }
            for sample in change.samples {
                var key = sample.uuid.uuidString
                if let i = sample.seriesIndex {
                    guard sentSeries.isNew(sample.uuid, i) else { continue }
                    key += "#\(i)"
                }
                keys.insert(key)
                out.append("id: \(from)\nevent: sample\ndata: \(try JSONResponse.string(try SampleJSON.object(sample)))\n\n")
            }
            out.append("id: \(change.anchor)\n\n")
            from = change.anchor
            if !change.hasMore { break }
            if out.count >= retained {
                continuation.finish()   // the rest when it reconnects from its last id
                return out
            }
        }
        let client = Client(continuation: continuation, mayRead: filter, skip: keys, until: from)
        state.withLock { s in attach(client, to: &s) }
        return out
    }

    private func heartbeatIfDue() {
        state.withLock { s in
            guard s.lastHeartbeat.duration(to: .now) >= heartbeatInterval else { return }
            s.lastHeartbeat = .now
            var gone: [Int] = []
            for (id, c) in s.clients {
                if c.terminated.load(ordering: .relaxed) { gone.append(id); continue }
                if case .dropped = c.continuation.yield(": keep-alive\n\n") {
                    overflows.add(1, ordering: .relaxed)
                    c.continuation.finish()
                    gone.append(id)
                }
            }
            for id in gone { s.clients[id] = nil }
        }
    }
}
