import Foundation
import HealthModel
import Sysexits

/// Writes samples as a JSON array of Open mHealth data points (docs/interop.md, "Open mHealth"):
/// heart rate as `omh:heart-rate:2.0`, steps as `omh:step-count:3.0`, and each RR interval a
/// heart-rate sample carries as `omh:rr-interval:1.0`. Other types are skipped and counted.
///
/// Each data point's header: an `id` (the sample's UUID; for an RR interval or a quantity of a
/// series, one derived from it), `creation_date_time` (the export's time), the `schema_id`, and
/// `acquisition_provenance` (source name, `sensed` or `self-reported`, and the sample's end as
/// `source_creation_date_time`). RR intervals get a time interval rebuilt backwards from the
/// notification's receipt (the heart-rate sample's time): the last one ends there.
struct OpenMHealthWriter: SampleWriter {
    let created: String
    private(set) var skipped: [String: Int] = [:]
    private var points = 0

    init(created: Date) { self.created = ISO8601.string(created) }

    func begin() -> String { "[" }

    mutating func write(_ s: QuantitySample) throws -> String {
        let id = NameBasedUUID.of(s.uuid, seriesIndex: s.seriesIndex)
        switch s.type.identifier {
        case QuantityType.heartRate.identifier:
            var body: [String: Any] = [
                "heart_rate": ["value": try s.quantity.doubleValue(for: .countPerMinute), "unit": "beats/min"],
                "effective_time_frame": Self.timeFrame(s.startDate, s.endDate),
            ]
            if let c = s.metadata.heartRateMotionContext, c != .notSet {
                body["temporal_relationship_to_physical_activity"] = c == .sedentary ? "at rest" : "active"
            }
            var out = try point(id, "heart-rate", "2.0", s, body)
            if let rr = s.rrIntervals {
                var end = s.endDate
                for (i, ms) in rr.milliseconds.enumerated().reversed() {
                    let start = end.addingTimeInterval(-ms / 1000)
                    let rrID = NameBasedUUID.make("healthgate-rr:\(id.uuidString.lowercased()):\(i)")
                    out += try point(rrID, "rr-interval", "1.0", s, [
                        "rr_interval": ["value": ms, "unit": "ms"],
                        "effective_time_frame": Self.timeFrame(start, end, interval: true),
                    ])
                    end = start
                }
            }
            return out
        case QuantityType.stepCount.identifier:
            return try point(id, "step-count", "3.0", s, [
                "step_count": ["value": try s.quantity.doubleValue(for: .count), "unit": "steps"],
                // step-count 3.0 takes only an interval: an instant is one of zero length.
                "effective_time_frame": Self.timeFrame(s.startDate, s.endDate, interval: true),
            ])
        default:
            skipped[s.type.identifier, default: 0] += 1
            return ""
        }
    }

    func end() -> String { points == 0 ? "]\n" : "\n]\n" }

    /// One data point (a comma before all but the first).
    private mutating func point(_ id: UUID, _ name: String, _ version: String, _ s: QuantitySample,
                                _ body: [String: Any]) throws -> String {
        let header: [String: Any] = [
            "id": id.uuidString.lowercased(),
            "creation_date_time": created,
            "schema_id": ["namespace": "omh", "name": name, "version": version],
            "acquisition_provenance": [
                "source_name": s.source.name,
                "modality": s.metadata.wasUserEntered == true ? "self-reported" : "sensed",
                "source_creation_date_time": ISO8601.string(s.endDate),
            ],
        ]
        defer { points += 1 }
        return (points == 0 ? "\n" : ",\n") + (try JSONOutput.string(["header": header, "body": body]))
    }

    /// `{"date_time": …}` for an instant (unless `interval`), else `{"time_interval": {…}}`.
    static func timeFrame(_ start: Date, _ end: Date, interval: Bool = false) -> [String: Any] {
        if start == end && !interval { return ["date_time": ISO8601.string(start)] }
        return ["time_interval": ["start_date_time": ISO8601.string(start), "end_date_time": ISO8601.string(end)]]
    }
}
