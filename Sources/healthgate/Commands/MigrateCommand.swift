import ArgumentParser
import Foundation
import HealthStore

/// `healthgate migrate`: create the store, or bring its schema up to this build's.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Create the store, or upgrade its schema to this HealthGate's, and say which.",
        discussion: """
            Every writing command (run, add, import, pair, live, …) does this on its own when it \
            opens the store; read-only commands (samples, stats, changes, devices, sources list, \
            export, watch) never do, and ask for it when the store's schema is older than theirs. \
            Run it as a user who may write the file (the service's user for a daemon's store). \
            Another application's SQLite file, a store with a newer schema or one whose schema \
            version was reset is refused and left untouched (docs/store.md).

            Output: one line (with --json: {"path", "from", "to", "created"}).

            Example:
              sudo -u healthgate healthgate migrate --db /var/lib/healthgate/health.sqlite
            """)

    @OptionGroup var store: StoreLocation

    @Flag(help: "Print a JSON object.")
    var json = false

    func run() throws {
        var before: Int?
        do { before = try HealthStore(path: store.path, mode: .readOnly).schemaVersion } catch let e as StoreError {
            if case .needsMigration(_, let found, _) = e { before = found }   // anything else: open() says it
        }
        let existed = before != nil
        let db = try store.open()
        let after = try db.schemaVersion
        if json {
            try JSONOutput.emit(["path": store.path, "from": before.map { $0 as Any } ?? NSNull(), "to": after,
                             "created": !existed] as [String: Any])
        } else if !existed {
            print("Created the health store \(store.path) at schema version \(after).")
        } else if let before, before == after {
            print("The health store \(store.path) is already at schema version \(after); nothing to do.")
        } else {
            print("Upgraded the health store \(store.path) to schema version \(after).")
        }
    }
}
