import AccessTokens
import Foundation
import HTTPTypes
import HummingbirdAuth
import Logging
import HealthModel
import HealthStore
import Hummingbird
import NIOCore
import Synchronization
import Locking

/// `GET /v1/live`: Server-Sent Events from the ``LiveFeed`` (docs/http-api.md, "Live stream").
/// Events of types the token may not read are never sent; `type` narrows further. The token is
/// looked up again every ``revalidateInterval`` while the stream is open: once it is revoked or
/// expired the stream ends (nothing more is written) and the client's reconnect gets 401.
struct LiveRoute: Sendable {
    let feed: LiveFeed
    let registry: QuantityTypeRegistry
    let tokens: StreamTokenCheck

    func live(_ request: Request, _ context: APIContext) async throws -> Response {
        let q = try QueryParameters(request, known: ["type", "anchor"], registry: registry)
        // `type=workout` selects the workout events (not a quantity type).
        let names = q.list("type")
        let named = try names.filter { $0 != LiveFeed.workoutType }.map { try q.type(named: $0, parameter: "type") }
        let anchor: ChangeAnchor?
        do { anchor = try (try q.string("anchor")).map { try ChangeAnchor(string: $0) } } catch let e as ChangeFeedError {
            throw APIError.parameter("anchor", "\(e)")
        }
        let lastEventID = request.headers[HTTPField.Name("Last-Event-ID")!].flatMap { $0.isEmpty ? nil : $0 }
        let scopes = context.scopes
        let registry = self.registry
        let subscription: LiveFeed.Subscription
        do {
            subscription = try await feed.subscribe(lastEventID: lastEventID, anchor: anchor, types: names.isEmpty ? nil : named,
                                                    workouts: names.isEmpty || names.contains(LiveFeed.workoutType)) { id in
                if id == LiveFeed.workoutType { return scopes.mayReadWorkouts }
                guard let t = try? registry.type(id) else { return false }
                return scopes.mayRead(t)
            }
        } catch let e as ChangeFeedError where !e.requiresResync {
            throw APIError(.badRequest, lastEventID != nil
                ? "the Last-Event-ID header is not an id this stream sent (or a change-feed anchor): reconnect without it to start from now."
                : "query parameter 'anchor' \(e)")
        }
        let token = request.headers.bearer?.token ?? ""
        let (tokens, logger, name) = (self.tokens, context.logger, context.token?.name ?? "")
        let revoked = RevokedFlag()
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store", HTTPField.Name("X-Accel-Buffering")!: "no"],
            body: ResponseBody { writer in
                // The token is checked again while the stream is open (a store error keeps it:
                // only a lookup that finds it revoked or expired ends the stream).
                let watch = Task {
                    // The first check at a random point of the interval: streams opened
                    // together (a page reloaded on many screens) do not all look at once.
                    var wait = tokens.interval * Double.random(in: 0.5...1.5)
                    while !Task.isCancelled {
                        try? await Task.sleep(for: wait)
                        wait = tokens.interval
                        if Task.isCancelled { return }
                        if await tokens.isValid(token) == false {
                            revoked.set()
                            subscription.end()
                            logger.notice("ended a /v1/live stream: its token '\(name)' was revoked or has expired")
                            return
                        }
                    }
                }
                defer { watch.cancel() }
                // What it missed, at the pace it reads, a few hundred events a write; live events
                // wait in its buffer meanwhile.
                var at = 0
                while at < subscription.replay.count, !revoked.isSet {
                    let next = min(at + Self.eventsPerWrite, subscription.replay.count)
                    try await writer.write(ByteBuffer(string: subscription.replay[at..<next].joined()))
                    at = next
                }
                // Live: everything that arrived while the previous write was under way goes out
                // as one write. One write per event meant one event-loop task per event and
                // client: starved of CPU, the loop's queue grew and requests waited behind it.
                let waiting = LiveBacklog(limit: feed.clientBuffer)
                let reader = Task {
                    for await text in subscription.live {
                        // A full backlog: stop draining, so the feed's own buffer fills and the
                        // feed ends this client's stream (counted and logged there).
                        while waiting.isFull, !Task.isCancelled { await waiting.roomMade() }
                        waiting.add(text)
                    }
                    waiting.end()
                }
                defer { reader.cancel() }
                for await _ in waiting.arrivals {
                    let (texts, ended) = waiting.takeAll()
                    if revoked.isSet { break }
                    if !texts.isEmpty { try await writer.write(ByteBuffer(string: texts.joined())) }
                    if ended { break }
                }
                try await writer.finish(nil)
            })
    }
}

