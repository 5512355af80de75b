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

    @Option(help: "Sort by start or end (date).")
    var sort: SortOption = .start

    @Flag(help: "Newest first.")
    var desc = false

    // .unconditional: `--limit -1` reaches the range check below (a sentence, exit 64)
    // instead of being taken for an option.
    @Option(parsing: .unconditional, help: "At most this many samples (1 or more).")
    var limit: Int?

    @Option(help: ArgumentHelp("Show the table's times in this time zone, and read a bare --from/--to date as its midnight (IANA name in any case, e.g. Europe/Berlin; default: the system's zone, TZ). JSON stays UTC.", valueName: "zone"))
    var tz: String?

    @Flag(help: "Only the most recent sample (latest end).")
    var mostRecent = false

    @Option(help: "Show values in this unit (needs --type).")
    var unit: String?

    @Flag(help: "Print a JSON array.")
    var json = false

    func run() throws {
        if let limit, limit < 1 {
            throw CLIFailure("--limit \(limit) is not a count of samples: use 1 or more (or leave it out for all).", code: .usage)
        }
        let zone = try InputValues.timeZone(tz)
        var q = try filters.query(timeZone: zone)
        q.sortBy = sort.key
        q.ascending = !desc
        q.limit = limit
        if mostRecent { q.sortBy = .endDate; q.ascending = false; q.limit = 1 }
        let unit = try InputValues.unit(self.unit, forQueryType: q.type)
        let samples = try store.openForReading().samples(q)
        if let unit, let bad = try samples.first(where: { !(try $0.quantity.doubleValue(for: unit)).isFinite }) {
            // Only values stored before plausible ranges existed can do this.
            throw CLIFailure("sample \(bad.uuid.uuidString.lowercased()) (\(bad.quantity)) overflows a 64-bit number in \(unit): leave out --unit to see it, and delete it if it is not real.",
                             code: .dataError)
        }
        if json {
            try JSONOutput.emit(try samples.map { try SampleJSON.object($0, unit: unit) })
            return
        }
        if samples.isEmpty { print("no samples match"); return }
        Table.print(["START", "END", "TYPE", "VALUE", "UNIT", "SOURCE", "DEVICE", "UUID"], try samples.map { s in
            let u = unit ?? s.type.canonicalUnit
            return [Table.time(s.startDate, in: zone ?? .current), Table.time(s.endDate, in: zone ?? .current), s.type.identifier,
                    Table.number(try s.quantity.doubleValue(for: u)), u.unitString, s.source.name,
                    s.device?.name ?? s.device?.localIdentifier ?? "-", s.uuid.uuidString.lowercased()]
        })
    }
}

/// `--sort` values. Its own enum (not ``SampleQuery/SortKey``) so that the help's default
/// and value list use the names the option takes: start, end.
enum SortOption: String, CaseIterable, ExpressibleByArgument {
    case start, end

    init?(argument: String) {
        switch argument.lowercased() {
        case "start", "startdate": self = .start
        case "end", "enddate": self = .end
        default: return nil
        }
    }

    var key: SampleQuery.SortKey { self == .start ? .startDate : .endDate }
}
