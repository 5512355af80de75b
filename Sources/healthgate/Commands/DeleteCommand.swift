import ArgumentParser
import Foundation
import HealthModel
import HealthStore

/// `healthgate delete`.
struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete samples by UUID or by filter.",
        discussion: """
            Every deleted sample leaves a tombstone (its UUID and type) so change feeds can report the \
            deletion. On a terminal the command shows how many samples match and asks before deleting, \
            unless --yes. Off a terminal, --uuid deletes at once, and a filter delete needs --yes.

            Examples:
              healthgate delete --uuid 019a4a5c-…
              healthgate delete --type heartRate --source "Old strap" --from 2026-11-01 --to 2026-11-02 --yes
            """)

    @OptionGroup var store: StoreLocation
    @OptionGroup var filters: SampleFilterOptions

    @Option(help: ArgumentHelp("Delete the sample with this UUID (repeatable).", valueName: "uuid"))
    var uuid: [String] = []

    @Flag(help: "Do not ask for confirmation.")
    var yes = false

    @Flag(help: "Print {\"deleted\": N} as JSON.")
    var json = false

    func run() throws {
        guard !uuid.isEmpty || !filters.isEmpty else {
            throw CLIFailure("say what to delete: --uuid U, or --type T and/or other filters (see --help).", code: .usage)
        }
        let db = try store.open()
        var q = try filters.query()
        if !uuid.isEmpty {
            q.uuids = try uuid.map { text in
                guard let u = UUID(uuidString: text) else {
                    throw CLIFailure("--uuid '\(text)' is not a UUID.", code: .usage)
                }
                return u
            }
        }
        // Everything that goes: a series of which the filter selects a quantity goes whole.
        let n = try db.deletionCount(matching: q)
        if n == 0 {
            if json { try JSONOutput.emit(["deleted": 0]) } else { print("no samples match; nothing deleted") }
            return
        }
        if !yes {
            if Confirm.isTerminal {
                guard Confirm.ask("Delete \(n) sample(s)\(filters.type.map { " of \($0)" } ?? "")?") else {
                    print("nothing deleted")
                    return
                }
            } else if uuid.isEmpty {
                throw CLIFailure("refusing to delete \(n) sample(s) without confirmation: stdin is not a terminal; pass --yes.",
                                 code: .usage)
            }
        }
        let deleted = try db.delete(matching: q)
        if json { try JSONOutput.emit(["deleted": deleted]) } else { print("deleted \(deleted) sample(s)") }
    }
}
