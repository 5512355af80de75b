import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
@testable import HeartRateVariability
import Testing

/// Beats rebuilt from stored samples, windows on the clock with their boundaries, runs split at
/// gaps, refusals, and `healthgate hrv` through the binary.
@Suite("HRV windows: beats from stored RR, window edges, gaps, refusals, and the hrv command")
struct WindowedHRVTests {
    /// 08:00:00Z on 2026-11-05, a 5-minute boundary.
    static let t0 = 1_793_865_600.0
    static let strap = Device(name: "Strap A", localIdentifier: "AA:01")

    /// Notifications of two RR intervals each, alternating 1000 and 1100 ticks, received exactly
    /// when their last beat fell, from `t0` for `seconds`; `gapAt` marks one as after lost beats.
    static func samples(seconds: Double, gapAt: Int? = nil, driftAt: Int? = nil) throws -> [QuantitySample] {
        var out: [QuantitySample] = []
        var ticks: Int64 = 0
        var i = 0
        while Double(ticks) / 1024 < seconds {
            ticks += 2100
            var t = t0 + Double(ticks) / 1024
            if let d = driftAt, i >= d { t += 5 }   // notifications lost without a mark: the receipts jump
            out.append(try QuantitySample(type: .heartRate, quantity: Quantity(57, .countPerMinute), start: Date(timeIntervalSince1970: t),
                                          end: Date(timeIntervalSince1970: t), source: Source(name: "HealthGate BLE"), device: strap,
                                          rrIntervals: RRIntervals(ticks: [1000, 1100], precededByGap: i == gapAt)))
            i += 1
        }
        return out
    }

    /// Seconds after `t0` of beats 1…700 of ``samples(seconds:gapAt:driftAt:)``: pairs of 1000 and 1100 ticks.
    static let beatTimes: [Double] = (1...700).map { (k: Int) -> Double in
        let ticks: Int = (k / 2) * 2100 + (k % 2 == 1 ? 1000 : 0)
        return Double(ticks) / 1024
    }

    @Test("a beat on a window's end belongs to the next window; each window's measures are exact")
    func windowEdges() throws {
        // 300 s of beats: each 2.05 s pair → windows [08:00, 08:05) and [08:05, 08:10).
        let series = BeatSeries(try Self.samples(seconds: 600))
        #expect(series.runs.count == 1 && series.runs[0].start == Self.t0)
        let w = WindowedHRV(series, length: 300, from: Self.t0, to: Self.t0 + 600, maxArtefacts: 0.1).windows
        #expect(w.count == 2 && w[0].start == Self.t0 && w[0].end == Self.t0 + 300)
        // Beats strictly before 08:05: beat k at (k/2 × 2100 + (k odd ? 1000 : 0))/1024 s.
        let beatTimes = Self.beatTimes
        #expect(w[0].intervals == beatTimes.filter { $0 < 300 }.count)
        #expect(w[0].intervals + w[1].intervals == beatTimes.filter { $0 < 600 }.count)
        let m = try #require(w[0].measures)
        #expect(m.rmssd == 100.0 * 1000 / 1024)                  // every difference is ±100 ticks
        #expect(m.pnn50 == Double(m.differences) / Double(m.intervals) * 100)
        #expect(w[0].corrected == 0)
        // One beat a second from 08:00:00: beat 300 falls exactly on 08:05:00 and opens the
        // second window; 08:10:00 (beat 600) is outside the range [08:00, 08:10).
        let steady = BeatSeries(runs: [.init(start: Self.t0, beats: (0...600).map { Int64($0) * 1024 })])
        let edge = WindowedHRV(steady, length: 300, from: Self.t0, to: Self.t0 + 600, maxArtefacts: 0).windows
        #expect(edge.map(\.intervals) == [299, 300])
        #expect(edge.map { $0.measures?.meanNN } == [1000, 1000] && edge.map { $0.measures?.rmssd } == [0, 0])
    }

    @Test("a gap mark or a receipt 5 s off splits the run; no successive difference crosses it")
    func runsSplit() throws {
        let marked = BeatSeries(try Self.samples(seconds: 120, gapAt: 20))
        #expect(marked.runs.count == 2)
        let drifted = BeatSeries(try Self.samples(seconds: 120, driftAt: 30))
        #expect(drifted.runs.count == 2)
        let one = try #require(WindowedHRV(marked, length: nil, from: -.infinity, to: .infinity, maxArtefacts: 1).windows.first?.measures)
        // Two runs: every interval counts for SDNN, the differences lose one per run boundary.
        let total = marked.runs.reduce(0) { $0 + $1.beats.count - 1 }
        #expect(one.intervals == total && one.differences == total - 2)
    }

    @Test("refusals: a window mostly without beats, and one with more artefacts than allowed, say why")
    func refusals() throws {
        // 61.5 s of beats (30 pairs) in a 5-minute window: 21% covered.
        let sparse = WindowedHRV(BeatSeries(try Self.samples(seconds: 60)), length: 300, from: Self.t0, to: Self.t0 + 300, maxArtefacts: 0.1)
        #expect(sparse.windows.first?.measures == nil)
        #expect(sparse.windows.first?.refusal?.contains("cover 21% of the window (at least 50% needed)") == true, "\(sparse.windows)")
        // A noisy series with a missed beat and no artefact allowed.
        var rr = ArtefactCorrectionTests.rr(300, seed: 3)
        rr[150] += rr.remove(at: 151)
        let series = BeatSeries(runs: [.init(start: Self.t0, beats: ArtefactCorrectionTests.beats(rr))])
        let strict = WindowedHRV(series, length: nil, from: -.infinity, to: .infinity, maxArtefacts: 0)
        #expect(strict.windows.first?.refusal?.contains("were artefacts (more than the 0% allowed)") == true, "\(strict.windows)")
        let lenient = WindowedHRV(series, length: nil, from: -.infinity, to: .infinity, maxArtefacts: 0.05)
        #expect(lenient.windows.first?.measures != nil && lenient.windows.first?.missed == 1)
    }

