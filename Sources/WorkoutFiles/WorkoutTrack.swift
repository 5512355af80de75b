import Foundation

/// One workout as the FIT, TCX and GPX writers take it (docs/workout-files.md): plain values,
/// no store. The caller (an export command, later the Apple Health import) fills it from
/// wherever the workout lives; the writers check it (``validate()``) and turn it into bytes.
///
/// Times are absolute instants (`Date`); every writer writes them in UTC. Heart rate, positions
/// and RR intervals are separate streams because a chest strap records the first and the last,
/// a phone or watch with a route records positions, and neither is guaranteed to line up with
/// the other in time.
public struct WorkoutTrack: Sendable, Equatable {
    /// The workout's identifier (HealthKit's `HKWorkout.uuid`, or the store's).
    public var id: UUID
    /// The activity as `HKWorkoutActivityType` names it, lowerCamel: `running`, `cycling`,
    /// `walking`, `hiking`, `swimming`, `rowing`, `traditionalStrengthTraining`,
    /// `highIntensityIntervalTraining`, `other`… Each format maps it to its own sport
    /// (``WorkoutActivity``); a name it does not know is written as its generic sport.
    public var activity: String
    /// When the workout began.
    public var start: Date
    /// When the workout ended: not before ``start``.
    public var end: Date
    /// The spans the workout was paused: ordered, not overlapping, inside `start...end`. Their
    /// time counts in the elapsed time and not in the timer (moving) time. Samples recorded during
    /// a pause are still written: the pause is a statement about the timer, not about the data.
    public var pauses: [Range<Date>]
    /// Heart rate in time order, in practice one point a second (the caller resamples).
    public var heartRate: [HeartRatePoint]
    /// RR intervals (the time between two beats) in seconds, in beat order; `nil` marks a gap:
    /// beats were lost there (the strap lost contact, a notification was dropped), so the
    /// intervals either side are not neighbours. Each `nil` is one gap; FIT writes it as an `hrv`
    /// message with no valid interval (docs/workout-files.md, "RR intervals and gaps").
    public var rrIntervals: [Double?]
    /// The route in time order: empty for a strap-only workout.
    public var positions: [TrackPosition]
    /// The workout's totals and heart-rate summary, as the source computed them: the writers do
    /// not derive them from the streams.
    public var totals: WorkoutTotals
    /// The device that recorded the workout (a strap, a watch), when known.
    public var device: WorkoutDevice?

    /// A workout from its parts; streams, totals and device default to empty.
    public init(id: UUID, activity: String, start: Date, end: Date, pauses: [Range<Date>] = [],
                heartRate: [HeartRatePoint] = [], rrIntervals: [Double?] = [], positions: [TrackPosition] = [],
                totals: WorkoutTotals = WorkoutTotals(), device: WorkoutDevice? = nil) {
        self.id = id
        self.activity = activity
        self.start = start
        self.end = end
        self.pauses = pauses
        self.heartRate = heartRate
        self.rrIntervals = rrIntervals
        self.positions = positions
        self.totals = totals
        self.device = device
    }

    /// Seconds from ``start`` to ``end``, pauses included.
    public var elapsedTime: TimeInterval { end.timeIntervalSince(start) }

    /// Seconds the timer ran: the elapsed time less the pauses.
    public var timerTime: TimeInterval {
        elapsedTime - pauses.reduce(0) { $0 + $1.upperBound.timeIntervalSince($1.lowerBound) }
    }
}

/// One heart-rate reading.
public struct HeartRatePoint: Sendable, Equatable {
    /// When the reading was taken.
    public var time: Date
    /// Beats per minute. Every format stores whole beats per minute: the writers round to the
    /// nearest (half away from zero). A reading that rounds to 0 (a strap without skin contact
    /// sends 0) is not a heart rate and is not written; above 254 is refused (FIT's `uint8`
    /// keeps 255 for "invalid").
    public var beatsPerMinute: Double

    /// A reading of `beatsPerMinute` at `time`.
    public init(time: Date, beatsPerMinute: Double) {
        self.time = time
        self.beatsPerMinute = beatsPerMinute
    }
}

/// One point of a route.
public struct TrackPosition: Sendable, Equatable {
    /// When the position was fixed.
    public var time: Date
    /// Degrees north, -90...90 (WGS 84).
    public var latitude: Double
    /// Degrees east, -180..<180 (WGS 84); 180 is written as -180.
    public var longitude: Double
    /// Metres above sea level, when known.
    public var elevation: Double?

    /// A position at `time`.
    public init(time: Date, latitude: Double, longitude: Double, elevation: Double? = nil) {
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.elevation = elevation
    }
}

