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

/// `GET /v1/live`: Server-Sent Events from the ``LiveFeed`` (docs/http-api.md, "Live stream").
/// Events of types the token may not read are never sent; `type` narrows further. The token is
/// looked up again every ``revalidateInterval`` while the stream is open: once it is revoked or
/// expired the stream ends (nothing more is written) and the client's reconnect gets 401.
struct LiveRoute: Sendable {
    let feed: LiveFeed
    let registry: QuantityTypeRegistry
    let store: StoreQueue
    var revalidateInterval: Duration = .seconds(2)

    func live(_ request: Request, _ context: APIContext) async throws -> Response {
        let q = try QueryParameters(request, known: ["type", "anchor"], registry: registry)
        let named = try q.list("type").map { try q.type(named: $0, parameter: "type") }
        let anchor: ChangeAnchor?
        do { anchor = try (try q.string("anchor")).map { try ChangeAnchor(string: $0) } } catch let e as ChangeFeedError {
            throw APIError.parameter("anchor", "\(e)")
        }
        let lastEventID = request.headers[HTTPField.Name("Last-Event-ID")!].flatMap { $0.isEmpty ? nil : $0 }
        let scopes = context.scopes
        let registry = self.registry
        let subscription: LiveFeed.Subscription
        do {
            subscription = try await feed.subscribe(lastEventID: lastEventID, anchor: anchor, types: named.isEmpty ? nil : named) { id in
                guard let t = try? registry.type(id) else { return false }
                return scopes.mayRead(t)
            }
        } catch let e as ChangeFeedError where !e.requiresResync {
            throw APIError(.badRequest, lastEventID != nil
                ? "the Last-Event-ID header is not an id this stream sent (or a change-feed anchor): reconnect without it to start from now."
                : "query parameter 'anchor' \(e)")
        }
        let token = request.headers.bearer?.token ?? ""
        let (store, interval, logger, name) = (self.store, revalidateInterval, context.logger, context.token?.name ?? "")
        let revoked = RevokedFlag()
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store", HTTPField.Name("X-Accel-Buffering")!: "no"],
            body: ResponseBody { writer in
                // The token is checked again while the stream is open (a store error keeps it:
                // only a lookup that finds it revoked or expired ends the stream).
                let watch = Task {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: interval)
                        if Task.isCancelled { return }
                        let valid = try? await store.run { db in try AccessTokenRegistry(store: db).authenticate(token) != nil }
                        if valid == false {
                            revoked.set()
                            subscription.end()
                            logger.notice("ended a /v1/live stream: its token '\(name)' was revoked or has expired")
                            return
                        }
                    }
                }
                defer { watch.cancel() }
                // What it missed, at the pace it reads; live events wait in its buffer meanwhile.
                for text in subscription.replay {
                    if revoked.isSet { break }
                    try await writer.write(ByteBuffer(string: text))
                }
                for await text in subscription.live {
                    if revoked.isSet { break }
                    try await writer.write(ByteBuffer(string: text))
                }
                try await writer.finish(nil)
            })
    }
}

/// Set once a stream's token is found revoked or expired: nothing more is written to it.
private final class RevokedFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}
