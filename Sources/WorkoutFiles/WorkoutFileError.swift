import Foundation

/// Why a workout file could not be written. Each description is a sentence: what is wrong, why
/// the format cannot take it, what to do.
public enum WorkoutFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// GPX was asked for a workout without positions.
    case noPositions
    /// The workout's end is before its start (or either is not a real instant).
    case endsBeforeStart(start: Date, end: Date)
    /// Pause `index` starts before the previous one ended, or lies outside the workout.
    case pauseOutOfPlace(index: Int, pause: Range<Date>, start: Date, end: Date)
    /// Point `index` of a stream is earlier than the one before it, or outside the workout.
    case sampleOutOfPlace(stream: String, index: Int, time: Date, start: Date, end: Date)
    /// A heart rate that is negative, not finite, or above 254 bpm.
    case heartRateOutOfRange(time: Date, beatsPerMinute: Double)
    /// RR interval `index` is zero, negative or not finite.
    case invalidRRInterval(index: Int, seconds: Double)
    /// A latitude, longitude or elevation that is not a place on Earth.
    case invalidPosition(time: Date, latitude: Double, longitude: Double, elevation: Double?)
    /// A total the formats' fields cannot hold (negative, not finite, or over `limit`).
    case totalOutOfRange(name: String, value: Double, limit: Double)
    /// The workout starts before FIT's epoch (1989-12-31T00:00:00Z), or lasts longer than a FIT
    /// time (49 days in milliseconds) can say.
    case outsideFITTime(start: Date, end: Date)

    public var description: String {
        switch self {
        case .noPositions:
            return "cannot write GPX: this workout has no positions (a strap records none), and every GPX track point needs a latitude and longitude; "
                + "export TCX or FIT, which carry heart rate without a route"
        case .endsBeforeStart(let start, let end):
            return "cannot write the workout: it ends (\(WorkoutTime.iso(end))) before it starts (\(WorkoutTime.iso(start))); "
                + "check the workout's start and end"
        case .pauseOutOfPlace(let i, let p, let start, let end):
            return "cannot write the workout: pause \(i) (\(WorkoutTime.iso(p.lowerBound)) to \(WorkoutTime.iso(p.upperBound))) overlaps the one before it "
                + "or lies outside the workout (\(WorkoutTime.iso(start)) to \(WorkoutTime.iso(end))), so the timer time would be wrong; "
                + "give pauses in order, apart, inside the workout"
        case .sampleOutOfPlace(let stream, let i, let t, let start, let end):
            return "cannot write the workout: \(stream) \(i) (\(WorkoutTime.iso(t))) is earlier than the one before it or outside the workout "
                + "(\(WorkoutTime.iso(start)) to \(WorkoutTime.iso(end))), and readers expect a track in time order within its workout; "
                + "sort the points and keep only those inside the workout"
        case .heartRateOutOfRange(let t, let bpm):
            return "cannot write the workout: the heart rate at \(WorkoutTime.iso(t)) is \(bpm) bpm, and FIT, TCX and GPX hold whole beats per minute "
                + "from 1 to 254; drop or correct that reading"
        case .invalidRRInterval(let i, let s):
            return "cannot write the workout: RR interval \(i) is \(s) s, and an interval between two beats is a positive number of seconds; "
                + "drop it, or mark a gap there with nil"
        case .invalidPosition(let t, let lat, let lon, let ele):
            return "cannot write the workout: the position at \(WorkoutTime.iso(t)) (latitude \(lat), longitude \(lon)"
                + (ele.map { ", elevation \($0) m" } ?? "") + ") is not a place on Earth (latitude -90...90, longitude -180...180, finite values); "
                + "drop or correct that position"
        case .totalOutOfRange(let name, let value, let limit):
            return "cannot write the workout: its \(name) is \(value), and the formats' fields hold 0 to \(limit); correct the total or leave it unknown"
        case .outsideFITTime(let start, let end):
            return "cannot write FIT: the workout (\(WorkoutTime.iso(start)) to \(WorkoutTime.iso(end))) starts before FIT's epoch (1989-12-31T00:00:00Z) "
                + "or lasts longer than FIT's 32-bit millisecond times hold (49 days); export TCX or GPX, which have no such limit"
        }
    }
}
