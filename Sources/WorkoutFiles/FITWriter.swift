import Foundation

/// Writes a workout as a FIT activity file (Garmin's Flexible and Interoperable Data Transfer
/// protocol; docs/workout-files.md, "FIT"). The messages, in order: `file_id`, `device_info`
/// (HealthGate as the creator, then the recording device), timer `event`s (start, stop and start
/// around each pause, stop) among the `record`s (one per second with a heart rate or a position),
/// the `hrv` messages with the RR intervals, one `lap`, one `session`, the `activity`.
public enum FITWriter {
    /// Seconds from the Unix epoch to FIT's (1989-12-31T00:00:00Z).
    static let epochOffset: TimeInterval = 631_065_600
    /// FIT reads a `date_time` below 0x10000000 as seconds since the device was switched on, so
    /// the first instant it can say is this many seconds after its epoch (1998-07-03T21:24:16Z).
    static let firstAbsoluteTime: TimeInterval = 0x1000_0000

    /// The FIT file for `workout`. `timeZone` gives the `activity` message's local time (FIT's
    /// only local time); every other time is UTC. The same workout and time zone always give the
    /// same bytes: `time_created` is the workout's start, not the time of writing.
    /// - Throws: ``WorkoutFileError`` when the workout is inconsistent (``WorkoutTrack/validate()``)
    ///   or outside FIT's time range (before 1998-07-03T21:24:16Z, or longer than 49 days).
    public static func write(_ workout: WorkoutTrack, timeZone: TimeZone = .current) throws -> [UInt8] {
        try workout.validate()
        guard workout.start.timeIntervalSince1970 - epochOffset >= firstAbsoluteTime,
              workout.end.timeIntervalSince1970 - epochOffset < Double(UInt32.max),
              (workout.elapsedTime * 1000).rounded() < Double(UInt32.max) else {
            throw WorkoutFileError.outsideFITTime(start: workout.start, end: workout.end)
        }
        let sport = WorkoutActivity(workout.activity)
        let start = seconds(workout.start), end = seconds(workout.end)
        var fit = FITEncoder()

        // file_id: an activity file, made by HealthGate (manufacturer 255, "development": FIT
        // numbers manufacturers from its own list, and HealthGate has no number in it).
        let serial = workout.device?.serialNumber.flatMap(fitSerial)
        fit.write(global: 0, [.init(0, .enumeration, 4), .init(1, .uint16, 255), .init(2, .uint16, 0),
                              .init(3, .uint32z, serial.map(UInt64.init)), .init(4, .uint32, start),
                              .init(8, string: "HealthGate")])
        // device_info 0 is the creator (HealthGate); 1 the device that recorded the workout.
        fit.write(global: 23, [.init(253, .uint32, start), .init(0, .uint8, 0), .init(2, .uint16, 255), .init(4, .uint16, 0),
                               .init(27, string: "HealthGate")])
        if let device = workout.device {
            fit.write(global: 23, [.init(253, .uint32, start), .init(0, .uint8, 1), .init(2, .uint16, 255),
                                   .init(3, .uint32z, serial.map(UInt64.init)),
                                   .init(5, .uint16, device.softwareVersion.flatMap(fitSoftwareVersion).map(UInt64.init)),
                                   .init(27, string: device.model), .init(19, string: device.name)])
        }

        // The timer events and the records, in time order. At one second: a start before the
        // records, a stop after them.
        let hasPositions = !workout.positions.isEmpty
        var timeline: [(second: UInt64, rank: Int, fields: [FITEncoder.Field], global: UInt16)] = []
        func timer(_ at: UInt64, stop: Bool) {
            // event 0 (timer), event_type 0 (start) or 4 (stop_all, what Garmin devices write for a pause and the end).
            timeline.append((at, stop ? 2 : 0, [.init(253, .uint32, at), .init(0, .enumeration, 0),
                                                .init(1, .enumeration, stop ? 4 : 0), .init(4, .uint8, 0)], 21))
        }
        timer(start, stop: false)
        for pause in workout.pauses {
            timer(seconds(pause.lowerBound), stop: true)
            timer(seconds(pause.upperBound), stop: false)
        }
        timer(end, stop: true)
        for r in records(workout) {
            var fields: [FITEncoder.Field] = [.init(253, .uint32, r.second), .init(3, .uint8, r.bpm.map(UInt64.init))]
            if hasPositions {
                // Degrees as semicircles (2^31 per 180°). 180° east wraps to -180° (sint32 ends at
                // 2^31 - 1), and 2^31 - 1 itself is sint32's "invalid": a longitude that rounds to it
                // (within 1e-7° of 180) is written one semicircle west, 8e-8° away.
                func semicircles(_ degrees: Double) -> UInt64 {
                    var n = Int64((degrees * 2_147_483_648 / 180).rounded())
                    if n >= 2_147_483_648 { n -= 4_294_967_296 } else if n == 2_147_483_647 { n -= 1 }
                    return UInt64(UInt32(bitPattern: Int32(n)))
                }
                // enhanced_altitude: (metres + 500) × 5, uint32; an elevation below -500 m is not written.
                let altitude = r.position?.elevation.flatMap { $0 >= -500 ? UInt64(((($0 + 500) * 5).rounded())) : nil }
                fields += [.init(0, .sint32, r.position.map { semicircles($0.latitude) }),
                           .init(1, .sint32, r.position.map { semicircles($0.longitude) }),
                           .init(78, .uint32, altitude.flatMap { $0 < 0xFFFF_FFFF ? $0 : nil })]
            }
            timeline.append((r.second, 1, fields, 20))
        }
        for item in timeline.enumerated().sorted(by: { ($0.element.second, $0.element.rank, $0.offset) < ($1.element.second, $1.element.rank, $1.offset) }) {
            fit.write(global: item.element.global, item.element.fields)
        }

        // hrv: the RR intervals, five to a message, padded with 0xFFFF; a gap is a message of
        // five 0xFFFF (docs/workout-files.md, "RR intervals and gaps").
        for message in hrvMessages(workout.rrIntervals) {
            fit.write(global: 78, [.init(0, .uint16, array: message.map { $0.map(UInt64.init) })])
        }

        // One lap and one session over the whole workout, then the activity.
        let elapsed = UInt64((workout.elapsedTime * 1000).rounded())
        let timerTime = UInt64((max(0, workout.timerTime) * 1000).rounded())
        let t = workout.totals
        let distance = t.distanceMeters.map { UInt64(($0 * 100).rounded()) }
        let calories = t.energyKilocalories.map { UInt64($0.rounded()) }
        let average = t.averageHeartRate.map { UInt64($0.rounded()) }, maximum = t.maximumHeartRate.map { UInt64($0.rounded()) }
        // Steps: FIT counts strides (two steps) in total_cycles for running and walking, and has no
        // steps field for other sports.
        let strides = (sport.fitSport == 1 || sport.fitSport == 11) ? t.steps.map { UInt64(($0 / 2).rounded()) } : nil
        fit.write(global: 19, [.init(254, .uint16, 0), .init(253, .uint32, end), .init(0, .enumeration, 9), .init(1, .enumeration, 1),
                               .init(2, .uint32, start), .init(7, .uint32, elapsed), .init(8, .uint32, timerTime),
                               .init(9, .uint32, distance), .init(10, .uint32, strides), .init(11, .uint16, calories),
                               .init(15, .uint8, average), .init(16, .uint8, maximum), .init(23, .enumeration, 0),
                               .init(24, .enumeration, 7), .init(25, .enumeration, UInt64(sport.fitSport)),
                               .init(39, .enumeration, UInt64(sport.fitSubSport))])
        fit.write(global: 18, [.init(254, .uint16, 0), .init(253, .uint32, end), .init(0, .enumeration, 8), .init(1, .enumeration, 1),
                               .init(2, .uint32, start), .init(5, .enumeration, UInt64(sport.fitSport)),
                               .init(6, .enumeration, UInt64(sport.fitSubSport)), .init(7, .uint32, elapsed), .init(8, .uint32, timerTime),
                               .init(9, .uint32, distance), .init(10, .uint32, strides), .init(11, .uint16, calories),
                               .init(16, .uint8, average), .init(17, .uint8, maximum), .init(25, .uint16, 0), .init(26, .uint16, 1),
                               .init(28, .enumeration, 0)])
        let offset = Int64(timeZone.secondsFromGMT(for: workout.end))
        let local = UInt64(max(0, Int64(end) + offset))
        fit.write(global: 34, [.init(253, .uint32, end), .init(0, .uint32, timerTime), .init(1, .uint16, 1), .init(2, .enumeration, 0),
                               .init(3, .enumeration, 26), .init(4, .enumeration, 1), .init(5, .uint32, local)])
        return fit.finish()
    }