extension LiveRoute {
    /// At most this many replayed events go into one write.
    static let eventsPerWrite = 512
}

/// The live events a stream's writer has not taken yet: its reader adds each as it arrives and
/// signals; the writer takes all there are at once. Bounded by the feed's per-client buffer:
/// a client whose writes fall that far behind is ended by the feed (``LiveFeed`` counts and
/// logs it) because the reader stops draining its stream while this backlog is full.
final class LiveBacklog: Sendable {
    private let limit: Int
    private let state = Lock<(texts: [String], ended: Bool)>(([], false))
    private let signal = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    private let room = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))

    /// A backlog of at most `limit` events.
    init(limit: Int) { self.limit = max(limit, 1) }

    /// Whether it holds `limit` events.
    var isFull: Bool { state.withLock { $0.texts.count >= limit } }

    /// Returns after the writer took events (at once if it did since the last call).
    func roomMade() async {
        var it = room.stream.makeAsyncIterator()
        _ = await it.next()
    }

    /// One element per wake-up (several arrivals may share one); ends after ``end()``.
    var arrivals: AsyncStream<Void> { signal.stream }

    func add(_ text: String) {
        state.withLock { $0.texts.append(text) }
        signal.continuation.yield()
    }

    func end() {
        state.withLock { $0.ended = true }
        signal.continuation.yield()
        signal.continuation.finish()
    }

    /// Everything waiting, and whether the stream has ended.
    func takeAll() -> (texts: [String], ended: Bool) {
        let taken = state.withLock { s in
            defer { s.texts = [] }
            return (s.texts, s.ended)
        }
        room.continuation.yield()
        return taken
    }
}

/// Whether the tokens of open `/v1/live` streams are still valid: looked up on the store's queue
/// at most once per ``interval`` per token (by its SHA-256, never kept as text), so 200 streams
/// of one coach's token cost one lookup every 2 s, not 100 a second in front of other requests.
final class StreamTokenCheck: Sendable {
    let store: StoreQueue
    /// How often an open stream's token is checked.
    let interval: Duration
    /// Per token digest: the last answer and when it was had, and whether a lookup is under way.
    private struct Entry {
        var at: ContinuousClock.Instant
        var valid: Bool?
        var looking: Bool
    }
    private let cache = Lock<[[UInt8]: Entry]>([:])
    private let lookupCount = Atomic<Int>(0)
    /// Store lookups made so far (what the single flight saves is counted in tests).
    var lookups: Int { lookupCount.load(ordering: .relaxed) }

    init(store: StoreQueue, interval: Duration = .seconds(2)) {
        self.store = store
        self.interval = interval
    }

    /// false: revoked, expired or unknown; nil: the store could not be read (keep the stream).
    /// One lookup per token at a time: while one is under way, the others get the last answer
    /// (streams of one token checking together cost one lookup, even when a lookup is slow).
    func isValid(_ token: String) async -> Bool? {
        let key = AccessTokenRegistry.digest(token)
        let now = ContinuousClock.now
        let (answer, mine) = cache.withLock { c -> (Bool?, Bool) in
            if let e = c[key], e.looking || e.at.duration(to: now) < interval { return (e.valid, false) }
            c[key, default: Entry(at: now, valid: nil, looking: true)].looking = true
            return (nil, true)
        }
        guard mine else { return answer }
        lookupCount.add(1, ordering: .relaxed)
        let valid = try? await store.run({ db in try AccessTokenRegistry(store: db).authenticate(token) != nil })
        let done = ContinuousClock.now   // the answer's age counts from when it was had
        cache.withLock { c in
            c[key] = Entry(at: done, valid: valid ?? c[key]?.valid, looking: false)
            if c.count > 1_000 { c = c.filter { $0.value.looking || $0.value.at.duration(to: done) < interval } }
        }
        return valid
    }
}

/// Set once a stream's token is found revoked or expired: nothing more is written to it.
private final class RevokedFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}
