import ArgumentParser
import Foundation
import HealthModel
import HealthStore

/// `healthgate stats`: statistics over a range, or per bucket.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Statistics for one type: sums, averages, minimum, maximum, most recent — merged across sources.",
        discussion: """
            Options: discreteAverage, discreteMin, discreteMax, mostRecent for discrete types (heartRate, …); \
            cumulativeSum and mostRecent for cumulative ones (stepCount, …). Default: the average, min and \
            max, or the sum. Mixing the two kinds is an error, as in HealthKit.

            Where sources overlap in time, the higher-priority source wins and nothing is counted twice \
            ('healthgate sources' shows and sets the order); --separate-by-source adds each source's own \
            numbers. Without --from/--to the whole history counts; with them, only the part of each sample \
            inside the range, which is [--from, --to): --to must be after --from. --interval 30min|1h|1d|1w|1mo \
            splits the range into buckets from --anchor (default: midnight in --tz of the range start, for 1mo the \
            first of its month); days, \
            weeks and months follow the calendar in --tz, so a DST day is 23 or 25 hours. A sample spanning a \
            bucket edge is shared by time; an instant on an edge belongs to the later bucket; without --to \
            the buckets reach the latest sample (docs/queries.md). Tables show times in --tz.

            JSON: one object with the requested keys of sum, average, min, max, mostRecent, plus unit (and \
            sources with --separate-by-source); with --interval an array of such objects with start and end \
            (ISO 8601 UTC). A number that would overflow (implausible stored values) exits 65, never inf.

            Examples:
              healthgate stats --type heartRate --option discreteAverage,discreteMin,discreteMax --json
              healthgate stats --type stepCount --from 2026-10-26 --to 2026-11-02 --interval 1d --tz Europe/Berlin
              healthgate stats --type stepCount --interval 1h --follow    # then each changed bucket as it changes
            """)

    @OptionGroup var store: StoreLocation

    @Option(help: "The quantity type.")
    var type: String

    @Option(name: [.customLong("option"), .customLong("options")], parsing: .singleValue, help: ArgumentHelp(
        "Statistics to compute, comma-separated (repeatable).", valueName: "list"))
    var option: [String] = []

    @Option(help: ArgumentHelp("Range start (ISO 8601; without Z or an offset it is local time in --tz, a bare date midnight there).", valueName: "date"))
    var from: String?

    @Option(help: ArgumentHelp("Range end, exclusive.", valueName: "date"))
    var to: String?

    @Option(help: ArgumentHelp("Bucket length: 30min (or 30m), 1h, 1d, 1w, 1mo: a positive count up to 100 years; 1M is refused as ambiguous.", valueName: "interval"))
    var interval: String?

    @Option(help: ArgumentHelp("Where buckets are counted from (ISO 8601, read as --from).", valueName: "date"))
    var anchor: String?

    @Option(help: ArgumentHelp("Time zone for day, week and month buckets, bare dates and the table's times (IANA name in any case, e.g. Europe/Berlin or utc; default: the system's).", valueName: "zone"))
    var tz: String?

    @Flag(help: "Add per-source results.")
    var separateBySource = false

    @Option(help: ArgumentHelp("Only samples from this device (name, local identifier or alias).", valueName: "name"))
    var device: String?

    @Option(help: ArgumentHelp("Only samples from this source.", valueName: "name"))
    var source: String?

    @Option(help: "Report values in this unit (must fit the type).")
    var unit: String?

    @Flag(help: "Print JSON.")
    var json = false

    @Flag(help: "With --interval: keep running and print each bucket again when new samples change it (Ctrl-C stops).")
    var follow = false

    func run() throws {
        let request = StatisticsRequest(type: try InputValues.type(type), options: option.joined(separator: ","), from: from, to: to,
                                        interval: interval, anchor: anchor, timeZone: tz, unit: unit,
                                        separateBySource: separateBySource, device: device, source: source)
        // Mistakes in the command line are reported before the store is opened (a missing
        // store would otherwise hide them behind exit 66).
        let plan = try request.plan(names: .commandLine, defaultZone: .current)
        let (query, options, outUnit, iv) = (plan.query, plan.query.options, plan.unit, plan.interval)
        if follow && iv == nil {
            throw CLIFailure("--follow needs --interval: it reprints the buckets a new sample changes.", code: .usage)
        }
        let db = try store.openForReading()
        if let iv {
            // --follow (change feed, HealthStore's StatisticsFollower): start observing before the first computation.
            let follower = follow ? try StatisticsFollower(path: store.path, type: request.type) : nil
            let compute = {
                try db.statisticsCollection(query, interval: iv, anchor: plan.anchor, timeZone: plan.timeZone)
                    .map { try $0.converted(to: outUnit) }
            }
            let show = { (buckets: [Statistics]) in
                if json {
                    // A stream (--follow prints again on each change): a line that is not JSON fails the command at its end.
                    // The shape GET /v1/statistics answers too (StatisticsJSON.swift).
                    JSONOutput.event(buckets.map { $0.bucketJSONObject(options: options, unit: outUnit) })
                } else {
                    printBuckets(buckets, options: options, unit: outUnit, zone: plan.timeZone)
                }
            }
            let buckets = try compute()
            show(buckets)
            try follower?.run(initial: buckets, compute: compute, show: show)
        } else {
            let st = try db.statistics(query).converted(to: outUnit)
            if json {
                try JSONOutput.emit(st.jsonObject(options: options, unit: outUnit))
            } else {
                printSingle(st, options: options, unit: outUnit)
            }
        }
    }

    func columns(_ options: StatisticsOptions) -> [(String, (StatisticValues) -> Double?)] {
        var c: [(String, (StatisticValues) -> Double?)] = []
        if options.contains(.cumulativeSum) { c.append(("SUM", { $0.sum })) }
        if options.contains(.discreteAverage) { c.append(("AVERAGE", { $0.average })) }
        if options.contains(.discreteMin) { c.append(("MIN", { $0.minimum })) }
        if options.contains(.discreteMax) { c.append(("MAX", { $0.maximum })) }
        if options.contains(.mostRecent) { c.append(("MOST RECENT", { $0.mostRecent })) }
        return c
    }

    func printSingle(_ st: Statistics, options: StatisticsOptions, unit: HealthUnit) {
        let cols = columns(options)
        var rows = [["all sources (merged)"] + cols.map { Table.number($0.1(st.values)) } + [String(st.values.sampleCount)]]
        for s in st.sources ?? [] {
            rows.append(["#\(s.rank) \(s.source.name)"] + cols.map { Table.number($0.1(s.values)) } + [String(s.values.sampleCount)])
        }
        print("\(st.type.identifier) in \(unit)")
        Table.print(["SOURCE"] + cols.map(\.0) + ["SAMPLES"], rows)
    }

    /// Bucket times are shown in `zone` with their offset (`2026-11-03T00:00:00+01:00`), so a
    /// day bucket reads as the local day it is; JSON keeps UTC.
    func printBuckets(_ buckets: [Statistics], options: StatisticsOptions, unit: HealthUnit, zone: TimeZone) {
        let cols = columns(options)
        var rows: [[String]] = []
        let time = { (d: Date) in Table.time(d, in: zone) }
        for b in buckets {
            let span = (b.start.map(time) ?? "-") + " … " + (b.end.map(time) ?? "-")
            rows.append([span, "merged"] + cols.map { Table.number($0.1(b.values)) })
            for s in b.sources ?? [] {
                rows.append(["", s.source.name] + cols.map { Table.number($0.1(s.values)) })
            }
        }
        print("\(buckets.first?.type.identifier ?? type) in \(unit)")
        if rows.isEmpty { print("no samples match"); return }
        Table.print(["BUCKET", "SOURCE"] + cols.map(\.0), rows)
    }
}
