import ArgumentParser
import Foundation
import Gateway
import HTTPAPI
import HealthStore
import Logging
import Systemd

/// `healthgate serve`: the HTTP API over a store (docs/http-api.md).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the store over HTTP: samples, statistics, the change feed, metrics, with per-type tokens.",
        discussion: """
            Endpoints under /v1 (GET types, sources, devices, samples, statistics, changes, live; \
            POST samples; DELETE samples/{uuid}; tokens for an admin token), /healthz, /metrics \
            and /v1/openapi.json. \
            /v1/live streams every committed sample as Server-Sent Events and resumes from \
            Last-Event-ID. JSON shapes \
            are those of the CLI's --json. Every /v1 request but the OpenAPI document needs \
            'Authorization: Bearer <token>' from 'healthgate token create'; a token sees only the \
            types it may read (others look empty, as in HealthKit).

            Listens on loopback by default. --certificate and --key (PEM files) serve HTTPS. \
            Another address without TLS sends tokens and health data in clear text: it needs \
            --allow-plain-http (a warning is logged). \
            SIGINT or SIGTERM stops it gracefully: requests in flight are answered first.

            Examples:
              healthgate token create --name coach --read heartRate,stepCount
              healthgate serve --db health.sqlite --listen 127.0.0.1:8080
              healthgate serve --db health.sqlite --listen 0.0.0.0:8443 --certificate cert.pem --key key.pem
              curl -H "Authorization: Bearer $TOKEN" 'http://127.0.0.1:8080/v1/statistics?type=stepCount&interval=1d'
            """)

    @OptionGroup var store: StoreLocation

    @Option(help: ArgumentHelp("Address and port to listen on (port 0: any free port, printed at start).", valueName: "host:port"))
    var listen = "127.0.0.1:8080"

    @Option(help: ArgumentHelp("PEM certificate chain to serve HTTPS with (needs --key).", valueName: "path"))
    var certificate: String?

    @Option(help: ArgumentHelp("PEM private key of --certificate.", valueName: "path"))
    var key: String?

    @Flag(help: "Allow a non-loopback address without TLS (tokens and data travel in clear text).")
    var allowPlainHttp = false

    @Option(help: ArgumentHelp("The largest request body accepted, in bytes (larger: 413); 1024 to 1 GiB.", valueName: "bytes"))
    var maxBodyBytes = APIServer.maxBodyBytes

    @Option(help: ArgumentHelp("Events a /v1/live client may have waiting before its stream is closed (it resumes with Last-Event-ID); 16 to 1,000,000.",
                               valueName: "events"))
    var liveClientBuffer = APIServer.defaultLiveClientBuffer

    func run() async throws {
        let server = try setUp()
        // The project's one signal trap: the first SIGINT/SIGTERM starts a graceful shutdown, a
        // second one exits at once (130), as for `run`.
        let trap = SignalTrap(secondSignalExits: true) { signal in
            Console.note("healthgate serve: \(signal): finishing requests in flight, then stopping")
            Task { await server.shutdown() }
        }
        defer { trap.cancel() }
        do {
            try await server.run { bound in
                // One line a script or test can wait for; the real port when --listen asked for 0.
                Console.note("healthgate serve: listening on \(server.scheme)://\(bound) (store \(server.storePath))")
            }
        } catch {
            throw CLIFailure("serve could not listen on \(listen): \(error); another program may use the port: choose another with --listen.", code: .unavailable)
        }
    }

    private func setUp() throws -> APIServer {
        var settings = ServingSettings()
        settings.listen = listen
        settings.certificate = certificate
        settings.key = key
        settings.allowPlainHTTP = allowPlainHttp
        settings.maxBodyBytes = maxBodyBytes
        settings.liveClientBuffer = liveClientBuffer
        let logger = Logger.standardError("healthgate.http", level: .notice)
        // Opened for writing: POST and DELETE write, and a new store is created and migrated.
        return try settings.server(store: store.open(), names: .flags, logger: logger)
    }
}
