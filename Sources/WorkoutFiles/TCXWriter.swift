import Foundation

/// Writes a workout as a TCX file (Garmin's TrainingCenterDatabase v2; docs/workout-files.md,
/// "TCX"): one `Activity` with one `Lap` (the totals) holding one `Track`, a `Trackpoint` per
/// instant with a heart rate or a position, and the device as the activity's `Creator`.
/// Elements are in the order the schema's sequences require; text is XML-escaped.
public enum TCXWriter {
    /// The TCX document for `workout`, UTF-8.
    /// - Throws: ``WorkoutFileError`` when the workout is inconsistent (``WorkoutTrack/validate()``).
    public static func write(_ workout: WorkoutTrack) throws -> [UInt8] {
        try workout.validate()
        let sport = WorkoutActivity(workout.activity)
        let t = workout.totals
        let start = WorkoutTime.iso(workout.start)
        var x = """
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2 http://www.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd">
              <Activities>
                <Activity Sport="\(sport.tcxSport)">
                  <Id>\(start)</Id>
                  <Lap StartTime="\(start)">

            """
        // The lap's totals. TotalTimeSeconds is the timer time, as Garmin's devices write it;
        // DistanceMeters and Calories are required by the schema, so unknown ones are 0.
        x += "        <TotalTimeSeconds>\(XMLText.decimal(max(0, workout.timerTime), digits: 3))</TotalTimeSeconds>\n"
        x += "        <DistanceMeters>\(XMLText.decimal(t.distanceMeters ?? 0, digits: 3))</DistanceMeters>\n"
        x += "        <Calories>\(Int((t.energyKilocalories ?? 0).rounded()))</Calories>\n"
        // Heart rates are positiveByte (1...255): one that rounds to 0 is left out.
        if let bpm = t.averageHeartRate.map({ Int($0.rounded()) }), bpm >= 1 {
            x += "        <AverageHeartRateBpm><Value>\(bpm)</Value></AverageHeartRateBpm>\n"
        }
        if let bpm = t.maximumHeartRate.map({ Int($0.rounded()) }), bpm >= 1 {
            x += "        <MaximumHeartRateBpm><Value>\(bpm)</Value></MaximumHeartRateBpm>\n"
        }
        x += "        <Intensity>Active</Intensity>\n        <TriggerMethod>Manual</TriggerMethod>\n"
        let points = trackpoints(workout)
        // A Track needs at least one Trackpoint: a workout without points has none.
        if !points.isEmpty {
            x += "        <Track>\n"
            for p in points {
                x += "          <Trackpoint>\n            <Time>\(WorkoutTime.iso(p.time))</Time>\n"
                if let pos = p.position {
                    // Longitude is -180 up to but not including 180: 180 is written as -180.
                    let lon = pos.longitude == 180 ? -180 : pos.longitude
                    x += "            <Position><LatitudeDegrees>\(XMLText.decimal(pos.latitude, digits: 9))</LatitudeDegrees>"
                        + "<LongitudeDegrees>\(XMLText.decimal(lon, digits: 9))</LongitudeDegrees></Position>\n"
                    if let ele = pos.elevation { x += "            <AltitudeMeters>\(XMLText.decimal(ele, digits: 3))</AltitudeMeters>\n" }
                }
                if let bpm = p.bpm { x += "            <HeartRateBpm><Value>\(bpm)</Value></HeartRateBpm>\n" }
                x += "          </Trackpoint>\n"
            }
            x += "        </Track>\n"
        }
        // Steps: the ActivityExtension v2 lap extension's Steps (an unsignedShort: more than 65,535 is left out).
        if let steps = t.steps.map({ Int($0.rounded()) }), steps <= 65_535 {
            x += "        <Extensions><LX xmlns=\"http://www.garmin.com/xmlschemas/ActivityExtension/v2\"><Steps>\(steps)</Steps></LX></Extensions>\n"
        }
        x += "      </Lap>\n"
        if let device = workout.device {
            // Device_t: Name, UnitId (the serial when it is a number), ProductID (none: 0), Version.
            let version = versionNumbers(device.softwareVersion)
            x += "      <Creator xsi:type=\"Device_t\">\n"
            x += "        <Name>\(XMLText.escape(device.name))</Name>\n"
            x += "        <UnitId>\(device.serialNumber.flatMap(FITWriter.fitSerial) ?? 0)</UnitId>\n"
            x += "        <ProductID>0</ProductID>\n"
            x += "        <Version><VersionMajor>\(version[0])</VersionMajor><VersionMinor>\(version[1])</VersionMinor>"
                + "<BuildMajor>\(version[2])</BuildMajor><BuildMinor>\(version[3])</BuildMinor></Version>\n"
            x += "      </Creator>\n"
        }
        x += "    </Activity>\n  </Activities>\n</TrainingCenterDatabase>\n"
        return Array(x.utf8)
    }

    /// One Trackpoint: an instant (to the millisecond) with a heart rate, a position, or both.
    struct Point {
        var time: Date
        var bpm: Int?
        var position: TrackPosition?
    }

    /// The heart-rate points and positions merged by instant, to the millisecond (the precision
    /// written): a heart rate that rounds to 0 is left out, and an instant with neither is none.
    static func trackpoints(_ workout: WorkoutTrack) -> [Point] {
        var byMillisecond: [Int64: Point] = [:]
        func key(_ d: Date) -> Int64 { Int64((d.timeIntervalSince1970 * 1000).rounded()) }
        for p in workout.heartRate {
            let bpm = Int(p.beatsPerMinute.rounded())
            guard bpm >= 1 else { continue }
            byMillisecond[key(p.time), default: Point(time: p.time)].bpm = bpm
        }
        for p in workout.positions {
            byMillisecond[key(p.time), default: Point(time: p.time)].position = p
        }
        return byMillisecond.sorted { $0.key < $1.key }.map(\.value)
    }

    /// `version`'s first four dot-separated numbers (unsignedShort each), 0 for any missing or
    /// not a number: "3.0.35" → 3, 0, 35, 0.
    static func versionNumbers(_ version: String?) -> [Int] {
        let numbers = (version ?? "").split(separator: ".").prefix(4).map { Int($0).flatMap { (0...65_535).contains($0) ? $0 : nil } ?? 0 }
        return numbers + Array(repeating: 0, count: 4 - numbers.count)
    }
}
