import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

/// `healthgate workout export UUID --format fit|tcx|gpx`: the store's workout read back by the
/// independent readers of WorkoutFilesTests (garmin-fit-sdk and fitdecode, tcxreader; pinned in
/// .venv-workout-files/): the same heart rate per second and, in FIT, the same RR intervals with
/// the store's gap.
@Suite struct WorkoutFileExportTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let python = root.appendingPathComponent(".venv-workout-files/bin/python")

    static func read(_ kind: String, _ path: String) async throws -> [String: Any]? {
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            let note = "WorkoutFileExportTests: \(python.path) is missing: run scripts/test.sh (it installs the pinned readers)"
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record(Comment(rawValue: note)) } else { print("note: \(note); skipped") }
            return nil
        }
        let r = try await WorkoutTotalsTests.run([root.appendingPathComponent("Tests/WorkoutFilesTests/read_workout_file.py").path, kind, path], launcher: python)
        return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
    }

    @Test("FIT and TCX of a stored workout: heart rate per second and RR (with the gap) as stored; GPX is refused; in progress is refused")
    func export() async throws {
        let s = try WorkoutTotalsTests.Scratch()
        // 60 readings a second apart, each with one RR of 1024 ticks (1 s); the 30th after a gap.
        var samples: [QuantitySample] = []
        for k in 0..<60 {
            samples.append(try QuantitySample(type: .heartRate, quantity: Quantity(Double(100 + k), .countPerMinute),
                                              start: WorkoutTotalsTests.at(Double(k)), end: WorkoutTotalsTests.at(Double(k)),
                                              source: WorkoutTotalsTests.source, device: Device(name: "Strap", manufacturer: "Polar"),
                                              rrIntervals: RRIntervals(ticks: [UInt16(1000 + k)], precededByGap: k == 30)))
        }
        try s.store.save(samples)
        let w = WorkoutTotalsTests.workout(0, 60, events: [(.pause, 20), (.resume, 25)], devices: ["Strap"])
        try s.store.saveWorkout(w)
        let fit = s.dir.appendingPathComponent("w.fit").path, tcx = s.dir.appendingPathComponent("w.tcx").path
        for (format, file) in [("fit", fit), ("tcx", tcx)] {
            let r = try await WorkoutTotalsTests.run(["workout", "export", w.uuid.uuidString, "--db", s.path, "--format", format, "--output", file])
            #expect(r.status == 0 && r.stderr.contains("wrote running workout"), "\(format): \(r.stderr)")
        }
        let expectedHR = (0..<60).map { [WorkoutTotalsTests.at(Double($0)).timeIntervalSince1970, Double(100 + $0)] }
        if let f = try await Self.read("fit", fit) {
            for decoder in ["sdk", "fitdecode"] {
                let d = try #require(f[decoder] as? [String: Any])
                #expect((d["problems"] as? [Any])?.isEmpty == true, "\(decoder): \(d["problems"] ?? "")")
                #expect((d["heart_rate"] as? [[Double]]) == expectedHR, "\(decoder)")
                let rr = try #require(d["rr"] as? [Any])
                let expectedRR: [Double?] = (0..<30).map { (Double(1000 + $0) / 1024 * 1000).rounded() } + [nil] + (30..<60).map { (Double(1000 + $0) / 1024 * 1000).rounded() }
                #expect(rr.map { $0 as? Double } == expectedRR, "\(decoder): \(rr)")
            }
        }
        if let t = try await Self.read("tcx", tcx) {
            #expect((t["problems"] as? [Any])?.isEmpty == true, "\(t["problems"] ?? "")")
            #expect((t["heart_rate"] as? [[Double]]) == expectedHR)
        }
        let gpx = try await WorkoutTotalsTests.run(["workout", "export", w.uuid.uuidString, "--db", s.path, "--format", "gpx", "--output", fit + ".gpx"])
        #expect(gpx.status == 64 && gpx.stderr.contains("no positions"), "\(gpx.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fit + ".gpx"), "nothing written")
        let open = WorkoutTotalsTests.workout(100, nil, devices: ["Other"])
        try s.store.saveWorkout(open)
        let r = try await WorkoutTotalsTests.run(["workout", "export", open.uuid.uuidString, "--db", s.path, "--format", "fit", "--output", fit])
        #expect(r.status == 64 && r.stderr.contains("still in progress"), "\(r.stderr)")
        #expect(try await WorkoutTotalsTests.run(["workout", "export", w.uuid.uuidString, "--db", s.path, "--format", "pdf", "--output", fit]).status == 64)
    }
}
