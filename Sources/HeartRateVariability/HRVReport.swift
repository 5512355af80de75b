import Foundation
import HealthModel
import HealthStore

/// `healthgate hrv`'s answer: per device that sent RR intervals in the range, its windows and
/// one result over the whole range (docs/hrv.md).
package struct HRVReport: Sendable {
    /// One device's results.
    package struct DeviceHRV: Sendable {
        /// The device's name (else its local identifier, else "unknown device").
        package var device: String
        /// The device as stored (nil for samples without one).
        package var stored: Device?
        /// Per window, oldest first.
        package var windows: [WindowedHRV.Window]
        /// All of the device's beats in the range as one window.
        package var overall: WindowedHRV.Window?
        /// The windows with their start, then the whole range (start nil), for a table.
        package var rows: [(start: Date?, window: WindowedHRV.Window)] {
            windows.map { (Date(timeIntervalSince1970: $0.start), $0) } + (overall.map { [(nil, $0)] } ?? [])
        }
    }

    /// Per device, by name.
    package var devices: [DeviceHRV]
    /// The windows' length, seconds.
    package var window: Double

    /// The longest range one report reads: its beats are held in memory, 8 bytes each (a day of a
    /// strap's beats is about 100,000: 31 days about 25 MB), and corrected in one pass per run.
    package static let maxRangeDays = 31.0

    /// Reads the heart-rate samples of `[from, to)` (default: the 24 hours before `to`, which
    /// defaults to now), of `device` when given, and computes windows of `window` seconds,
    /// refusing those where more than `maxArtefacts` percent of the beats were corrected.
    /// - Throws: ``InputValueError`` for a percentage outside 0…100, an empty range or one longer
    ///   than ``maxRangeDays``; a store error.
    package init(store: HealthStore, from: Date?, to: Date?, device: String?, window: Double, maxArtefacts: Double) throws {
        guard (0...100).contains(maxArtefacts) else {
            throw InputValueError("--max-artefacts \(maxArtefacts) is not a percentage: use 0 to 100.")
        }
        self.window = window
        let end = to ?? Date(), start = from ?? end.addingTimeInterval(-86_400)
        try InputValues.checkRange(from: start, to: end)
        guard end.timeIntervalSince(start) <= Self.maxRangeDays * 86_400 else {
            throw InputValueError("the range is \(Int((end.timeIntervalSince(start) / 86_400).rounded(.up))) days: hrv reads at most \(Int(Self.maxRangeDays)) at a time (its beats are held in memory); split it with --from and --to.")
        }
        let from = start.timeIntervalSince1970, to = end.timeIntervalSince1970, maxArtefacts = maxArtefacts / 100
        // Read in 6-hour slices, keeping only beats (8 bytes each), so memory follows the beats,
        // not the samples. A notification received up to a minute after the range may carry
        // beats inside it.
        var series: [String: (device: Device?, beats: BeatSeries)] = [:]
        let q = SampleQuery(type: .heartRate, start: start, end: end.addingTimeInterval(60), device: device)
        try store.forEachSlice(of: q, seconds: 6 * 3600) { slice in
            for s in slice where s.rrIntervals != nil {
                let name = s.device?.name ?? s.device?.localIdentifier ?? "unknown device"
                series[name, default: (s.device, BeatSeries(runs: []))].beats.append(s)
            }
        }
        devices = series.keys.sorted().map { name in
            let (stored, beats) = series[name]!
            return DeviceHRV(device: name, stored: stored,
                             windows: WindowedHRV(beats, length: window, from: from, to: to, maxArtefacts: maxArtefacts).windows,
                             overall: WindowedHRV(beats, length: nil, from: from, to: to, maxArtefacts: maxArtefacts).windows.first)
        }
    }

    /// The source of the samples ``samples(computedAt:)`` makes.
    package static let source = Source(name: "HealthGate HRV", identifier: "org.healthgate.hrv")

    /// The windows that have a value, as samples to store: SDNN and RMSSD spanning the window,
    /// from the device, with the intervals and the beats corrected in metadata
    /// (`hrvIntervals`, `hrvCorrected`) and a sync identifier per device, type, window start and
    /// length, versioned by `computedAt`: computing a window again replaces its samples.
    package func samples(computedAt: Date) throws -> [QuantitySample] {
        try devices.flatMap { d in
            try d.windows.compactMap { w in w.measures.map { (w, $0) } }.flatMap { w, m in
                try [(QuantityType.heartRateVariabilitySDNN, m.sdnn), (.heartRateVariabilityRMSSD, m.rmssd)].map { type, value in
                    let start = Date(timeIntervalSince1970: w.start)
                    let id = "hrv:\(d.stored?.localIdentifier ?? d.device):\(type.identifier):\(ISO8601.string(start)):\(window)"
                    let metadata = Metadata(syncIdentifier: id, syncVersion: Int(computedAt.timeIntervalSince1970 * 1000),
                                            user: [Metadata.hrvIntervalsKey: .number(Double(w.intervals)), Metadata.hrvCorrectedKey: .number(Double(w.corrected))])
                    return try QuantitySample(type: type, quantity: Quantity(value, .millisecond), start: start,
                                              end: Date(timeIntervalSince1970: w.end), source: Self.source, device: d.stored, metadata: metadata)
                }
            }
        }
    }

    /// A window as JSON: bounds (ISO 8601 UTC), counts, and the measures or the reason there are none.
    package static func object(_ w: WindowedHRV.Window) -> [String: Any] {
        var o: [String: Any] = [
            "start": ISO8601.string(Date(timeIntervalSince1970: w.start)), "end": ISO8601.string(Date(timeIntervalSince1970: w.end)),
            "intervals": w.intervals,
            "corrected": ["ectopic": w.ectopic, "missed": w.missed, "extra": w.extra, "longShort": w.longShort],
        ]
        if let m = w.measures {
            o["meanNN"] = m.meanNN; o["sdnn"] = m.sdnn; o["rmssd"] = m.rmssd; o["pnn50"] = m.pnn50
            o["differences"] = m.differences
        }
        if let r = w.refusal { o["reason"] = r }
        return o
    }

    /// The report as JSON: `[{"device", "window" (seconds), "windows": […], "overall": {…}}]`.
    package var json: [[String: Any]] {
        devices.map { d in
            ["device": d.device, "window": window, "windows": d.windows.map(Self.object), "overall": d.overall.map(Self.object) ?? NSNull()]
        }
    }
}

extension HRVReport {
    /// `60 s`, `5 min`, `1 h` for a window length, for headings.
    package static func lengthText(_ seconds: Double) -> String {
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600)) h" }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60)) min" }
        return String(format: "%g s", seconds)
    }
}
