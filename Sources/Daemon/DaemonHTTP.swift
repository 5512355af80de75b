import Foundation
import Gateway
import HTTPAPI
import HealthGateConfiguration
import HealthModel
import HealthStore
import Ingest
import Logging
import Synchronization
import Sysexits
import Locking

/// `healthgate run` serving the HTTP API (its configuration's `[http]` table; docs/http-api.md,
/// "Serving from run"): the same ``HTTPAPI/APIServer`` as `serve`, woken by the pipeline's commit
/// tap, with the daemon's device states, device events and pipeline counters.
package final class DaemonHTTP: Sendable {
    /// The server.
    package let server: APIServer
    private let board: DeviceBoard
    private let finished = DispatchSemaphore(value: 0)
    private let outcome = Lock<Result<ListenAddress, any Error>?>(nil)
    private let listening = DispatchSemaphore(value: 0)

    /// Why the `[http]` table cannot be served.
    package struct SetupError: Error, CustomStringConvertible, SysexitConvertible {
        /// The sentence.
        package let description: String
        /// Its sysexits code: 78 a configuration error, 69 the address cannot be bound.
        package var sysexit: Sysexit = .config
    }

    /// Prepares the server for `settings` over `store`, fed by `daemon`.
    /// - Throws: ``SetupError`` (a configuration error: exit 78) for settings that break a
    ///   serving rule (``HTTPAPI/ServingSettings``): a bad address, a non-loopback plain listen
    ///   without `allow_plain_http`, unreadable or unusable TLS files, bounds.
    package init(settings: GatewayConfig.HTTP, file: String, store: HealthStore, daemon: GatewayDaemon, logger: Logger) throws {
        var serving = ServingSettings()
        serving.listen = settings.listen
        serving.certificate = settings.certificate
        serving.key = settings.key
        serving.allowPlainHTTP = settings.allowPlainHTTP
        serving.maxBodyBytes = settings.maxBodyBytes ?? serving.maxBodyBytes
        serving.liveClientBuffer = settings.liveClientBuffer ?? serving.liveClientBuffer
        board = DeviceBoard(daemon: daemon)
        do {
            server = try serving.server(store: store, status: board, names: .table, logger: logger)
        } catch {
            throw SetupError(description: "\(file): \(error.description)")
        }
        let (live, metrics) = (server.live, server.metrics)
        board.onDeviceEvent = { live.publish(device: $0) }
        let heartRateSlot = try? daemon.runtime.pipeline.slots.slot(for: .heartRate)
        daemon.runtime.pipeline.addObserver { [board] batch in
            board.committed(batch, heartRateSlot: heartRateSlot)
            if let last = batch.records.last {
                metrics.commitLatency(seconds: Date().timeIntervalSince1970 - last.end)
            }
            live.wake()
        }
    }

    /// Starts serving on a task of its own and waits (this thread, never a pool thread) until it
    /// listens or fails, at most 30 s.
    /// - Returns: the bound address (the real port when `listen` asked for port 0).
    package func start() throws -> ListenAddress {
        let server = self.server
        Task { [self] in
            do {
                try await server.run { [self] bound in
                    outcome.withLock { $0 = $0 ?? .success(bound) }
                    listening.signal()
                }
            } catch {
                outcome.withLock { $0 = $0 ?? .failure(error) }
                listening.signal()
            }
            finished.signal()
        }
        if listening.wait(timeout: .now() + 30) == .timedOut {
            throw SetupError(description: "the HTTP API did not start listening within 30 s")
        }
        return try outcome.withLock { $0! }.get()
    }

    /// Sets up and starts the server for `run` (``init(settings:file:store:daemon:logger:)``,
    /// ``start()``), logging where it listens.
    /// - Throws: ``SetupError`` with ``SetupError/sysexit`` 78 (configuration) or 69 (cannot listen).
    package static func serve(_ settings: GatewayConfig.HTTP, file: String, store: HealthStore, daemon: GatewayDaemon,
                              logger: Logger) throws -> DaemonHTTP {
        let http = try DaemonHTTP(settings: settings, file: file, store: store, daemon: daemon, logger: logger)
        let bound: ListenAddress
        do { bound = try http.start() } catch {
            throw SetupError(description: "the HTTP API could not listen on \(settings.listen) (\(error)); another program may use the port: choose another [http] listen in \(file).", sysexit: .unavailable)
        }
        logger.notice("healthgate run: serving the HTTP API on \(http.server.scheme)://\(bound)")
        return http
    }

    /// Stops gracefully (requests in flight are answered, live streams end) and waits for the
    /// server to finish, at most `timeout`. Call from a plain thread (it blocks).
    package func stop(timeout: Double = 15) {
        let server = self.server
        Task { await server.shutdown() }
        _ = finished.wait(timeout: .now() + timeout)
    }
}
