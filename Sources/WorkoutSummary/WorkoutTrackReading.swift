import Foundation
import HealthModel
import HealthStore
import WorkoutFiles

extension WorkoutSummary {
    /// The workout as `workout export` writes it (FIT, TCX, GPX; docs/workout-files.md): the
    /// heart-rate readings inside it of the device its heart rate came from, their RR intervals
    /// in beat order (a gap the store marked, or a reading without RR between two with, is a
    /// gap), its pauses, these totals, and the device as stored. No positions: a strap records
    /// none. Memory follows the workout's readings (a three-hour run is about 11,000).
    /// - Throws: ``WorkoutSummaryError/inProgress`` for a workout not yet ended; a store error.
    package func track(store: HealthStore) throws -> WorkoutTrack {
        guard let end = workout.end else { throw WorkoutSummaryError.inProgress(workout.uuid) }
        var points: [HeartRatePoint] = [], rr: [Double?] = [], device: Device?
        if let hr = heartRate {
            let q = SampleQuery(type: .heartRate, start: workout.start, end: end, strictStartDate: true, device: hr.device)
            var previousHadRR = false
            try store.forEachSlice(of: q, seconds: 3600) { slice in
                for s in slice where s.startDate <= end {
                    points.append(HeartRatePoint(time: s.startDate, beatsPerMinute: s.canonicalValue))
                    device = device ?? s.device
                    if let r = s.rrIntervals, !r.ticks.isEmpty {
                        if r.precededByGap || (!previousHadRR && !rr.isEmpty) { rr.append(nil) }
                        rr += r.ticks.map { Double($0) / 1024 }
                        previousHadRR = true
                    } else {
                        previousHadRR = false
                    }
                }
            }
        }
        var pauses: [Range<Date>] = []
        var paused: Date?
        for e in workout.events {
            switch e.kind {
            case .pause: paused = e.date
            case .resume:
                if let p = paused, e.date > p { pauses.append(p..<e.date) }
                paused = nil
            }
        }
        if let p = paused, end > p { pauses.append(p..<end) }
        let totals = WorkoutTotals(energyKilocalories: activeEnergy?.value, distanceMeters: distance?.value, steps: steps?.value,
                                   averageHeartRate: heartRate?.average, maximumHeartRate: heartRate?.maximum)
        let fileDevice = device.map {
            WorkoutDevice(name: $0.name ?? $0.localIdentifier ?? "strap", manufacturer: $0.manufacturer ?? "", model: $0.model ?? "",
                          serialNumber: nil, softwareVersion: $0.softwareVersion ?? $0.firmwareVersion)
        }
        return WorkoutTrack(id: workout.uuid, activity: workout.activity.rawValue, start: workout.start, end: end, pauses: pauses,
                            heartRate: points, rrIntervals: rr, totals: totals, device: fileDevice)
    }
}

/// Why a workout's summary cannot give what was asked.
package enum WorkoutSummaryError: Error, CustomStringConvertible {
    /// A file of a workout needs its end.
    case inProgress(UUID)

    package var description: String {
        switch self {
        case .inProgress(let u):
            "workout \(u.uuidString) is still in progress: stop it first ('healthgate workout stop \(u.uuidString)'), then export it"
        }
    }
}