    @Test("healthgate hrv: JSON per device with windows and the whole range; table; bad options exit 64")
    func command() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hrv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("h.sqlite").path
        try HealthStore(path: db).save(try Self.samples(seconds: 600))
        let range = ["--from", "2026-11-05T08:00:00Z", "--to", "2026-11-05T08:10:00Z"]
        // By default, 60 s and 5 min windows: one entry per device and length, shortest first.
        let both = try HealthGateExecutable.run(["hrv", "--db", db, "--json"] + range)
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(both.stdout.utf8)) as? [[String: Any]], "\(both.stderr)")
        #expect(entries.map { $0["window"] as? Double } == [60, 300] && entries.allSatisfy { $0["device"] as? String == "Strap A" })
        #expect((entries.first?["windows"] as? [Any])?.count == 10)
        let j = try HealthGateExecutable.run(["hrv", "--db", db, "--json", "--window", "5m"] + range)
        #expect(j.status == 0, "\(j.stderr)")
        let devices = try #require(try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [[String: Any]])
        #expect(devices.count == 1 && devices.first?["device"] as? String == "Strap A")
        #expect((devices.first?["overall"] as? [String: Any])?["sdnn"] as? Double == (entries.first?["overall"] as? [String: Any])?["sdnn"] as? Double,
                "the whole range does not depend on the window length")
        let windows = try #require(devices.first?["windows"] as? [[String: Any]])
        #expect(windows.map { $0["start"] as? String } == ["2026-11-05T08:00:00Z", "2026-11-05T08:05:00Z"])
        // Every beat before 08:10 counts, also those of a notification received after it.
        let beforeEnd = Self.beatTimes.filter { $0 < 600 }.count
        #expect(windows.reduce(0) { $0 + ($1["intervals"] as? Int ?? 0) } == beforeEnd)
        #expect(windows.first?["rmssd"] as? Double == 100.0 * 1000 / 1024)
        #expect((devices.first?["overall"] as? [String: Any])?["sdnn"] != nil)
        let table = try HealthGateExecutable.run(["hrv", "--db", db, "--window", "1m"] + range)
        #expect(table.status == 0 && table.stdout.contains("Strap A, 1 min windows:") && table.stdout.contains("whole range"), "\(table.stdout)")
        #expect(table.stdout.split(separator: "\n").count == 1 + 1 + 10 + 1, "\(table.stdout)")
        for (bad, says) in [(["--max-artefacts", "150"], "not a percentage"), (["--window", "5 minutes"], "not a duration"), (["--window", "5m,"], "not a duration"),
                            (["--from", "2026-11-05T09:00:00Z", "--to", "2026-11-05T08:00:00Z"], "must be after"),
                            (["--from", "2026-10-01T00:00:00Z", "--to", "2026-11-01T00:00:01Z"], "the range is 32 days: hrv reads at most 31")] {
            let r = try HealthGateExecutable.run(["hrv", "--db", db] + bad)
            #expect(r.status == 64 && r.stderr.contains(says), "\(bad): \(r.status) \(r.stderr)")
        }
        let month = try HealthGateExecutable.run(["hrv", "--db", db, "--from", "2026-10-06T08:00:00Z", "--to", "2026-11-06T08:00:00Z", "--json", "--window", "5m"])
        #expect(month.status == 0, "exactly 31 days is allowed: \(month.stderr)")
        // Read in 6-hour slices: the same windows, nothing counted twice or lost at a slice's edge.
        let monthDevices = try #require(try JSONSerialization.jsonObject(with: Data(month.stdout.utf8)) as? [[String: Any]])
        let monthWindows = try #require(monthDevices.first?["windows"] as? [[String: Any]])
        #expect(monthWindows.prefix(2).map { $0["intervals"] as? Int } == windows.map { $0["intervals"] as? Int })
        #expect(monthWindows.prefix(2).map { $0["rmssd"] as? Double } == windows.map { $0["rmssd"] as? Double })
        // --save: each window with a value as one SDNN and one RMSSD sample; again: replaced, not added.
        let saved = try HealthGateExecutable.run(["hrv", "--db", db, "--save", "--window", "5m"] + range)
        #expect(saved.status == 0 && saved.stderr.contains("stored 2 window(s) as SDNN and RMSSD samples (4 new, 0 replaced)"), "\(saved.stderr)")
        let again = try HealthGateExecutable.run(["hrv", "--db", db, "--save", "--window", "5m"] + range)
        #expect(again.stderr.contains("(0 new, 4 replaced)"), "\(again.stderr)")
        let store = try HealthStore(path: db)
        let rmssd = try store.samples(SampleQuery(type: .heartRateVariabilityRMSSD))
        #expect(rmssd.count == 2 && rmssd.allSatisfy { $0.quantity.value == 100.0 * 1000 / 1024 && $0.device == Self.strap })
        #expect(rmssd.first?.startDate == Date(timeIntervalSince1970: Self.t0) && rmssd.first?.endDate == Date(timeIntervalSince1970: Self.t0 + 300))
        #expect(try store.count(SampleQuery(type: .heartRateVariabilitySDNN)) == 2)
        let none = try HealthGateExecutable.run(["hrv", "--db", db, "--from", "2026-11-06"])
        #expect(none.status == 0 && none.stdout.contains("no RR intervals in the range"), "\(none.stdout)")
    }
}
