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

    /// Reads the heart-rate samples `query` selects (its type is set to heart rate) and computes
    /// windows of `window` seconds, refusing those with more than `maxArtefacts` (0…1) corrected.
    package init(store: HealthStore, query: SampleQuery, window: Double, maxArtefacts: Double) throws {
        var q = query
        q.type = .heartRate
        q.sortBy = .endDate
        q.ascending = true
        let from = q.start?.timeIntervalSince1970 ?? -.infinity, to = q.end?.timeIntervalSince1970 ?? .infinity
        let byDevice = Dictionary(grouping: try store.samples(q).filter { $0.rrIntervals != nil }) {
            $0.device?.name ?? $0.device?.localIdentifier ?? "unknown device"
        }
        devices = byDevice.keys.sorted().map { name in
            let series = BeatSeries(byDevice[name] ?? [])
            return DeviceHRV(device: name,
                             windows: WindowedHRV(series, length: window, from: from, to: to, maxArtefacts: maxArtefacts).windows,
                             overall: WindowedHRV(series, length: nil, from: from, to: to, maxArtefacts: maxArtefacts).windows.first)
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

    /// The report as JSON: `[{"device", "windows": […], "overall": {…}}]`.
    package var json: [[String: Any]] {
        devices.map { d in
            ["device": d.device, "windows": d.windows.map(Self.object), "overall": d.overall.map(Self.object) ?? NSNull()]
        }
    }
}
