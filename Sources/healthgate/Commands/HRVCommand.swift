import ArgumentParser
import Foundation
import HealthModel
import HealthStore
import HeartRateVariability

/// `healthgate hrv`: heart-rate variability from stored RR intervals, per window.
struct HRVCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrv",
        abstract: "Heart-rate variability (SDNN, RMSSD, pNN50) from stored RR intervals, artefacts corrected.",
        discussion: """
            Per device and per --window length (60 s and 5 min unless given; windows aligned to the clock in UTC), \
            then over the whole range. Beats come from the \
            RR intervals as the strap sent them (1/1024 s), split where the store marked a gap; ectopic, missed, extra \
            and long/short beats are found and corrected by Lipponen & Tarvainen (2019) and counted. SDNN divides by \
            n − 1, RMSSD by the successive differences within gap-free runs, pNN50 by the intervals (Task Force 1996). \
            A window gives no value, and says why, when its intervals cover less than half of it or more than \
            --max-artefacts percent of its beats were corrected (docs/hrv.md).

            Examples:
              healthgate hrv --from 2026-11-05T08:00 --to 2026-11-05T09:00
              healthgate hrv --from 2026-11-05 --window 1m --device "Polar H10" --json
            """)

    @OptionGroup var store: StoreLocation
    @Option(help: ArgumentHelp("Range start (ISO 8601; without Z or an offset local time, a bare date local midnight; default: 24 h before --to).", valueName: "date")) var from: String?
    @Option(help: ArgumentHelp("Range end, exclusive (default: now). At most 31 days after --from.", valueName: "date")) var to: String?
    @Option(help: ArgumentHelp("Only this device (name, local identifier or alias).", valueName: "name")) var device: String?
    @Option(help: ArgumentHelp("Window lengths, comma-separated: 60s, 5m, 1h (default 60s,5m).", valueName: "durations")) var window = "60s,5m"
    @Option(help: ArgumentHelp("The largest share of corrected beats a window may have, in percent (0 to 100).", valueName: "percent"))
    var maxArtefacts = 10.0
    @Flag(help: "Store each window's SDNN and RMSSD (heartRateVariabilitySDNN, heartRateVariabilityRMSSD); computing a window again replaces them.")
    var save = false
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let lengths = try window.split(separator: ",", omittingEmptySubsequences: false).map { try InputValues.seconds($0.trimmingCharacters(in: .whitespaces), option: "--window") }
        guard !lengths.isEmpty else { throw CLIFailure("--window needs at least one length, such as 5m.", code: .usage) }
        let (from, to) = (try from.map { try InputValues.date($0, option: "--from", timeZone: nil) }, try to.map { try InputValues.date($0, option: "--to", timeZone: nil) })
        let now = Date(), db = try store.openForReading()
        let reports = try Set(lengths).sorted().map { try HRVReport(store: db, from: from, to: to ?? now, device: device, window: $0, maxArtefacts: maxArtefacts) }
        if save {
            let samples = try reports.flatMap { try $0.samples(computedAt: now) }
            let saved = try store.open().save(samples)
            Console.note("stored \(samples.count / 2) window(s) as SDNN and RMSSD samples (\(saved.inserted) new, \(saved.replaced) replaced)")
        }
        if json { return try JSONOutput.emit(reports.flatMap(\.json)) }
        if reports.allSatisfy(\.devices.isEmpty) { return print("no RR intervals in the range (a strap sends them only while worn, and not every strap does)") }
        for report in reports {
          for d in report.devices {
            print("\(d.device), \(HRVReport.lengthText(report.window)) windows:")
            Table.print(["START", "INTERVALS", "CORRECTED", "MEAN NN (ms)", "SDNN (ms)", "RMSSD (ms)", "pNN50 (%)", "NOTE"], d.rows.map { start, w in
                [start.map { Table.time($0, in: .current) } ?? "whole range", "\(w.intervals)", "\(w.corrected)", Table.number(w.measures?.meanNN),
                 Table.number(w.measures?.sdnn), Table.number(w.measures?.rmssd), Table.number(w.measures?.pnn50), w.refusal ?? ""]
            })
          }
        }
    }
}
