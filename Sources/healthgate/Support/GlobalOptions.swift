import ArgumentParser
import HealthGateConfiguration

/// Options every store-touching command takes: where the database is.
struct StoreLocation: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The health store's SQLite file.",
        discussion: "Defaults to $HEALTHGATE_DB, else $XDG_DATA_HOME/healthgate/health.sqlite (~/.local/share/… when XDG_DATA_HOME is unset).",
        valueName: "path"))
    var db: String?

    /// The database path: `--db`, else `$HEALTHGATE_DB`, else the XDG default (``DefaultPaths``).
    var path: String { DefaultPaths.database(given: db) }
}
