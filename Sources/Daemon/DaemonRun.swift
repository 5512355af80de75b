import BluetoothLinux
import Gateway
import HealthGateConfiguration
import HealthStore
import Ingest
import Logging
import MQTTUplink
import Sysexits
import Uplink

/// `healthgate run` composed from its configuration file, the one composition root of the
/// daemon: the gateway (``Gateway/GatewayDaemon``: sources, ingest pipeline, store) plus the
/// services the file asks for — the HTTP API for `[http]` (``DaemonHTTP``), the PostgreSQL
/// uplink for `[uplink.postgres]` (``Uplink/UplinkDaemon``), Home Assistant over MQTT for
/// `[uplink.mqtt]` (``MQTTUplink/HomeAssistantPublisher``).
package enum DaemonRun {
    /// Runs the gateway of `config` (read from `file`, which messages name) over the store at
    /// `path` until SIGINT or SIGTERM, then stops the services and commits what is held.
    ///
    /// While it runs it holds the store's daemon lock (``Gateway/DaemonLock``): `live` then
    /// follows the daemon's readings, and a second `run` on the store is refused.
    /// - Throws: the store's, the lock's and each service's setup errors (their sysexits codes:
    ///   75 when another `run` owns the store, 78 for a setting that cannot be served), and a
    ///   ``Sysexits/CLIFailure`` (74) when samples could not be committed at shutdown.
    package static func run(_ config: GatewayConfig, file: String, storePath path: String, adapter: Adapter?,
                            logger: Logger) throws {
        let db = WritingStores.opened(try HealthStore(path: path))
        // Tells `live` (and a second `run`) that this process owns the straps and the store;
        // the kernel releases it when the process ends, however it ends.
        let daemonLock = try DaemonLock.acquire(databasePath: path, straps: config.straps.compactMap(\.address))
        defer { withExtendedLifetime(daemonLock) {} }
        let daemon = try GatewayDaemon(config: config, store: db, adapter: adapter, logger: logger)
        let http = try config.http.map { try DaemonHTTP.serve($0, file: file, store: db, daemon: daemon, logger: logger) }
        defer { http?.stop() }
        let uplink = try config.uplinkPostgres.map { try UplinkDaemon(settings: .init($0, file: file), storePath: path, logger: logger) }
        if let uplink { daemon.addStatusNote { uplink.statusNote() } }
        uplink?.start()
        defer { uplink?.stop() }
        let mqtt = try config.uplinkMQTT.map {
            try HomeAssistantPublisher(settings: .init($0, file: file), storePath: path, daemon: daemon, logger: logger)
        }
        if let mqtt { daemon.addStatusNote { mqtt.statusNote() } }
        mqtt?.start()
        defer { mqtt?.stop() }
        logger.notice("healthgate run: \(config.straps.count) strap(s), \(config.pedometers.count) pedometer rule(s), store \(path), batches of \(config.ingest.batchSize) or \(config.ingest.flushInterval)")
        if let failure = try daemon.run().abandonedFailure(check: path) { throw failure }
    }
}
