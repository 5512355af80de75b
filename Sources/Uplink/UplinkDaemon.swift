import Foundation
import HealthGateConfiguration
import HealthStore
import Logging
import Platform
import PostgresNIO
import Sysexits
import Synchronization
import Locking

/// The uplink inside `healthgate run` (`[uplink.postgres]`): a task that pushes the store's
/// change feed every `interval`, and after a failure waits a backoff that doubles up to a
/// maximum. It has its own store connection and only reads the feed (plus one small `state`
/// row per committed batch), so ingest never waits for it: a slow or absent server only grows
/// the lag, which it logs (and `uplink status` shows).
package final class UplinkDaemon: Sendable {
    package struct Settings: Sendable {
        package var url: UplinkURL
        package var gateway: String
        package var batchSize: Int
        package var interval: Duration
        package var backoff: Duration
        package var maxBackoff: Duration

        package init(url: UplinkURL, gateway: String, batchSize: Int, interval: Duration, backoff: Duration, maxBackoff: Duration) {
            self.url = url
            self.gateway = gateway
            self.batchSize = batchSize
            self.interval = interval
            self.backoff = backoff
            self.maxBackoff = maxBackoff
        }

        /// The settings of a configuration file's `[uplink.postgres]` table (`file` names it in
        /// the error).
        /// - Throws: ``UplinkError`` (78, a configuration error) for a `url` that is not one.
        package init(_ table: GatewayConfig.UplinkPostgres, file: String) throws {
            let url: UplinkURL
            do { url = try UplinkURL(table.url) } catch {
                throw UplinkError("\(file): [uplink.postgres] url: \(error)", .config)
            }
            self.init(url: url, gateway: table.gateway ?? GatewayConfig.defaultGatewayName(), batchSize: table.batchSize,
                      interval: .milliseconds(table.intervalMilliseconds), backoff: .milliseconds(table.retryBackoffMilliseconds),
                      maxBackoff: .milliseconds(table.retryMaxBackoffMilliseconds))
        }
    }

    private let pusher: UplinkPusher
    private let settings: Settings
    private let logger: Logger
    private let task = Lock<Task<Void, Never>?>(nil)
    private let ended = DispatchSemaphore(value: 0)

    /// Opens its own connection to the store at `path` (already created and migrated by `run`).
    package init(settings: Settings, storePath: String, logger: Logger) throws {
        let store = try HealthStore(path: storePath)
        pusher = try UplinkPusher(store: store, url: settings.url, gateway: settings.gateway,
                                  batchSize: settings.batchSize, logger: logger)
        self.settings = settings
        self.logger = logger
    }

    /// How far the uplink is behind, for `run`'s status line: "uplink caught up", or "uplink N
    /// changes (S s) behind", with ", failing" while its last push failed. Reads the store.
    package func statusNote() -> String? {
        let (gateway, server) = (settings.gateway, settings.url.display)
        guard let lag = (try? UplinkStatus.all(in: pusher.store))?.first(where: { $0.gateway == gateway && $0.server == server }) else {
            return "uplink not pushed yet"
        }
        let failing = lag.lastError == nil ? "" : ", failing"
        if lag.behind == 0 { return "uplink caught up\(failing)" }
        return "uplink \(lag.behind) changes" + (lag.secondsBehind.map { String(format: " (%.0f s)", $0) } ?? "") + " behind\(failing)"
    }

    /// Starts the loop on a task of its own.
    package func start() {
        let t = Task { [self] in
            await loop()
            ended.signal()
        }
        task.withLock { $0 = t }
        logger.notice("uplink: pushing to \(settings.url.display) as gateway \(settings.gateway), batches of \(settings.batchSize)")
    }

    /// Stops the loop: a push under way is cancelled (the server rolls its open batch back;
    /// nothing is lost: the anchor only moves after a commit). Waits at most `timeout`.
    /// Blocks: call from a thread of its own, never from the cooperative pool.
    package func stop(timeout: Double = 10) {
        guard let t = task.withLock({ t -> Task<Void, Never>? in let x = t; t = nil; return x }) else { return }
        t.cancel()
        if ended.wait(timeout: .now() + timeout) == .timedOut {
            logger.warning("uplink: still pushing \(Int(timeout)) s after the stop; leaving it (the server rolls the open batch back)")
        }
    }

    private func loop() async {
        var backoff = settings.backoff
        var failing = false
        var connection: PostgresConnection?
        defer { if let c = connection { Task { await ServerDeadline.close(c) } } }
        while !Task.isCancelled {
            do {
                if connection == nil || connection?.isClosed == true { connection = try await pusher.connect() }
                guard let c = connection else { continue }
                let r = try await pusher.push(on: c)
                if failing {
                    logger.notice("uplink: \(settings.url.display) reachable again; caught up (\(r.samples) samples, \(r.quantities) series quantities, \(r.deletions) deletions sent)")
                } else if r.batches > 0 {
                    logger.debug("uplink: sent \(r.samples) samples, \(r.quantities) series quantities, \(r.deletions) deletions in \(r.batches) batches")
                }
                failing = false
                backoff = settings.backoff
                try? await Task.sleep(for: settings.interval)
            } catch {
                if let c = connection {
                    await ServerDeadline.close(c)
                    connection = nil
                }
                if Task.isCancelled { break }
                let (store, gateway, server) = (pusher.store, settings.gateway, settings.url.display)
                let lag = await onOwnThread { (try? UplinkStatus.all(in: store))?.first { $0.gateway == gateway && $0.server == server } }
                let behind = lag.map { ", \($0.behind) changes behind" + ($0.secondsBehind.map { String(format: " (%.0f s)", $0) } ?? "") } ?? ""
                logger.warning("uplink: \(error)\(behind); next try in \(backoff)")
                failing = true
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, settings.maxBackoff)
            }
        }
    }
}
