import AccessTokens
import Foundation
import HTTPTypes
import HealthModel
import HealthStore
import Hummingbird
import NIOCore

/// `GET /v1/live`: Server-Sent Events from the ``LiveFeed`` (docs/http-api.md, "Live stream").
/// Events of types the token may not read are never sent; `type` narrows further.
struct LiveRoute: Sendable {
    let feed: LiveFeed
    let registry: QuantityTypeRegistry

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
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store", HTTPField.Name("X-Accel-Buffering")!: "no"],
            body: ResponseBody { writer in
                // What it missed, at the pace it reads; live events wait in its buffer meanwhile.
                for text in subscription.replay {
                    try await writer.write(ByteBuffer(string: text))
                }
                for await text in subscription.live {
                    try await writer.write(ByteBuffer(string: text))
                }
                try await writer.finish(nil)
            })
    }
}
