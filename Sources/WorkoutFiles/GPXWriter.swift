import Foundation

/// Writes a workout's route as GPX 1.1 with heart rate in Garmin's TrackPointExtension v1
/// (`gpxtpx:hr`; docs/workout-files.md, "GPX"). GPX is a route format: every track point needs
/// a latitude and longitude, so the points are the workout's positions, each with the heart rate
/// nearest in time (no more than ``heartRateReach`` away). A workout without positions (a strap
/// records none) cannot be GPX: ``write(_:)`` throws ``WorkoutFileError/noPositions``.
public enum GPXWriter {
    /// How far in time a heart-rate reading may be from a position to be written with it: one
    /// second, the caller's sampling interval. Further, the track point has no heart rate (the
    /// strap had none then).
    public static let heartRateReach: TimeInterval = 1

    /// The GPX document for `workout`, UTF-8: one `trk` (its `type` the activity, its `src` the
    /// device's name), a new `trkseg` after each pause.
    /// - Throws: ``WorkoutFileError/noPositions`` for a workout without positions; another
    ///   ``WorkoutFileError`` when the workout is inconsistent (``WorkoutTrack/validate()``).
    public static func write(_ workout: WorkoutTrack) throws -> [UInt8] {
        try workout.validate()
        guard !workout.positions.isEmpty else { throw WorkoutFileError.noPositions }
        var x = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="HealthGate" xmlns="http://www.topografix.com/GPX/1/1" \
            xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd \
            http://www.garmin.com/xmlschemas/TrackPointExtension/v1 http://www.garmin.com/xmlschemas/TrackPointExtensionv1.xsd">
              <metadata><time>\(WorkoutTime.iso(workout.start))</time></metadata>
              <trk>

            """
        // trk's sequence: name, cmt, desc, src, link, number, type, extensions, trkseg.
        if let device = workout.device { x += "    <src>\(XMLText.escape(device.name))</src>\n" }
        x += "    <type>\(XMLText.escape(workout.activity))</type>\n    <trkseg>\n"
        let bpm = nearestHeartRates(workout)
        var pauses = workout.pauses[...]
        var segmentHasPoints = false
        for (i, p) in workout.positions.enumerated() {
            // A pause ends the segment: the first point at or after its end starts a new one.
            var paused = false
            while let pause = pauses.first, p.time >= pause.upperBound {
                paused = true
                pauses.removeFirst()
            }
            if paused, segmentHasPoints { x += "    </trkseg>\n    <trkseg>\n" }
            segmentHasPoints = true
            // lon is -180 up to but not including 180 (longitudeType): 180 is written as -180.
            let lon = p.longitude == 180 ? -180 : p.longitude
            x += "      <trkpt lat=\"\(XMLText.decimal(p.latitude, digits: 9))\" lon=\"\(XMLText.decimal(lon, digits: 9))\">"
            if let ele = p.elevation { x += "<ele>\(XMLText.decimal(ele, digits: 3))</ele>" }
            x += "<time>\(WorkoutTime.iso(p.time))</time>"
            if let hr = bpm[i] {
                x += "<extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>\(hr)</gpxtpx:hr></gpxtpx:TrackPointExtension></extensions>"
            }
            x += "</trkpt>\n"
        }
        x += "    </trkseg>\n  </trk>\n</gpx>\n"
        return Array(x.utf8)
    }

    /// For each position, the whole beats per minute of the heart-rate reading nearest to it in
    /// time, if one is within ``heartRateReach`` (of two equally near, the earlier); readings
    /// that round to 0 do not count.
    static func nearestHeartRates(_ workout: WorkoutTrack) -> [Int?] {
        let readings = workout.heartRate.compactMap { p -> (time: Date, bpm: Int)? in
            let bpm = Int(p.beatsPerMinute.rounded())
            return bpm >= 1 ? (p.time, bpm) : nil
        }
        var j = 0   // the first reading not before the position (both streams are in time order)
        return workout.positions.map { p in
            while j < readings.count, readings[j].time < p.time { j += 1 }
            var best: (distance: TimeInterval, bpm: Int)?
            for k in [j - 1, j] where readings.indices.contains(k) {
                let d = abs(readings[k].time.timeIntervalSince(p.time))
                if d <= heartRateReach, d < (best?.distance ?? .infinity) { best = (d, readings[k].bpm) }
            }
            return best?.bpm
        }
    }
}
