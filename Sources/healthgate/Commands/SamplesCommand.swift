import ArgumentParser
import Foundation
import HealthModel
import HealthStore

/// `healthgate samples`: list stored samples.
struct SamplesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "samples",
        abstract: "List stored samples, filtered, sorted and limited.",
        discussion: """
            By default a sample matches the range when it overlaps [--from, --to); --strict-start and \
            --strict-end narrow that to samples starting (ending) inside it. --most-recent is --sort end \
            --desc --limit 1. With --json: an array of objects with uuid, type, value, unit, start, end, \
            source, device and metadata (the shape 'healthgate import' reads).

            Example:
              healthgate samples --type heartRate --from 2026-11-02 --sort end --desc --limit 5 --unit count/s
            """)

    @OptionGroup var store: StoreLocation
    @OptionGroup var filters: SampleFilterOptions

    @Option(help: "Sort by start or end.")
    var sort: SampleQuery.SortKey = .startDate

    @Flag(help: "Newest first.")
    var desc = false

    @Option(help: "At most this many samples.")
    var limit: Int?

    @Flag(help: "Only the most recent sample (latest end).")
    var mostRecent = false

    @Option(help: "Show values in this unit (needs --type).")
    var unit: String?

    @Flag(help: "Print a JSON array.")
    var json = false

    func run() throws {
        try reporting {
            var q = try filters.query()
            q.sortBy = sort
            q.ascending = !desc
            q.limit = limit
            if mostRecent { q.sortBy = .endDate; q.ascending = false; q.limit = 1 }
            var unit: HealthUnit?
            if let text = self.unit {
                guard let type = q.type else { throw CLIFailure("--unit needs --type (units differ between types).", code: .usage) }
                unit = try CLIParse.unit(text, for: type)
            }
            let samples = try store.open().samples(q)
            if json {
                JSONOutput.emit(try samples.map { try SampleJSON.object($0, unit: unit) })
                return
            }
            if samples.isEmpty { print("no samples match"); return }
            Table.print(["START", "END", "TYPE", "VALUE", "UNIT", "SOURCE", "DEVICE", "UUID"], try samples.map { s in
                let u = unit ?? s.type.canonicalUnit
                return [ISO8601.string(s.startDate), ISO8601.string(s.endDate), s.type.identifier,
                        Table.number(try s.quantity.doubleValue(for: u)), u.unitString, s.source.name,
                        s.device?.name ?? s.device?.localIdentifier ?? "-", s.uuid.uuidString.lowercased()]
            })
        }
    }
}

extension SampleQuery.SortKey: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument.lowercased() {
        case "start", "startdate": self = .startDate
        case "end", "enddate": self = .endDate
        default: return nil
        }
    }

    public var defaultValueDescription: String { self == .startDate ? "start" : "end" }
    public static var allValueStrings: [String] { ["start", "end"] }
}
