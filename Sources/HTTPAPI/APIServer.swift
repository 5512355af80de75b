import AccessTokens
import Foundation
import HealthModel
import HealthStore
import Hummingbird
import LivePage
import Logging
import NIOSSL
import HummingbirdTLS
import HTTPTypes
import NIOCore
import ServiceLifecycle
import Synchronization
import Locking

/// Where `serve` listens: a host (IPv4, IPv6 in brackets, or a name) and a port.
package struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var port: Int

    /// Parses `HOST:PORT`, `[IPv6]:PORT` or `:PORT` (loopback). Throws a sentence naming `--listen`.
    package init(parsing text: String) throws {
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw ListenAddressError(text: text)
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { throw ListenAddressError(text: text) }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        if host.isEmpty { host = "127.0.0.1" }
        guard portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let port = Int(portText), (0...65535).contains(port) else {
            throw ListenAddressError(text: text)
        }
        self.host = String(host)
        self.port = port
    }

    /// Whether only this machine can reach the address (127.0.0.0/8, ::1, localhost).
    package var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A `--listen` value that is not an address.
package struct ListenAddressError: Error, CustomStringConvertible {
    let text: String
    package var description: String {
        "--listen '\(text)' is not HOST:PORT: use e.g. 127.0.0.1:8080, [::1]:8080 or 0.0.0.0:8080 (port 0 picks a free one)."
    }
}

