import Foundation
import HealthModel

extension HeartRateMeasurement {
    /// `{"bpm", "sensorContact", "energyExpendedKJ" (number or null), "rr" (ticks of 1/1024 s,
    /// oldest first), "truncated"}`: a measurement as `decode heart-rate --json` and `live
    /// --json` print it.
    package var jsonObject: [String: Any] {
        ["bpm": Int(beatsPerMinute), "sensorContact": sensorContact.name,
         "energyExpendedKJ": energyExpendedKJ.map { Int($0) as Any } ?? NSNull(),
         "rr": rrIntervals.map { Int($0) }, "truncated": truncated]
    }
}
