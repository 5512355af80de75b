import Foundation
import HealthModel
import HealthStore

/// A workout's totals, computed from what the store holds inside it (docs/workouts.md):
/// duration without pauses, active energy, steps, distance, heart rate average/min/max, time in
/// five heart-rate zones and, for `workout show`, heart rate per minute.
///
/// Only the running intervals count (a pause's samples do not), clipped as statistics clip
/// (a step sample half inside counts half). With devices, each type comes from the first listed
/// device that has samples of it in the workout (a strap's heart rate and energy, a pedometer's
/// steps), so two devices measuring the same thing are not added; without, from every device,
/// merged across sources by priority as `stats` merges them.
public struct WorkoutSummary: Sendable {
    /// One total: the value in its unit and the device that supplied it (nil: merged).
    public struct Total: Sendable, Hashable {
        public var value: Double
        public var unit: String
        public var device: String?
    }

    /// Heart rate over the running intervals, count/min (HealthKit's weights: an instantaneous
    /// reading weighs one second).
    public struct HeartRate: Sendable, Hashable {
        public var average: Double
        public var minimum: Double
        public var maximum: Double
        public var samples: Int
        public var device: String?
    }

    /// Seconds spent in each zone.
    public struct ZoneTimes: Sendable, Hashable {
        /// The zones' bounds and their basis.
        public var zones: HeartRateZones
        /// Seconds below zone 1, then in zones 1…5 (six entries).
        public var seconds: [Double]
        /// Running seconds no reading covered (the strap was off, or silent for more than
        /// ``WorkoutSummary/readingHold`` seconds).
        public var unmeasured: Double
    }

    /// One minute of heart rate, counted from the workout's start.
    public struct Minute: Sendable, Hashable {
        public var start: Date
        public var average: Double?
        public var minimum: Double?
        public var maximum: Double?
        public var samples: Int
        /// Seconds of this minute the workout was running (0 in a pause).
        public var activeSeconds: Double
    }

    /// How long one heart-rate reading counts for zone time at most: until the next reading,
    /// but never more than this many seconds (a strap notifies about once a second; a longer
    /// silence is time without a reading, not time at the last value).
    public static let readingHold: TimeInterval = 5

    /// The workout.
    public var workout: Workout
    /// Seconds from start to end (or to now while in progress).
    public var elapsed: TimeInterval
    /// Seconds running, pauses excluded.
    public var duration: TimeInterval
    /// Active energy, kcal.
    public var activeEnergy: Total?
    /// Steps, count.
    public var steps: Total?
    /// Distance walking or running, m.
    public var distance: Total?
    /// Heart rate, if any reading lies in it.
    public var heartRate: HeartRate?
    /// Zone times, when a maximum heart rate is known and there are readings.
    public var zones: ZoneTimes?
    /// Why there are no zone times, when there are none.
    public var zonesNote: String?
    /// Heart rate per minute (filled when asked for: `workout show`).
    public var minutes: [Minute] = []

    /// Computes the totals of `workout` from `store` (`now` ends a workout in progress).
    /// `perMinute` adds the per-minute heart rate; `timeZone` is the calendar for the age.
    public init(_ workout: Workout, store: HealthStore, characteristics: Characteristics,
                perMinute: Bool = false, now: Date = Date(), timeZone: TimeZone = .current) throws {
        self.workout = workout
        let intervals = workout.activeIntervals(now: now)
        elapsed = workout.elapsed(now: now)
        duration = intervals.reduce(0) { $0 + $1.duration }
        let candidates: [String?] = workout.devices.isEmpty ? [nil] : workout.devices

        // Cumulative totals: sums over the running intervals, from the first device that has some.
        func total(_ type: QuantityType, unit: HealthUnit) throws -> Total? {
            for device in candidates {
                var sum = 0.0, count = 0
                for i in intervals {
                    let s = try store.statistics(StatisticsQuery(type: type, options: .cumulativeSum, start: i.start, end: i.end, device: device))
                    sum += s.values.sum ?? 0
                    count += s.values.sampleCount
                }
                if count > 0 { return Total(value: try type.canonicalUnit.convert(sum, to: unit), unit: unit.description, device: device) }
            }
            return nil
        }
        activeEnergy = try total(.activeEnergyBurned, unit: .kilocalorie)
        steps = try total(.stepCount, unit: .count)
        distance = try total(.distanceWalkingRunning, unit: try HealthUnit("m"))

        // Heart rate: averages of the intervals combined by their weights.
        var hrDevice: String?? = nil
        for device in candidates where hrDevice == nil {
            var weighted = 0.0, weight = 0.0, lo = Double.infinity, hi = -Double.infinity, count = 0
            for i in intervals {
                let v = try store.statistics(StatisticsQuery(type: .heartRate, options: [.discreteAverage, .discreteMin, .discreteMax],
                                                             start: i.start, end: i.end, device: device)).values
                guard v.sampleCount > 0, let avg = v.average, let mn = v.minimum, let mx = v.maximum else { continue }
                weighted += avg * v.averageWeight; weight += v.averageWeight
                lo = min(lo, mn); hi = max(hi, mx); count += v.sampleCount
            }
            if count > 0, weight > 0 {
                heartRate = HeartRate(average: weighted / weight, minimum: lo, maximum: hi, samples: count, device: device)
                hrDevice = .some(device)
            }
        }

        // Zones: each reading holds until the next (at most `readingHold`), clipped to the
        // running intervals.
        if let device = hrDevice {
            if let z = HeartRateZones(characteristics, on: workout.start, timeZone: timeZone) {
                zones = try Self.zoneTimes(workout, intervals: intervals, zones: z, device: device, store: store, now: now)
            } else {
                zonesNote = "no maximum heart rate: set one with 'healthgate profile set --max-heart-rate BPM' or give a date of birth with 'healthgate profile set --date-of-birth YYYY-MM-DD'"
            }
            if perMinute { minutes = try Self.minutes(workout, intervals: intervals, device: device, store: store, now: now) }
        } else {
            zonesNote = "no heart-rate readings in this workout"
        }
    }

