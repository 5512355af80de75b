import ArgumentParser
import Foundation
import HealthModel
import HealthStore

/// `healthgate sources`: the sources that wrote samples, in priority order.
struct SourcesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sources",
        abstract: "List sources in priority order, or change a source's priority.",
        discussion: """
            When samples from several sources overlap in time, statistics use the source ranked highest \
            (rank 1). New sources are ranked by kind: manual entry first, then HealthGate's own capture \
            sources, then other sources, a newly seen one above the older ones. 'sources priority' moves \
            a source to another rank.

            Examples:
              healthgate sources --type stepCount
              healthgate sources priority iPhone 1
            """,
        subcommands: [List.self, Priority.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List sources, highest priority first, with sample counts.")

        @OptionGroup var store: StoreLocation

        @Option(help: "Only sources with samples of this type (counts only those).")
        var type: String?

        @Flag(help: "Print a JSON array.")
        var json = false

        func run() throws {
            let db = try store.openForReading()
            let list = try db.sources(type: try type.map(InputValues.type))
            // Each source's devices with sample counts (change-feed helper, issue 7).
            let devices = try db.devicesBySource(type: try type.map(InputValues.type))
            if json {
                try JSONOutput.emit(list.map { $0.jsonObject(devices: devices[$0.source.identifier] ?? []) })
                return
            }
            if list.isEmpty { print("no sources yet"); return }
            Table.print(["RANK", "NAME", "IDENTIFIER", "SAMPLES", "FIRST", "LAST", "DEVICES"], list.map {
                [String($0.rank), $0.source.name, $0.source.identifier, String($0.sampleCount),
                 $0.firstSample.map(ISO8601.string) ?? "-", $0.lastSample.map(ISO8601.string) ?? "-",
                 SourceDeviceOutput.text(devices[$0.source.identifier] ?? [])]
            })
        }
    }

    struct Priority: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "priority", abstract: "Move a source to a rank (1 = highest priority).",
            discussion: "Example: healthgate sources priority \"Manual entry\" 1")

        @OptionGroup var store: StoreLocation

        @Argument(help: "The source's name or identifier.")
        var source: String

        @Argument(help: "The new rank (1 = highest; 0 and below are refused); a rank past the end moves it to the bottom.")
        var rank: Int

        func validate() throws {
            if rank < 1 {
                throw Self.exit(for: CLIFailure("rank \(rank) is not a rank: ranks start at 1 (the highest priority); a rank past the end moves the source to the bottom.",
                                                code: .usage))
            }
        }

        func run() throws {
            let db = try store.open()
            try db.setPriority(source: source, rank: rank)
            let list = try db.sources()
            Table.print(["RANK", "NAME", "IDENTIFIER"], list.map { [String($0.rank), $0.source.name, $0.source.identifier] })
        }
    }
}