/// A workout's totals and heart-rate summary; each is written only where known (TCX's lap must
/// have a distance and calories: it gets 0 for an unknown one, as Garmin's own strap-only files do).
public struct WorkoutTotals: Sendable, Equatable {
    /// Energy burned, kilocalories (HealthKit's `totalEnergyBurned`).
    public var energyKilocalories: Double?
    /// Distance covered, metres.
    public var distanceMeters: Double?
    /// Steps taken.
    public var steps: Double?
    /// The average heart rate over the workout, beats per minute.
    public var averageHeartRate: Double?
    /// The highest heart rate of the workout, beats per minute.
    public var maximumHeartRate: Double?

    /// Totals; each defaults to unknown.
    public init(energyKilocalories: Double? = nil, distanceMeters: Double? = nil, steps: Double? = nil,
                averageHeartRate: Double? = nil, maximumHeartRate: Double? = nil) {
        self.energyKilocalories = energyKilocalories
        self.distanceMeters = distanceMeters
        self.steps = steps
        self.averageHeartRate = averageHeartRate
        self.maximumHeartRate = maximumHeartRate
    }
}

/// The device that recorded a workout (HealthKit's `HKDevice` fields that the formats can carry).
public struct WorkoutDevice: Sendable, Equatable {
    /// The name a person gave it or sees ("Polar H10 A1B2C3D4").
    public var name: String
    /// Its maker ("Polar Electro Oy").
    public var manufacturer: String
    /// Its model ("H10").
    public var model: String
    /// Its serial number, when known. FIT's serial numbers are 32-bit integers: a serial that
    /// is not a decimal number in 1...4294967294 is written only to TCX and GPX.
    public var serialNumber: String?
    /// Its software or firmware version, when known ("3.0.35").
    public var softwareVersion: String?

    /// A device from its fields.
    public init(name: String, manufacturer: String, model: String, serialNumber: String? = nil, softwareVersion: String? = nil) {
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.serialNumber = serialNumber
        self.softwareVersion = softwareVersion
    }
}

extension WorkoutTrack {
    /// Checks what every format relies on, so no writer writes a file a reader would refuse or
    /// misread: the end not before the start, pauses ordered and inside the workout, streams in
    /// time order and inside the workout, finite values in range.
    /// - Throws: ``WorkoutFileError`` naming the first problem.
    public func validate() throws {
        guard start.timeIntervalSince1970.isFinite, end.timeIntervalSince1970.isFinite, end >= start else {
            throw WorkoutFileError.endsBeforeStart(start: start, end: end)
        }
        var previousEnd = start
        for (i, p) in pauses.enumerated() {
            guard p.lowerBound >= previousEnd, p.upperBound <= end else {
                throw WorkoutFileError.pauseOutOfPlace(index: i, pause: p, start: start, end: end)
            }
            previousEnd = p.upperBound
        }
        try checkOrder(heartRate.map(\.time), stream: "heart-rate point")
        try checkOrder(positions.map(\.time), stream: "position")
        for p in heartRate where !(p.beatsPerMinute.isFinite && p.beatsPerMinute >= 0 && p.beatsPerMinute.rounded() <= 254) {
            throw WorkoutFileError.heartRateOutOfRange(time: p.time, beatsPerMinute: p.beatsPerMinute)
        }
        for (i, rr) in rrIntervals.enumerated() {
            if let rr, !(rr.isFinite && rr > 0) { throw WorkoutFileError.invalidRRInterval(index: i, seconds: rr) }
        }
        for p in positions where !(p.latitude.isFinite && p.longitude.isFinite && abs(p.latitude) <= 90 && abs(p.longitude) <= 180
                                   && (p.elevation?.isFinite ?? true)) {
            throw WorkoutFileError.invalidPosition(time: p.time, latitude: p.latitude, longitude: p.longitude, elevation: p.elevation)
        }
        let t = totals
        for (name, value, limit) in [("energy (kcal)", t.energyKilocalories, 65534.0), ("distance (m)", t.distanceMeters, 42_949_672.94),
                                     ("steps", t.steps, 4_294_967_294.0),
                                     ("average heart rate (bpm)", t.averageHeartRate, 254.0), ("maximum heart rate (bpm)", t.maximumHeartRate, 254.0)] {
            if let value, !(value.isFinite && value >= 0 && value.rounded() <= limit) {
                throw WorkoutFileError.totalOutOfRange(name: name, value: value, limit: limit)
            }
        }
    }

    /// Throws unless `times` are in order (equal neighbours allowed) and inside the workout.
    private func checkOrder(_ times: [Date], stream: String) throws {
        var previous = start
        for (i, t) in times.enumerated() {
            guard t >= previous, t <= end else {
                throw WorkoutFileError.sampleOutOfPlace(stream: stream, index: i, time: t, start: start, end: end)
            }
            previous = t
        }
    }
}