    /// `date` as a FIT `date_time`: whole seconds since FIT's epoch, the fraction dropped.
    static func seconds(_ date: Date) -> UInt64 {
        UInt64((date.timeIntervalSince1970 - epochOffset).rounded(.down))
    }

    /// One `record`: a second with a heart rate, a position, or both.
    struct Record {
        var second: UInt64
        var bpm: UInt8?
        var position: TrackPosition?
    }

    /// The heart-rate points and positions merged by FIT second (a record's time is whole
    /// seconds): the last reading of each second, a heart rate that rounds to 0 left out.
    static func records(_ workout: WorkoutTrack) -> [Record] {
        var bySecond: [UInt64: Record] = [:]
        for p in workout.heartRate {
            let bpm = p.beatsPerMinute.rounded()
            guard bpm >= 1 else { continue }
            let s = seconds(p.time)
            bySecond[s, default: Record(second: s)].bpm = UInt8(bpm)
        }
        for p in workout.positions {
            let s = seconds(p.time)
            bySecond[s, default: Record(second: s)].position = p
        }
        return bySecond.values.sorted { $0.second < $1.second }
    }

    /// The `hrv` messages' `time` arrays: milliseconds, five to a message, nil (0xFFFF) padding
    /// the last message of a run; each gap a message of five nils. An interval longer than
    /// 65.534 s (a `uint16` of milliseconds, 0xFFFF being "invalid") cannot be said: no heart
    /// pauses that long between two beats, so it is an artefact and is written as a gap.
    static func hrvMessages(_ intervals: [Double?]) -> [[UInt16?]] {
        var messages: [[UInt16?]] = []
        var run: [UInt16] = []
        func flush() {
            var i = 0
            while i < run.count {
                let chunk = run[i..<min(i + 5, run.count)].map { Optional($0) }
                messages.append(chunk + Array(repeating: nil, count: 5 - chunk.count))
                i += 5
            }
            run.removeAll()
        }
        for rr in intervals {
            if let rr, (rr * 1000).rounded() < 65_535 {
                run.append(UInt16((rr * 1000).rounded()))
            } else {
                flush()
                messages.append(Array(repeating: nil, count: 5))
            }
        }
        flush()
        return messages
    }

    /// `serial` as FIT's `uint32z` serial number, when it is a decimal number it can hold.
    static func fitSerial(_ serial: String) -> UInt32? {
        guard !serial.isEmpty, serial.allSatisfy(\.isASCII), let n = UInt32(serial), n != 0, n != UInt32.max else { return nil }
        return n
    }

    /// `version` as FIT's `software_version` (a `uint16` of hundredths): "3" → 300, "3.5" → 350,
    /// "3.05" → 305; nil for anything else ("3.0.35" has no such form: TCX and GPX keep it).
    static func fitSoftwareVersion(_ version: String) -> UInt16? {
        let parts = version.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let major = Int(parts[0]) else { return nil }
        var hundredths = 0
        if parts.count == 2 {
            guard parts[1].count <= 2, let minor = Int(parts[1]) else { return nil }
            hundredths = parts[1].count == 1 ? minor * 10 : minor
        }
        let value = major * 100 + hundredths
        return value < 0xFFFF ? UInt16(value) : nil
    }
}
