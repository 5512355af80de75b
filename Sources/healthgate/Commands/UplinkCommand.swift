import ArgumentParser
import Foundation
import HealthGateConfiguration
import HealthModel
import HealthStore
import Platform
import Sysexits
import Uplink

/// `healthgate uplink`: the PostgreSQL fleet uplink (issue 14, docs/uplink.md).
struct UplinkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uplink",
        abstract: "Send the store's samples to a central PostgreSQL database, exactly once.",
        discussion: """
            Every gateway keeps its own SQLite store; the uplink copies it, change by change, into \
            schema healthgate of one PostgreSQL database that many gateways share (each under its own \
            gateway name). `run` does it continuously when its configuration has [uplink.postgres]; \
            `uplink push` does it once and exits (scripts, a backfill). See docs/uplink.md.
            """,
        subcommands: [UplinkPushCommand.self, UplinkStatusCommand.self])
}

/// `healthgate uplink push`.
struct UplinkPushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Push everything the store has committed to PostgreSQL, then exit.",
        discussion: """
            Creates or migrates schema healthgate on the server, then sends the store's change feed \
            from where the server left off, in batches: each batch is one server transaction that \
            also records how far it got, and the store records that anchor only after the server \
            committed. Interrupt it, kill it or stop the server at any moment and push again: every \
            sample ends up on the server exactly once. Deleted samples are deleted there too.

            URL: postgres://USER:PASSWORD@HOST:5432/DATABASE[?sslmode=disable|prefer|require|verify-full], \
            or postgres://USER@/DATABASE?host=/run/postgresql for a Unix socket; the password may \
            come from PGPASSWORD instead.

            Exit codes: 0 pushed, 64 bad URL or option, 66 no store, 69 server unreachable or the \
            connection lost (push again), 75 a transient server failure, 77 login or permission \
            refused, 78 no such database / gateway name used by another store / schema newer than \
            this healthgate.

            Example:
              healthgate uplink push --db /var/lib/healthgate/health.sqlite \\
                  --url postgres://pi@fleet.example/health --gateway ward-3
            """)

    @OptionGroup var store: StoreLocation

    @Option(help: ArgumentHelp("The PostgreSQL server (libpq-style URL).", valueName: "url"))
    var url: String

    @Option(help: ArgumentHelp("This gateway's name on the server (default: the host name).", valueName: "name"))
    var gateway: String?

    @Option(help: ArgumentHelp("Changes per server transaction: samples, series quantities and deletions each count one, so this also bounds the push's memory.", valueName: "n"))
    var batchSize = UplinkPusher.defaultBatchSize

    @Flag(help: "Print the result as JSON.")
    var json = false

    /// One line on the terminal, rewritten in place.
    @Sendable static func showProgress(_ p: UplinkPusher.Progress) {
        let line = "\r\u{1B}[Ksent \(p.sent) changes, about \(p.remaining) to go"
        FileHandle.standardError.write(Data(line.utf8))
    }

    func run() async throws {
        let target = try UplinkURL(url)
        let path = store.path
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIFailure("no store at \(path): there is nothing to push; pass --db with the gateway's store.", code: .noInput)
        }
        // Opening may migrate the store: not on a cooperative thread.
        let health = try await onOwnThread { try HealthStore(path: path, mode: .readWrite) }
        let pusher = try UplinkPusher(store: health, url: target, gateway: gateway ?? GatewayConfig.defaultGatewayName(),
                                      batchSize: batchSize)
        let onTerminal = isatty(STDERR_FILENO) == 1 && !json
        let report = try await pusher.push(progress: onTerminal ? Self.showProgress : nil)
        if onTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        if json {
            try JSONOutput.emit(report.jsonObject(gateway: pusher.gateway, server: target.display))
        } else {
            let what = report.batches == 0 ? "nothing new" :
                "\(report.samples) samples, \(report.quantities) series quantities, \(report.deletions) deletions in \(report.batches) batches"
            print("pushed \(what) to \(target.display) as gateway \(pusher.gateway)\(report.fullSync ? " (full sync)" : "")")
            print("anchor: \(report.anchor)")
        }
    }
}

/// `healthgate uplink status`.
struct UplinkStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show each uplink's anchor, how far it is behind, and its last error.",
        discussion: """
            Reads only the store (no server is contacted): for every server and gateway name the \
            store was pushed to, the anchor the server last committed, the changes committed \
            locally since (samples, series growths, deletions), the seconds since it was last \
            caught up, and the last push's error if it failed. --config reads the store's path \
            from run's configuration ([store] path; --db still wins).

            Examples:
              healthgate uplink status --config /etc/healthgate/healthgate.toml
              healthgate uplink status --db /var/lib/healthgate/health.sqlite --json
            """)

    @OptionGroup var store: StoreLocation

    @Option(help: ArgumentHelp("run's configuration file, for the store's path.", valueName: "file"))
    var config: String?

    @Flag(help: "Print JSON: an array of objects {gateway, server, anchor, behind, secondsBehind, lastPush, lastError, lastErrorAt}.")
    var json = false

    func run() throws {
        var path = store.path
        if let config {
            path = DefaultPaths.database(given: store.db, configured: try GatewayConfig.load(path: config).databasePath)
        }
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIFailure("no store at \(path): nothing has been pushed from it; pass --db or --config with the gateway's store.", code: .noInput)
        }
        let statuses = try UplinkStatus.all(in: try HealthStore(path: path, mode: .readOnly))
        if json {
            try JSONOutput.emit(statuses.map(\.jsonObject))
            return
        }
        if statuses.isEmpty { print("no uplink has pushed from this store yet ('healthgate uplink push' or [uplink.postgres] in run's configuration)") }
        statuses.flatMap(\.lines).forEach { print($0) }
    }
}
