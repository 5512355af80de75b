import Foundation
import HealthModel
import HealthStore
import Testing
import HealthGateTesting
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `healthgate replay` over the shipped captures, as a real child process.
@Suite(.serialized) struct ReplayTests {
    let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("samples")

    func replay(_ file: String, _ extra: [String] = [], db: String = tempDBPath("replay")) async throws -> (Int32, [String: Any], String) {
        let child = try Child(["replay", samples.appendingPathComponent(file).path, "--db", db, "--json"] + extra)
        let status = await offThread { child.wait() }
        let obj = (try? JSONSerialization.jsonObject(with: Data(child.stdout.utf8))) as? [String: Any] ?? [:]
        return (status, obj, db)
    }

    @Test func everyHeartRateNotificationOfTheStrapSessionIsStored() async throws {
        let (status, summary, db) = try await replay("strap-session.capture.jsonl", ["--max"])
        #expect(status == 0)
        let records = try #require(summary["records"] as? Int)
        let skipped = try #require(summary["skippedNotifications"] as? Int)
        #expect(records == 300)
        #expect(skipped > 0, "the capture has contact losses (0 bpm) that must be skipped, not stored")
        #expect(summary["dropped"] as? Int == 0)
        let store = try HealthStore(path: db)
        #expect(try store.count(SampleQuery(type: .heartRate)) == records - skipped)
        // Besides heart rate, live's derived samples: SDNN and RMSSD per 60 s of gap-free RR (the
        // session is 5 minutes long), energy intervals when the strap reports energy.
        let sdnn = try store.count(SampleQuery(type: .heartRateVariabilitySDNN))
        let rmssd = try store.count(SampleQuery(type: .heartRateVariabilityRMSSD))
        let energy = try store.count(SampleQuery(type: .activeEnergyBurned))
        #expect(sdnn > 0 && rmssd == sdnn)
        #expect(summary["committed"] as? Int == records - skipped + sdnn + rmssd + energy)
        // Sample times are the capture's receipt times, not the replay's.
        let first = try #require(try store.samples(SampleQuery(type: .heartRate, limit: 1)).first)
        #expect(abs(first.startDate.timeIntervalSince1970 - 1_790_000_000.01) < 0.001)
    }

    @Test func thePedometerSessionBecomesStepIntervalsAndCountsItsGarbage() async throws {
        let (status, summary, db) = try await replay("pedometer-session.capture.jsonl", ["--speed", "1000"])
        #expect(status == 0)
        #expect((summary["rejectedLines"] as? Int ?? 0) > 0)
        let committed = try #require(summary["committed"] as? Int)
        #expect(committed > 0)
        #expect(try HealthStore(path: db).count(SampleQuery(type: .stepCount)) == committed)
    }

    /// Replayed steps follow the live pedometer rules: sync identifiers under the captured
    /// device's id, so a second replay of the same capture stores nothing twice; the live
    /// device's counter state is left alone.
    @Test func replayedStepsCarrySyncIdentifiersAndStateSoASecondReplayAddsNothing() async throws {
        let (status, summary, db) = try await replay("pedometer-session.capture.jsonl", ["--max"])
        #expect(status == 0)
        let store = try HealthStore(path: db)
        let first = try store.samples(SampleQuery(type: .stepCount))
        let total = first.reduce(0) { $0 + $1.quantity.value }
        #expect(!first.isEmpty && (summary["committed"] as? Int) == first.count)
        let ids = first.compactMap(\.metadata.syncIdentifier)
        #expect(ids.count == first.count && Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.hasPrefix("serial:sim-1:") }, "\(ids.prefix(3))")
        #expect(first.allSatisfy { $0.metadata.syncVersion == 1 && $0.device?.localIdentifier == "serial:sim-1" })
        #expect(try store.state("serial.counter.sim-1") == nil)

        let (again, _, _) = try await replay("pedometer-session.capture.jsonl", ["--max"], db: db)
        #expect(again == 0)
        let second = try store.samples(SampleQuery(type: .stepCount))
        #expect(second.count == first.count)
        #expect(second.reduce(0) { $0 + $1.quantity.value } == total)
    }

    /// Issue #17 audit: a capture's times come from a file. A gap of 1e300 s at `--speed` used to
    /// trap converting the wait to Int64; now replay waits (in stoppable steps) and SIGTERM ends
    /// it cleanly with what it stored. (Since 2026-11-29 a `t` past 9999-12-31 is a bad line, so
    /// the gap here is the largest a capture can hold: 8,000 years, 250 million s at 1000×.) A speed that cannot be honoured is refused up front.
    @Test func aHugeGapInACaptureWaitsStoppablyInsteadOfTrapping() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hg-replay-gap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("gap.capture.jsonl")
        let device = #""device":{"name":"S","localIdentifier":"AA:BB:CC:DD:EE:01"},"address":"AA:BB:CC:DD:EE:01","characteristic":"2A37""#
        try """
            {"format":"healthgate-capture","version":1}
            {"t":1790000000,"kind":"ble",\(device),"hex":"1648"}
            {"t":253402300799,"kind":"ble",\(device),"hex":"1649"}

            """.write(to: file, atomically: true, encoding: .utf8)
        let db = tempDBPath("replay-gap")
        let child = try Child(["replay", file.path, "--db", db, "--speed", "1000", "--json"])
        var stored = 0
        for _ in 0..<600 where stored == 0 && child.process.isRunning {
            try? await Task.sleep(for: .milliseconds(50))
            stored = (try? HealthStore(path: db).count(SampleQuery(type: .heartRate))) ?? 0
        }
        #expect(stored == 1, "the record before the gap is stored while replay waits: \(child.stderr)")
        #expect(child.process.isRunning, "replay must still be waiting for the record after the gap: \(child.stderr)")
        child.signal(SIGTERM)
        let status = await offThread { child.wait() }
        #expect(status == 0, "\(child.stderr)")

        for speed in ["1e-300", "0", "nan", "1e300"] {
            let refused = try Child(["replay", file.path, "--db", db, "--speed", speed])
            #expect(await offThread { refused.wait() } == 64, "--speed \(speed): \(refused.stderr)")
            #expect(refused.stderr.contains("--speed must be"))
        }
    }

    @Test func aMissingFileExits66() async throws {
        let (status, _, _) = try await replay("no-such.capture.jsonl")
        #expect(status == 66)
    }

    @Test func aDirectoryExits66SayingSo() async throws {
        let child = try Child(["replay", FileManager.default.temporaryDirectory.path, "--db", tempDBPath("replay-dir")])
        let status = await offThread { child.wait() }
        #expect(status == 66 && child.stderr.contains("is a directory"), "\(status): \(child.stderr)")
    }
}
