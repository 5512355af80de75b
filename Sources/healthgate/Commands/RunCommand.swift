import ArgumentParser
import BluetoothLinux
import Daemon
import Foundation
import Gateway
import HealthGateConfiguration
import Logging
import Systemd

/// `healthgate run`: the daemon.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the gateway: keep configured straps connected, open pedometers as they appear, ingest until stopped.",
        discussion: """
            Reads a TOML configuration (samples/healthgate.toml documents every key): the straps \
            to keep connected, the pedometer match rules, the database path, batch and ring sizes. \
            Straps reconnect with backoff and get notifications re-enabled after every reconnect; \
            pedometers are opened when they appear and released when they vanish. From each strap \
            it stores what `live` stores (heart rate with contact, body sensor location and RR \
            intervals, energy expended, and per gap-free minute SDNN and RMSSD after artefact \
            correction) and keeps `healthgate devices` current (battery, \
            last seen). A strap given by `socket = "/path"` instead of `address` is reached over a Unix-domain socket that \
            carries its ATT channel (a BLE proxy, a remote radio, or `healthgate simulate` for \
            exercising the daemon without hardware; docs/simulation.md).

            systemd: with Type=notify the daemon reports readiness, pings the watchdog (at half \
            of WatchdogSec) and keeps STATUS= current ("N/M straps subscribed, K pedometer(s) \
            open; …"). Logs go to stderr, one line per event; under systemd each line carries its \
            syslog priority for journald. SIGTERM or SIGINT stops the sources, commits everything held \
            and exits 0. A SIGKILL or power cut loses at most the samples of one flush window \
            (docs/ingestion.md); the database stays sound.

            One daemon per store: run holds a lock on <db>.daemon while it lives, so `healthgate \
            live` shows the daemon's readings instead of competing for the straps, and a second \
            run on the same database is refused.

            With an [http] table it also serves the HTTP API of `healthgate serve` (with TLS when \
            certificate and key are given), plus the daemon's device states, device events on \
            /v1/live and its pipeline counters on /metrics (docs/http-api.md). With \
            [uplink.postgres] it pushes every committed change to a central PostgreSQL database \
            (docs/uplink.md); with [uplink.mqtt] it publishes live values and device states, with \
            Home Assistant discovery, to an MQTT broker (docs/mqtt.md).

            Exit codes: 0 stopped cleanly, 78 configuration error (the message names file and \
            line), 74 the store could not be opened or written at shutdown, 75 another run already \
            owns the database.

            Examples:
              healthgate run --config /etc/healthgate/healthgate.toml
              healthgate run --config samples/healthgate.toml --db /tmp/health.sqlite
              healthgate simulate --straps 10 --pedometers 4 --config-out sim.toml &
              healthgate run --config sim.toml --db /tmp/sim.sqlite
            """)

    @Option(help: ArgumentHelp("The configuration file.", valueName: "file"))
    var config: String = "/etc/healthgate/healthgate.toml"

    @OptionGroup var store: StoreLocation

    @Option(help: "The local Bluetooth adapter (hci0); default: the kernel's choice.")
    var adapter: String?

    func run() throws {
        let cfg = try GatewayConfig.load(path: config)
        let logger = Logger.daemon()
        let adapterChoice = try adapter.map { name -> Adapter in
            do { return try Adapter.resolve(name) } catch { throw CLIFailure("\(error)", code: .unavailable) }
        }
        // --db (or $HEALTHGATE_DB) wins over the file.
        try DaemonRun.run(cfg, file: config, storePath: DefaultPaths.database(given: store.db, configured: cfg.databasePath),
                          adapter: adapterChoice, logger: logger)
    }
}

