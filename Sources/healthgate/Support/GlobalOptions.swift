import ArgumentParser
import Foundation

/// Options every store-touching command takes: where the database is.
struct StoreLocation: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The health store's SQLite file.",
        discussion: "Defaults to $HEALTHGATE_DB, else $XDG_DATA_HOME/healthgate/health.sqlite (~/.local/share/… when XDG_DATA_HOME is unset).",
        valueName: "path"))
    var db: String?

    /// The database path after applying `--db`, `$HEALTHGATE_DB` and the XDG default, in that order.
    var path: String {
        if let db { return db }
        let env = ProcessInfo.processInfo.environment
        if let p = env["HEALTHGATE_DB"], !p.isEmpty { return p }
        let dataHome = env["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((env["HOME"] ?? NSHomeDirectory()) + "/.local/share")
        return dataHome + "/healthgate/health.sqlite"
    }
}