    /// Zone seconds from the readings of `device` (nil: every device).
    static func zoneTimes(_ w: Workout, intervals: [DateInterval], zones: HeartRateZones, device: String?,
                          store: HealthStore, now: Date) throws -> ZoneTimes {
        var seconds = [Double](repeating: 0, count: 6)
        guard let first = intervals.first, let last = intervals.last else {
            return ZoneTimes(zones: zones, seconds: seconds, unmeasured: 0)
        }
        var k = 0   // the first interval that may still overlap
        func add(_ from: Double, _ to: Double, _ bpm: Double) {
            guard to > from else { return }
            while k < intervals.count, intervals[k].end.timeIntervalSince1970 <= from { k += 1 }
            var j = k
            while j < intervals.count, intervals[j].start.timeIntervalSince1970 < to {
                let a = max(from, intervals[j].start.timeIntervalSince1970), b = min(to, intervals[j].end.timeIntervalSince1970)
                if b > a { seconds[zones.zone(of: bpm)] += b - a }
                j += 1
            }
        }
        // A reading up to `readingHold` before the start still covers the start.
        let q = SampleQuery(type: .heartRate, start: first.start.addingTimeInterval(-readingHold), end: last.end, device: device)
        var pending: (start: Double, end: Double, bpm: Double)?
        try store.forEachSlice(of: q, seconds: 3600) { slice in
            for s in slice {
                let t = s.startDate.timeIntervalSince1970
                if let p = pending { add(p.start, min(t, p.start + max(readingHold, p.end - p.start)), p.bpm) }
                pending = (t, s.endDate.timeIntervalSince1970, s.canonicalValue)
            }
        }
        if let p = pending { add(p.start, p.start + max(readingHold, p.end - p.start), p.bpm) }
        let measured = seconds.reduce(0, +)
        let active = intervals.reduce(0) { $0 + $1.duration }
        return ZoneTimes(zones: zones, seconds: seconds, unmeasured: max(0, active - measured))
    }

    /// Heart rate per minute from the start (the last minute may be shorter).
    static func minutes(_ w: Workout, intervals: [DateInterval], device: String?, store: HealthStore, now: Date) throws -> [Minute] {
        let end = w.end ?? max(now, w.start)
        guard end > w.start else { return [] }
        let q = StatisticsQuery(type: .heartRate, options: [.discreteAverage, .discreteMin, .discreteMax],
                                start: w.start, end: end, device: device)
        return try store.statisticsCollection(q, interval: .minutes(1), anchor: w.start, timeZone: TimeZone(identifier: "UTC")!).map { s in
            let from = s.start ?? w.start, to = min(s.end ?? end, end)
            let active = intervals.reduce(0.0) { acc, i in
                acc + max(0, min(to, i.end).timeIntervalSince1970 - max(from, i.start).timeIntervalSince1970)
            }
            return Minute(start: from, average: s.values.average, minimum: s.values.minimum, maximum: s.values.maximum,
                          samples: s.values.sampleCount, activeSeconds: active)
        }
    }
}
