import AccessTokens
import ArgumentParser
import Foundation
import HealthModel
import HealthStore

/// `healthgate token create|list|revoke`: the HTTP API's bearer tokens (docs/http-api.md).
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Create, list and revoke the bearer tokens of the HTTP API ('healthgate serve').",
        discussion: """
            A token may read some types and write others, as an app may in HealthKit: a token \
            that may not read a type sees no data of it (exactly what an empty store shows), a \
            write of a type it may not write is refused (403). --admin adds /metrics and token \
            management; --metrics adds /metrics alone. The secret is printed once, by create: \
            the store keeps only its SHA-256 digest. See docs/http-api.md.

            Examples:
              healthgate token create --name coach --read heartRate,stepCount --write stepCount --expires 30d
              healthgate token list --json
              healthgate token revoke coach
            """,
        subcommands: [Create.self, List.self, Revoke.self])

    /// `healthgate token create`.
    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Create a token and print its secret (only this once).",
            discussion: """
                --read and --write take comma-separated type identifiers ('healthgate types'), or \
                'all'. Leaving one out grants nothing of that kind. With --json: {"name", "token", \
                "read", "write", "admin", "metrics", "created", "expires"}.

                Example:
                  healthgate token create --name coach --read heartRate,stepCount --write stepCount --expires 30d
                """)

        @OptionGroup var store: StoreLocation

        @Option(help: ArgumentHelp("A name for the token: 1–64 letters, digits, '.', '_', '-'.", valueName: "name"))
        var name: String

        @Option(help: ArgumentHelp("Types it may read, comma-separated, or 'all'.", valueName: "types"))
        var read: String = ""

        @Option(help: ArgumentHelp("Types it may write and delete, comma-separated, or 'all'.", valueName: "types"))
        var write: String = ""

        @Option(help: ArgumentHelp("Expire after this long (30d, 12h, 2w…; default: never).", valueName: "duration"))
        var expires: String?

        @Flag(help: "May read /metrics and manage tokens.")
        var admin = false

        @Flag(help: "May read /metrics.")
        var metrics = false

        @Flag(help: "Print JSON.")
        var json = false

        func run() throws {
            // An empty list grants nothing of that kind; 'all' grants every type.
            let scopes = TokenScopes(read: try TokenScopes.parseTypes(read, option: "--read"),
                                     write: try TokenScopes.parseTypes(write, option: "--write"),
                                     admin: admin, metrics: metrics)
            guard AccessTokenRegistry.isValidName(name) else { throw TokenError.badName(name) }
            let lifetime = try expires.map { try InputValues.seconds($0, option: "--expires") }
            let now = Date()
            let made = try AccessTokenRegistry(store: store.open())
                .create(name: name, scopes: scopes, expires: lifetime.map { now.addingTimeInterval($0) }, now: now)
            if json {
                var o = made.info.jsonObject
                o["token"] = made.token
                try JSONOutput.emit(o)
                return
            }
            print(made.token)
            Console.note("Token '\(name)' created: \(made.info.summary). Keep the line above secret; it is not shown again (the store keeps only its digest).")
        }
    }

    /// `healthgate token list`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List tokens: name, scopes, created, expires (never the secret).")

        @OptionGroup var store: StoreLocation

        @Flag(help: "Print a JSON array.")
        var json = false

        func run() throws {
            let list = try AccessTokenRegistry(store: store.openForReading()).list()
            if json { try JSONOutput.emit(list.map(\.jsonObject)); return }
            if list.isEmpty { print("no tokens yet: 'healthgate token create --name NAME --read TYPES' makes one"); return }
            let now = Date()
            Table.print(["NAME", "READ", "WRITE", "ADMIN", "METRICS", "CREATED", "EXPIRES"], list.map { t in
                [t.name, TokenScopes.text(t.scopes.read).joined(separator: ","), TokenScopes.text(t.scopes.write).joined(separator: ","),
                 t.scopes.admin ? "yes" : "no", t.scopes.metrics ? "yes" : "no", ISO8601.string(t.created),
                 t.expires.map { ISO8601.string($0) + (t.isExpired(at: now) ? " (expired)" : "") } ?? "never"]
            })
        }
    }

    /// `healthgate token revoke NAME`.
    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke", abstract: "Revoke a token: it stops working at once, also for a running 'serve'.")

        @OptionGroup var store: StoreLocation

        @Argument(help: ArgumentHelp("The token's name ('token list' shows them).", valueName: "name"))
        var name: String

        func run() throws {
            try AccessTokenRegistry(store: store.open()).revoke(name: name)
            print("revoked token '\(name)'")
        }
    }
}
