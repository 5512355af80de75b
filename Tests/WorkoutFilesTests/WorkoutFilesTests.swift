import Foundation
import HealthGateTesting
import Testing
@testable import WorkoutFiles

/// FIT, TCX and GPX workout files (docs/workout-files.md), each read back by independent readers
/// pinned from PyPI (garmin-fit-sdk's Decoder with its integrity check and fitdecode for FIT,
/// tcxreader for TCX, gpxpy and the GPX 1.1 XSD for GPX; scripts/test.sh installs them in
/// .venv-workout-files/) and compared value by value with the workout written.
@Suite("Workout files: FIT, TCX and GPX read back by independent readers to the same heart rate, RR, totals and times", .serialized)
struct WorkoutFilesTests {
    static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let python = here.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".venv-workout-files/bin/python")
    static let utc = TimeZone(secondsFromGMT: 0)!

    // MARK: - Fixtures

    /// An instant from ISO 8601 text with or without a fraction (`2026-11-05T08:00:00.250Z`).
    static func at(_ text: String) -> Date {
        let f = ISO8601DateFormatter()
        f.formatOptions = text.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        guard let d = f.date(from: text) else { Issue.record("bad date \(text)"); return Date(timeIntervalSince1970: 0) }
        return d
    }

    /// A workout of `seconds` from `start`: a heart rate each second that wanders (not a
    /// constant a broken writer could hit by chance), an RR interval for each beat with the given
    /// gaps, optional positions each second along a line, one pause when asked.
    static func workout(activity: String = "running", start: Date, seconds: Int, pause: Range<Int>? = nil,
                        rrGapsAfter: Set<Int> = [], positions: Bool = false, device: WorkoutDevice? = polar) -> WorkoutTrack {
        let heartRate = (0..<seconds).map { i in
            HeartRatePoint(time: start.addingTimeInterval(Double(i)), beatsPerMinute: Double(70 + (i * 37) % 90))
        }
        var rr: [Double?] = []
        for (i, p) in heartRate.enumerated() {
            // The beats of that second at its rate, to the millisecond, with odd milliseconds.
            rr.append(((60 / p.beatsPerMinute) * 1000).rounded() / 1000 + 0.001 * Double(i % 3))
            if rrGapsAfter.contains(i) { rr.append(nil) }
        }
        let route = positions ? (0..<seconds).map { i in
            TrackPosition(time: start.addingTimeInterval(Double(i)), latitude: 47.376_887_1 + Double(i) * 0.000_011,
                          longitude: 8.541_694_3 - Double(i) * 0.000_017, elevation: 408.4 + Double(i % 7))
        } : []
        let pauses = pause.map { [start.addingTimeInterval(Double($0.lowerBound))..<start.addingTimeInterval(Double($0.upperBound))] } ?? []
        let bpms = heartRate.map(\.beatsPerMinute)
        return WorkoutTrack(id: UUID(), activity: activity, start: start, end: start.addingTimeInterval(Double(seconds)), pauses: pauses,
                            heartRate: heartRate, rrIntervals: rr, positions: route,
                            totals: WorkoutTotals(energyKilocalories: 123.4, distanceMeters: 1234.56, steps: 1000,
                                                  averageHeartRate: bpms.isEmpty ? nil : bpms.reduce(0, +) / Double(bpms.count),
                                                  maximumHeartRate: bpms.max()),
                            device: device)
    }

    static let polar = WorkoutDevice(name: "Polar H10 A1B2C3D4", manufacturer: "Polar Electro Oy", model: "H10",
                                     serialNumber: "2718281", softwareVersion: "3.0.35")

    // MARK: - Reading back

    /// The reader's summary of `bytes` as a `kind` file (nil when the venv is missing outside CI: skipped).
    static func read(_ kind: String, _ bytes: [UInt8]) async throws -> [String: Any]? {
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            let note = "WorkoutFilesTests: \(python.path) is missing: run scripts/test.sh (it installs the pinned readers)"
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record(Comment(rawValue: note)) } else { print("note: \(note); skipped") }
            return nil
        }
        let (status, data, stderr) = try await offThread { try runReader(kind, bytes) }
        try #require(status == 0, "the \(kind) reader failed: \(stderr)")
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "not JSON: \(String(decoding: data, as: UTF8.self))")
    }

    /// ``read(_:_:)``'s work, which waits for the reader process: run off the cooperative pool
    /// (in the one-thread pool pass it would stall every other suite's waiting).
    static func runReader(_ kind: String, _ bytes: [UInt8]) throws -> (status: Int32, stdout: Data, stderr: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("workout-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("workout.\(kind)"), errors = dir.appendingPathComponent("stderr")
        try Data(bytes).write(to: file)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let process = Process()
        process.executableURL = python
        process.arguments = [here.appendingPathComponent("read_workout_file.py").path, kind, file.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data, (try? String(contentsOf: errors, encoding: .utf8)) ?? "")
    }

    /// Readers' heart rates as [Unix second (floored, FIT's resolution) or millisecond: bpm].
    static func heartRates(_ summary: [String: Any], perSecond: Bool) -> [Int64: Int] {
        var out: [Int64: Int] = [:]
        for case let pair as [Any] in summary["heart_rate"] as? [Any] ?? [] {
            guard let t = pair[0] as? Double, let bpm = pair[1] as? Int else { continue }
            out[perSecond ? Int64(t.rounded(.down)) : Int64((t * 1000).rounded())] = bpm
        }
        return out
    }

    /// The workout's heart rates in the same form: whole bpm, readings that round to 0 left out.
    static func expectedHeartRates(_ w: WorkoutTrack, perSecond: Bool) -> [Int64: Int] {
        var out: [Int64: Int] = [:]
        for p in w.heartRate where p.beatsPerMinute.rounded() >= 1 {
            let t = p.time.timeIntervalSince1970
            out[perSecond ? Int64(t.rounded(.down)) : Int64((t * 1000).rounded())] = Int(p.beatsPerMinute.rounded())
        }
        return out
    }

    /// The workout's RR intervals as FIT holds them: milliseconds, nil for a gap and for an
    /// interval too long for a uint16 of milliseconds.
    static func expectedRR(_ w: WorkoutTrack) -> [Int?] {
        w.rrIntervals.map { rr in rr.flatMap { $0 * 1000 < 65_534.5 ? Int(($0 * 1000).rounded()) : nil } }
    }

    static func rr(_ summary: [String: Any]) -> [Int?] {
        (summary["rr"] as? [Any] ?? []).map { $0 as? Int }
    }

    static func problems(_ summary: [String: Any]) -> [String] { summary["problems"] as? [String] ?? ["no problems list"] }

    /// Checks the FIT file of `w` with both decoders against `w`; returns the SDK's summary.
    @discardableResult
    static func checkFIT(_ w: WorkoutTrack, _ sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any]? {
        guard let both = try await read("fit", try FITWriter.write(w, timeZone: utc)) else { return nil }
        let sdk = try #require(both["sdk"] as? [String: Any]), fitdecode = try #require(both["fitdecode"] as? [String: Any])
        for (name, s) in [("garmin-fit-sdk", sdk), ("fitdecode", fitdecode)] {
            #expect(problems(s).isEmpty, "\(name): \(problems(s))", sourceLocation: sourceLocation)
            #expect(heartRates(s, perSecond: true) == expectedHeartRates(w, perSecond: true), "\(name): heart rate per second", sourceLocation: sourceLocation)
            #expect(rr(s) == expectedRR(w), "\(name): RR intervals", sourceLocation: sourceLocation)
            let start = w.start.timeIntervalSince1970.rounded(.down), end = w.end.timeIntervalSince1970.rounded(.down)
            #expect(s["start"] as? Double == start && s["end"] as? Double == end, "\(name): start \(s["start"] ?? "-"), end \(s["end"] ?? "-")",
                    sourceLocation: sourceLocation)
            #expect(abs((s["elapsed"] as? Double ?? -1) - w.elapsedTime) < 0.0005, "\(name): elapsed \(s["elapsed"] ?? "-")", sourceLocation: sourceLocation)
            #expect(abs((s["timer"] as? Double ?? -1) - w.timerTime) < 0.0005, "\(name): timer \(s["timer"] ?? "-")", sourceLocation: sourceLocation)
            #expect((s["calories"] as? Int).map(Double.init) == w.totals.energyKilocalories?.rounded(), "\(name): calories", sourceLocation: sourceLocation)
            #expect(abs((s["distance"] as? Double ?? -1) - (w.totals.distanceMeters ?? -1)) < 0.005, "\(name): distance", sourceLocation: sourceLocation)
            #expect((s["avg_hr"] as? Int).map(Double.init) == w.totals.averageHeartRate?.rounded(), "\(name): average heart rate", sourceLocation: sourceLocation)
            #expect((s["max_hr"] as? Int).map(Double.init) == w.totals.maximumHeartRate?.rounded(), "\(name): maximum heart rate", sourceLocation: sourceLocation)
            // Positions: one a second (the last of each), to a semicircle (180 / 2^31 degrees),
            // elevation to FIT's 0.2 m; longitudes compared round the globe (180° is -180°).
            var expected: [Int64: TrackPosition] = [:]
            for p in w.positions { expected[Int64(p.time.timeIntervalSince1970.rounded(.down))] = p }
            let positions = s["positions"] as? [[Any]] ?? []
            #expect(positions.count == expected.count, "\(name): \(positions.count) positions", sourceLocation: sourceLocation)
            for read in positions {
                let t = Int64(read[0] as? Double ?? -1), lat = read[1] as? Double ?? 999, lon = read[2] as? Double ?? 999
                guard let p = expected[t] else { Issue.record("\(name): a position at \(t) the workout lacks", sourceLocation: sourceLocation); continue }
                let dLon = abs(lon - p.longitude).truncatingRemainder(dividingBy: 360)
                #expect(abs(lat - p.latitude) < 1e-7 && min(dLon, 360 - dLon) < 1e-7
                        && abs((read[3] as? Double ?? -1e9) - (p.elevation ?? -1e9)) <= 0.1, "\(name): \(read) for \(p)", sourceLocation: sourceLocation)
            }
        }
        return sdk
    }

    /// Checks the TCX file of `w` against `w`; returns the summary.
    @discardableResult
    static func checkTCX(_ w: WorkoutTrack, _ sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any]? {
        guard let s = try await read("tcx", try TCXWriter.write(w)) else { return nil }
        #expect(problems(s).isEmpty, "\(problems(s))", sourceLocation: sourceLocation)
        #expect(heartRates(s, perSecond: false) == expectedHeartRates(w, perSecond: false), "TCX heart rate at each instant", sourceLocation: sourceLocation)
        #expect(s["start"] as? Double == w.start.timeIntervalSince1970 && s["lap_start"] as? Double == w.start.timeIntervalSince1970,
                "TCX start \(s["start"] ?? "-")", sourceLocation: sourceLocation)
        #expect(abs((s["timer"] as? Double ?? -1) - w.timerTime) < 0.0005, "TCX timer", sourceLocation: sourceLocation)
        #expect((s["calories"] as? Int).map(Double.init) == (w.totals.energyKilocalories ?? 0).rounded(), "TCX calories", sourceLocation: sourceLocation)
        #expect(abs((s["distance"] as? Double ?? -1) - (w.totals.distanceMeters ?? 0)) < 0.0005, "TCX distance", sourceLocation: sourceLocation)
        #expect((s["avg_hr"] as? Int).map(Double.init) == w.totals.averageHeartRate?.rounded(), "TCX average heart rate", sourceLocation: sourceLocation)
        #expect((s["max_hr"] as? Int).map(Double.init) == w.totals.maximumHeartRate?.rounded(), "TCX maximum heart rate", sourceLocation: sourceLocation)
        #expect((s["steps"] as? Int).map(Double.init) == w.totals.steps, "TCX steps", sourceLocation: sourceLocation)
        return s
    }

    /// Checks the GPX file of `w` against `w` (positions exact, heart rate by the nearest rule); returns the summary.
    @discardableResult
    static func checkGPX(_ w: WorkoutTrack, _ sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any]? {
        guard let s = try await read("gpx", try GPXWriter.write(w)) else { return nil }
        #expect(problems(s).isEmpty, "\(problems(s))", sourceLocation: sourceLocation)
        let positions = (s["positions"] as? [[Any]] ?? [])
        #expect(positions.count == w.positions.count, "GPX points", sourceLocation: sourceLocation)
        for (read, p) in zip(positions, w.positions) {
            let t = read[0] as? Double ?? -1, lat = read[1] as? Double ?? 999, lon = read[2] as? Double ?? 999
            #expect(abs(t - p.time.timeIntervalSince1970) < 0.0005 && abs(lat - p.latitude) < 1e-9 && abs(lon - p.longitude) < 1e-9
                    && abs((read[3] as? Double ?? -1e9) - (p.elevation ?? -1e9)) < 0.0005, "GPX point \(read) for \(p)", sourceLocation: sourceLocation)
        }
        // The nearest rule, computed here by brute force: each position's heart rate is that of the
        // nearest reading within a second, the earlier of two equally near.
        var expected: [Int64: Int] = [:]
        for p in w.positions {
            let candidates = w.heartRate.filter { $0.beatsPerMinute.rounded() >= 1 && abs($0.time.timeIntervalSince(p.time)) <= 1 }
            if let best = candidates.min(by: { abs($0.time.timeIntervalSince(p.time)) < abs($1.time.timeIntervalSince(p.time)) }) {
                expected[Int64((p.time.timeIntervalSince1970 * 1000).rounded())] = Int(best.beatsPerMinute.rounded())
            }
        }
        #expect(heartRates(s, perSecond: false) == expected, "GPX heart rate at each point", sourceLocation: sourceLocation)
        #expect(s["type"] as? String == w.activity && s["creator"] as? String == "HealthGate", sourceLocation: sourceLocation)
        return s
    }

    // MARK: - The formats

    @Test("FIT: both decoders read the same heart rate per second, RR to the millisecond with its gaps, totals, times, timer events, sport and devices")
    func fit() async throws {
        let w = Self.workout(start: Self.at("2026-11-05T08:00:00Z"), seconds: 600, pause: 200..<260, rrGapsAfter: [4, 99, 100, 317])
        guard let s = try await Self.checkFIT(w) else { return }
        #expect(s["sport"] as? String == "running" && s["sub_sport"] as? String == "generic")
        #expect(s["strides"] as? Int == 500, "1000 steps are 500 strides: \(s["strides"] ?? "-")")
        #expect(s["counts"] as? [String: Int] == ["session": 1, "lap": 1, "activity": 1])
        let t0 = w.start.timeIntervalSince1970
        let events = (s["events"] as? [[Any]] ?? []).map { "\(Int(($0[0] as? Double ?? 0) - t0)) \($0[1]) \($0[2])" }
        #expect(events == ["0 timer start", "200 timer stop_all", "260 timer start", "600 timer stop_all"])
        let file = s["file"] as? [String: Any] ?? [:]
        #expect(file["type"] as? String == "activity" && file["manufacturer"] as? String == "development"
                && file["serial_number"] as? Int == 2_718_281 && file["time_created"] as? Double == t0)
        let devices = s["devices"] as? [[String: Any]] ?? []
        #expect(devices.count == 2 && devices.first?["product_name"] as? String == "HealthGate")
        #expect(devices.last?["product_name"] as? String == "H10" && devices.last?["descriptor"] as? String == "Polar H10 A1B2C3D4"
                && devices.last?["serial_number"] as? Int == 2_718_281)
        let activity = s["activity"] as? [String: Any] ?? [:]
        #expect(activity["num_sessions"] as? Int == 1 && activity["timestamp"] as? Double == t0 + 600)
        // Every RR of the input is there; the four gaps are hrv messages without a valid interval.
        #expect(Self.rr(s).filter { $0 == nil }.count == 4 && Self.rr(s).count == 604)
    }

    @Test("FIT's local time is the time zone's, and the same workout gives the same bytes")
    func fitLocalTimeAndStable() async throws {
        let w = Self.workout(start: Self.at("2026-07-01T10:00:00Z"), seconds: 30)
        let a = try FITWriter.write(w, timeZone: TimeZone(secondsFromGMT: 7200)!), b = try FITWriter.write(w, timeZone: TimeZone(secondsFromGMT: 7200)!)
        #expect(a == b)
        guard let both = try await Self.read("fit", a), let s = both["sdk"] as? [String: Any] else { return }
        let local = (s["activity"] as? [String: Any])?["local_timestamp"] as? Int
        // local_timestamp is seconds since FIT's epoch in local time: the UTC end + 2 h.
        #expect(local.map { Double($0) + 631_065_600 } == w.end.timeIntervalSince1970 + 7200, "\(String(describing: local))")
    }

    @Test("FIT's CRCs: CRC-16/ARC's check value, and a flipped byte is caught by garmin-fit-sdk and fitdecode")
    func fitCRC() async throws {
        // The FIT CRC is CRC-16/ARC; its catalogue check value over "123456789" is 0xBB3D.
        #expect(FITEncoder.crc(Array("123456789".utf8)) == 0xBB3D)
        let w = Self.workout(start: Self.at("2026-11-05T08:00:00Z"), seconds: 20)
        var bytes = try FITWriter.write(w, timeZone: Self.utc)
        #expect(bytes.count > 16 && bytes[8..<12].elementsEqual(Array(".FIT".utf8)) && bytes[0] == 14)
        bytes[40] ^= 0x01
        guard let both = try await Self.read("fit", bytes) else { return }
        let sdk = Self.problems(both["sdk"] as? [String: Any] ?? [:]), fitdecode = Self.problems(both["fitdecode"] as? [String: Any] ?? [:])
        #expect(sdk.contains { $0.contains("integrity") }, "\(sdk)")
        #expect(!fitdecode.isEmpty, "fitdecode read a corrupted file without complaint")
    }

    @Test("TCX: tcxreader reads the heart rate at each instant, the lap's totals, the sport and the Creator; elements in the schema's order")
    func tcx() async throws {
        let w = Self.workout(start: Self.at("2026-11-05T08:00:00Z"), seconds: 600, pause: 200..<260, positions: true)
        guard let s = try await Self.checkTCX(w) else { return }
        #expect(s["sport"] as? String == "Running")
        let positions = s["positions"] as? [[Any]] ?? []
        #expect(positions.count == 600 && positions.first.map { abs(($0[1] as? Double ?? 0) - 47.376_887_1) < 1e-9 } == true)
        let creator = s["creator"] as? [String: Any] ?? [:]
        #expect(creator["name"] as? String == "Polar H10 A1B2C3D4" && creator["unit_id"] as? Int == 2_718_281
                && creator["version"] as? [Int] == [3, 0, 35, 0])
        // Whole seconds are written without a fraction.
        #expect((s["times"] as? [String])?.first == "2026-11-05T08:00:00Z")
    }

    @Test("GPX: valid against the GPX 1.1 schema; gpxpy reads every position with its heart rate; a new segment after a pause")
    func gpx() async throws {
        let w = Self.workout(activity: "hiking", start: Self.at("2026-11-05T08:00:00Z"), seconds: 300, pause: 100..<130, positions: true)
        guard let s = try await Self.checkGPX(w) else { return }
        #expect(s["segments"] as? [Int] == [130, 170], "\(s["segments"] ?? "-")")
        #expect(s["source"] as? String == "Polar H10 A1B2C3D4")
        #expect(s["start"] as? Double == w.start.timeIntervalSince1970)
    }

    @Test("GPX: a position takes the nearest heart rate within a second, the earlier of two as near; none further away")
    func gpxNearest() async throws {
        var w = Self.workout(activity: "cycling", start: Self.at("2026-11-05T08:00:00Z"), seconds: 60)
        // Positions half a second off the readings (a tie: the earlier wins), 0.3 s off, and in a
        // stretch where the strap had nothing (readings 20...39 removed).
        w.heartRate.removeSubrange(20..<40)
        w.positions = stride(from: 0.5, to: 59, by: 0.8).map { s in
            TrackPosition(time: w.start.addingTimeInterval(s), latitude: -33.86 + s * 1e-5, longitude: 151.21, elevation: nil)
        }
        guard let s = try await Self.checkGPX(w) else { return }
        let withHR = Self.heartRates(s, perSecond: false).count
        #expect(withHR > 0 && withHR < w.positions.count, "\(withHR) of \(w.positions.count) points have a heart rate")
    }

    @Test("GPX of a strap-only workout (no positions) throws noPositions, saying to export TCX or FIT")
    func gpxWithoutPositions() async throws {
        let w = Self.workout(start: Self.at("2026-11-05T08:00:00Z"), seconds: 60)
        #expect(throws: WorkoutFileError.noPositions) { try GPXWriter.write(w) }
        #expect(throws: WorkoutFileError.noPositions) { try WorkoutFileFormat.gpx.write(w) }
        let sentence = WorkoutFileError.noPositions.description
        #expect(sentence.contains("no positions") && sentence.contains("TCX") && sentence.contains("FIT"))
        // The other two take the same workout.
        #expect(try !FITWriter.write(w).isEmpty && !TCXWriter.write(w).isEmpty)
    }

    // MARK: - Boundaries

    @Test("boundaries: one second, crossing midnight UTC, a fractional start, no heart rate, a gap first and last", arguments: [
        ("one second", "2026-11-05T08:00:00Z", 1),
        ("across midnight UTC", "2026-12-31T23:59:30Z", 60),
        ("fractional start", "2026-11-05T08:00:00.250Z", 30),
        ("no heart rate", "2026-11-05T08:00:00Z", 0),
    ])
    func boundaries(name: String, start: String, seconds: Int) async throws {
        var w = Self.workout(start: Self.at(start), seconds: seconds, positions: true)
        if seconds == 0 {
            w.end = w.start.addingTimeInterval(45)   // a workout with no readings at all
            w.positions = [TrackPosition(time: w.start.addingTimeInterval(10), latitude: 0, longitude: 179.999_999_9)]
            w.totals = WorkoutTotals()
            w.device = nil
        }
        if seconds == 1 { w.rrIntervals = [nil] + w.rrIntervals + [nil] }
        try await Self.checkFIT(w)
        try await Self.checkTCX(w)
        try await Self.checkGPX(w)
        if seconds == 0 {
            // Nothing at all: a lap without a Track in TCX, a FIT file of events and summaries.
            w.positions = []
            try await Self.checkFIT(w)
            try await Self.checkTCX(w)
        }
        if name == "fractional start", let s = try await Self.read("tcx", try TCXWriter.write(w)) {
            #expect((s["times"] as? [String])?.first == "2026-11-05T08:00:00.250Z")
        }
    }

    @Test("RR: more than five beats in a second fill several hrv messages; an interval over 65.534 s (FIT's uint16 ms) is written as a gap")
    func rrEdges() async throws {
        var w = Self.workout(start: Self.at("2026-11-05T08:00:00Z"), seconds: 3)
        // 13 beats of 0.15 s (400 bpm: six or seven a second, more than an hrv message's five), then
        // the largest interval FIT holds, one it cannot, intervals between milliseconds (rounded to
        // the nearest), and a gap at a message boundary.
        w.rrIntervals = Array(repeating: 0.15, count: 13) + [65.534, 65.535, 0.999, 0.8, 0.8006, 0.8024, 0.803, nil, 0.5]
        // The messages as written: five to a message, the last of a run padded, a gap all invalid.
        let five = [UInt16?](repeating: nil, count: 5)
        #expect(FITWriter.hrvMessages([0.8, 0.8, 0.8, 0.8, 0.8, 0.8, nil, 0.5, 70])
                == [[800, 800, 800, 800, 800], [800, nil, nil, nil, nil], five, [500, nil, nil, nil, nil], five])
        guard let s = try await Self.checkFIT(w) else { return }
        #expect(Self.rr(s) == Array(repeating: 150, count: 13) + [65_534, nil, 999, 800, 801, 802, 803, nil, 500])
    }

    @Test("XML escaping: a device name with < & \" > reads back unchanged from TCX, GPX and FIT")
    func escaping() async throws {
        let name = "Strap <A&B> \"chest\" 'x'"
        var w = Self.workout(start: Self.at("2026-11-05T08:00:00Z"), seconds: 5, positions: true)
        w.device?.name = name
        w.activity = "other"
        if let s = try await Self.checkTCX(w) { #expect((s["creator"] as? [String: Any])?["name"] as? String == name) }
        if let s = try await Self.checkGPX(w) { #expect(s["source"] as? String == name) }
        if let s = try await Self.checkFIT(w) { #expect((s["devices"] as? [[String: Any]])?.last?["descriptor"] as? String == name) }
        let text = String(decoding: try TCXWriter.write(w), as: UTF8.self)
        #expect(text.contains("Strap &lt;A&amp;B&gt; &quot;chest&quot; &apos;x&apos;"))
    }

    @Test("activities map to FIT sport and sub-sport and TCX sport as the readers name them", arguments: [
        ("cycling", "cycling", "generic", "Biking"),
        ("walking", "walking", "generic", "Other"),
        ("traditionalStrengthTraining", "training", "strength_training", "Other"),
        ("highIntensityIntervalTraining", "hiit", "generic", "Other"),
        ("yoga", "training", "yoga", "Other"),
        ("rowing", "rowing", "generic", "Other"),
        ("swimming", "swimming", "generic", "Other"),
        ("aNameHealthKitLacks", "generic", "generic", "Other"),
    ])
    func sports(activity: String, sport: String, subSport: String, tcxSport: String) async throws {
        let w = Self.workout(activity: activity, start: Self.at("2026-11-05T08:00:00Z"), seconds: 10)
        if let s = try await Self.checkFIT(w) {
            #expect(s["sport"] as? String == sport && s["sub_sport"] as? String == subSport, "\(s["sport"] ?? "-") \(s["sub_sport"] ?? "-")")
            // Strides only for running and walking (FIT's total_strides); other sports carry no steps.
            #expect((s["strides"] as? Int) == (sport == "walking" ? 500 : nil))
        }
        if let s = try await Self.checkTCX(w) { #expect(s["sport"] as? String == tcxSport) }
    }

    // MARK: - Refusals

    @Test("an inconsistent workout is refused with a sentence naming the problem and what to do")
    func refusals() async throws {
        let start = Self.at("2026-11-05T08:00:00Z")
        let good = Self.workout(start: start, seconds: 10)
        var backwards = good; backwards.end = start.addingTimeInterval(-1)
        var unsorted = good; unsorted.heartRate.swapAt(2, 3)
        var outside = good; outside.heartRate.append(HeartRatePoint(time: start.addingTimeInterval(11), beatsPerMinute: 80))
        var tooFast = good; tooFast.heartRate[1].beatsPerMinute = 300
        var badRR = good; badRR.rrIntervals[0] = -0.5
        var overlapping = good; overlapping.pauses = [start.addingTimeInterval(2)..<start.addingTimeInterval(5), start.addingTimeInterval(4)..<start.addingTimeInterval(6)]
        var nowhere = good; nowhere.positions = [TrackPosition(time: start, latitude: 91, longitude: 0)]
        var tooMuch = good; tooMuch.totals.energyKilocalories = 70_000
        var early = good; early.start = Self.at("1998-01-01T00:00:00Z"); early.end = early.start.addingTimeInterval(10); early.heartRate = []
        for (w, says) in [(backwards, "before it starts"), (unsorted, "heart-rate point 3"), (outside, "outside the workout"),
                          (tooFast, "300.0 bpm"), (badRR, "RR interval 0 is -0.5 s"), (overlapping, "pause 1"),
                          (nowhere, "not a place on Earth"), (tooMuch, "energy (kcal) is 70000.0")] {
            for format in WorkoutFileFormat.allCases {
                do {
                    _ = try format.write(w)
                    Issue.record("\(format) wrote a workout that should be refused (\(says))")
                } catch let e as WorkoutFileError {
                    #expect(e.description.contains(says), "\(format): \(e)")
                }
            }
        }
        // FIT alone cannot say times before 1998-07-03 (it reads them as seconds since power-on).
        #expect(throws: WorkoutFileError.outsideFITTime(start: early.start, end: early.end)) { try FITWriter.write(early) }
        #expect(try !TCXWriter.write(early).isEmpty)
    }
}
