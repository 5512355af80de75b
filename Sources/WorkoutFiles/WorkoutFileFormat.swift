import Foundation

/// The workout file formats (docs/workout-files.md), for a caller that picks one by name.
public enum WorkoutFileFormat: String, CaseIterable, Sendable {
    /// Garmin's FIT activity file: binary, the fullest (RR intervals, pauses as timer events).
    case fit
    /// Garmin's TrainingCenterDatabase v2: XML, heart rate with or without a route.
    case tcx
    /// GPX 1.1 with Garmin's heart-rate extension: XML, a route; needs positions.
    case gpx

    /// The file name extension, without the dot (the raw value).
    public var fileExtension: String { rawValue }

    /// The media type to serve the file with.
    public var mediaType: String {
        switch self {
        case .fit: return "application/vnd.ant.fit"
        case .tcx: return "application/vnd.garmin.tcx+xml"
        case .gpx: return "application/gpx+xml"
        }
    }

    /// `workout` in this format (``FITWriter``, ``TCXWriter``, ``GPXWriter``). `timeZone` is
    /// FIT's local time of the activity; the XML formats write UTC only.
    /// - Throws: ``WorkoutFileError``.
    public func write(_ workout: WorkoutTrack, timeZone: TimeZone = .current) throws -> [UInt8] {
        switch self {
        case .fit: return try FITWriter.write(workout, timeZone: timeZone)
        case .tcx: return try TCXWriter.write(workout)
        case .gpx: return try GPXWriter.write(workout)
        }
    }
}