/// The HTTP API server (docs/http-api.md): Hummingbird 2 over a store, with bearer-token
/// authorization, Prometheus metrics and the OpenAPI document.
package final class APIServer: Sendable {
    /// The default largest request body: 8 MiB (about 30,000 samples).
    package static let maxBodyBytes = 8 << 20
    /// The default of how many events a `/v1/live` client may have waiting.
    package static let defaultLiveClientBuffer = 4_096

    package let storePath: String
    let queue: StoreQueue
    /// The server's own metrics (`run` records commit latency here).
    package let metrics = ServerMetrics()
    let status: (any DaemonStatus)?
    let tlsConfiguration: TLSConfiguration?
    /// Whether it serves HTTPS.
    package var scheme: String { tlsConfiguration == nil ? "http" : "https" }
    /// The event stream of `GET /v1/live`; ``LiveFeed/wake()`` it after a commit, and
    /// ``LiveFeed/publish(device:)`` device events into it.
    package let live: LiveFeed
    let brake = FailedAuthBrake()
    let listen: ListenAddress
    let maxBody: Int
    let logger: Logger
    /// nil: not started; a group: running; `stopRequested`: shutdown() came before run().
    private let state: Lock<(group: ServiceGroup?, stopRequested: Bool)> = Lock((nil, false))

    /// A server for the store at `store.path`. `maxBodyBytes` bounds POST bodies (413 above).
    /// TLS: a PEM certificate chain and private key.
    package struct TLSFiles: Sendable {
        package var certificate: String
        package var key: String
        package init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    /// A certificate or key that cannot be used.
    package struct TLSError: Error, CustomStringConvertible {
        package let description: String
    }

    /// `liveClientBuffer` is how many events a `/v1/live` client may have waiting before its
    /// stream is closed; `tls` serves HTTPS; `status` is `run`'s device states and pipeline
    /// counters (`/v1/devices`, `/metrics`).
    /// - Throws: ``TLSError`` for unreadable or invalid TLS files.
    package init(store: HealthStore, listen: ListenAddress, maxBodyBytes: Int = APIServer.maxBodyBytes,
                 liveClientBuffer: Int = APIServer.defaultLiveClientBuffer, tls: TLSFiles? = nil, status: (any DaemonStatus)? = nil, logger: Logger) throws {
        storePath = store.path
        self.status = status
        if let tls {
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(tls.certificate)
                let key = try NIOSSLPrivateKey(file: tls.key, format: .pem)
                tlsConfiguration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
            } catch {
                throw TLSError(description: "the TLS certificate \(tls.certificate) or key \(tls.key) cannot be used (\(error)): give readable PEM files, the certificate chain and its private key.")
            }
        } else {
            tlsConfiguration = nil
        }
        live = LiveFeed(path: store.path, registry: store.registry, clientBuffer: liveClientBuffer, logger: logger)
        queue = StoreQueue(store: store, empty: try HealthStore(path: ":memory:", registry: store.registry))
        self.listen = listen
        maxBody = maxBodyBytes
        self.logger = logger
    }

    /// The router: public `/healthz` and `/v1/openapi.json`; everything else behind the token.
    func router() -> Router<APIContext> {
        let router = Router(context: APIContext.self)
        router.add(middleware: AnswerMiddleware(metrics: metrics))
        let routes = Routes(store: queue, registry: queue.store.registry, maxBodyBytes: maxBody, metrics: metrics, status: status)
        let queue = self.queue
        router.get("/healthz") { _, _ in
            do {
                _ = try await queue.run { db in try db.currentAnchor() }
            } catch {
                throw APIError(.serviceUnavailable, "the health store cannot be read (\(error)): check the file and its permissions.")
            }
            return try JSONResponse.make(["status": "ok"])
        }
        // The live page (public: it holds no data, it asks for a token and reads the API with it).
        for asset in LivePage.assets {
            router.get(RouterPath(asset.path)) { _, _ in
                Response(status: .ok, headers: [
                    .contentType: asset.contentType, .cacheControl: "no-cache",
                    .contentSecurityPolicy: LivePage.contentSecurityPolicy,
                    HTTPField.Name("X-Content-Type-Options")!: "nosniff", HTTPField.Name("Referrer-Policy")!: "no-referrer",
                ], body: ResponseBody(byteBuffer: ByteBuffer(string: asset.text)))
            }
        }
        router.get("/v1/openapi.json") { _, _ in
            guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"),
                  let text = try? String(contentsOf: url, encoding: .utf8) else {
                throw APIError(.internalServerError, "the OpenAPI document is missing from this build: please report it.")
            }
            return JSONResponse.text(text, contentType: "application/json")
        }
        let auth = BearerAuthenticator(store: queue, brake: brake, metrics: metrics)
        let v1 = router.group("/v1").add(middleware: auth)
        v1.get("/types", use: routes.types)
        v1.get("/sources", use: routes.sources)
        v1.get("/devices", use: routes.devices)
        v1.get("/samples", use: routes.samples)
        v1.post("/samples", use: routes.saveSamples)
        v1.delete("/samples/:uuid", use: routes.deleteSample)
        v1.get("/statistics", use: routes.statistics)
        v1.get("/changes", use: routes.changes)
        let workouts = WorkoutRoutes(store: queue)
        v1.get("/workouts", use: workouts.list)
        v1.get("/workouts/changes", use: workouts.changes)
        v1.get("/workouts/:uuid", use: workouts.one)
        let tokens = TokenRoutes(store: queue, registry: queue.store.registry, maxBodyBytes: maxBody)
        v1.get("/tokens", use: tokens.list)
        v1.post("/tokens", use: tokens.create)
        v1.delete("/tokens/:name", use: tokens.revoke)
        v1.get("/live", use: LiveRoute(feed: live, registry: queue.store.registry, tokens: StreamTokenCheck(store: queue)).live)
        let metrics = self.metrics
        let live = self.live
        let status = self.status
        let path = storePath
        router.group("/metrics").add(middleware: auth).get { _, context in
            guard context.scopes.mayReadMetrics else {
                throw APIError(.forbidden, "this token may not read /metrics: it needs --admin or --metrics ('healthgate token create').")
            }
            let uplinks = try await queue.run { db in status?.uplinks(in: db) ?? [] }
            return JSONResponse.text(metrics.scrape(storePath: path, live: live, status: status, uplinks: uplinks),
                                     contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        return router
    }

    /// Serves until ``shutdown()``: in-flight requests finish, then it returns. `onListening`
    /// gets the bound address (the real port when `listen` asked for port 0).
    package func run(onListening: @escaping @Sendable (ListenAddress) -> Void = { _ in }) async throws {
        let listen = self.listen
        let configuration = ApplicationConfiguration(address: .hostname(listen.host, port: listen.port), serverName: "HealthGate")
        let running: @Sendable (any Channel) async -> Void = { channel in
            var bound = listen
            bound.port = channel.localAddress?.port ?? listen.port
            onListening(bound)
        }
        let service: any Service
        if let tlsConfiguration {
            service = Application(router: router(), server: try .tls(.http1(), tlsConfiguration: tlsConfiguration),
                                  configuration: configuration, onServerRunning: running, logger: logger)
        } else {
            service = Application(router: router(), configuration: configuration, onServerRunning: running, logger: logger)
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [service], gracefulShutdownSignals: [], logger: logger))
        let stopEarly = state.withLock { s -> Bool in
            if s.stopRequested { return true }
            s.group = group
            return false
        }
        if stopEarly { return }
        try live.start()
        defer { live.close() }
        try await group.run()
    }

    /// Stops the server gracefully: no new connections, requests in flight are answered, live
    /// streams are ended (their clients see the connection close after the last event).
    package func shutdown() async {
        let g = state.withLock { s -> ServiceGroup? in
            s.stopRequested = true   // a run() that has not started yet returns at once
            return s.group
        }
        live.close()
        await g?.triggerGracefulShutdown()
    }
}

/// Outermost middleware: turns every error into `{"error": …}` with its status, counts each
/// answer and its latency, and logs server errors (never a token: only method, path, status).
struct AnswerMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            let e = APIError.from(error)
            if e.status.code >= 500 {
                context.logger.error("\(request.method) \(request.uri.path) failed: \(e.message)")
            }
            response = try e.response(from: request, context: context)
        }
        metrics.answered(status: response.status.code, after: ContinuousClock.now - start)
        return response
    }
}
