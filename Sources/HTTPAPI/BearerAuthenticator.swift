import AccessTokens
import Foundation
import Hummingbird
import Prometheus
import HummingbirdAuth
import Logging
import Synchronization
import Locking

/// Checks `Authorization: Bearer …` on every request it guards: no or a bad token is 401
/// (one answer for missing, malformed, unknown, revoked and expired, so a caller learns
/// nothing about which); a good one is put in the context. Tokens are looked up on each
/// request, so `token revoke` takes effect at once. Secrets are never logged: a failure logs
/// the client's address and, for a well-formed token, nothing of the token at all.
struct BearerAuthenticator: RouterMiddleware {
    typealias Context = APIContext
    let store: StoreQueue
    let brake: FailedAuthBrake
    let metrics: ServerMetrics

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        // A client that failed recently waits before its token is even looked at, so
        // parallel guesses from one address are slowed too.
        await brake.waitIfPenalised(context.clientAddress)
        var context = context
        let text = request.headers.bearer?.token
        let token: AccessTokenInfo?
        if let text {
            token = try await store.run { store in try AccessTokenRegistry(store: store).authenticate(text) }
        } else {
            token = nil
        }
        guard let token else {
            let failures = brake.recordFailure(context.clientAddress)
            metrics.authFailures.increment()
            context.logger.notice("refused a request without a valid token",
                                  metadata: ["client": .string(context.clientAddress), "failures": .stringConvertible(failures),
                                             "reason": .string(text == nil ? "no bearer token" : "unknown, revoked or expired token")])
            throw APIError(.unauthorized, text == nil
                ? "this endpoint needs a bearer token: send 'Authorization: Bearer <token>' (make one with 'healthgate token create')."
                : "the bearer token is not valid (unknown, revoked or expired): ask for a new one ('healthgate token create').")
        }
        brake.recordSuccess(context.clientAddress)
        context.token = token
        return try await next(request, context)
    }
}

/// Slows down repeated failed authentications per client address: after
/// ``freeFailures`` failures within ``window``, each request from that address waits
/// 100 ms × 2^(failures − free − 1) (100 ms after the 4th), at most ``maxDelay``, before its token is checked. A success
/// clears the address. At most ``maxTracked`` addresses are remembered (the oldest is dropped).
final class FailedAuthBrake: Sendable {
    static let freeFailures = 3
    static let window: Duration = .seconds(300)
    static let maxDelay: Duration = .seconds(5)
    static let maxTracked = 10_000

    private struct Entry { var failures: Int; var last: ContinuousClock.Instant }
    private let table = Lock<[String: Entry]>([:])
    private let clock = ContinuousClock()

    /// Counts a failure and returns the address's count.
    @discardableResult
    func recordFailure(_ address: String) -> Int {
        let now = clock.now
        return table.withLock { t in
            var e = t[address].flatMap { now - $0.last < Self.window ? $0 : nil } ?? Entry(failures: 0, last: now)
            e.failures += 1
            e.last = now
            t[address] = e
            if t.count > Self.maxTracked, let oldest = t.min(by: { $0.value.last < $1.value.last })?.key { t[oldest] = nil }
            return e.failures
        }
    }

    func recordSuccess(_ address: String) { _ = table.withLock { $0.removeValue(forKey: address) } }

    /// How long a request from `address` waits now.
    func delay(for address: String) -> Duration {
        let now = clock.now
        let failures = table.withLock { t -> Int in
            guard let e = t[address], now - e.last < Self.window else { return 0 }
            return e.failures
        }
        let over = failures - Self.freeFailures
        guard over > 0 else { return .zero }
        return min(.milliseconds(100) * (1 << min(over - 1, 16)), Self.maxDelay)
    }

    func waitIfPenalised(_ address: String) async {
        let d = delay(for: address)
        if d > .zero { try? await Task.sleep(for: d) }
    }
}
