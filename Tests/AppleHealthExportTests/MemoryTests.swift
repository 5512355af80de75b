import AppleHealthExport
import Foundation
import HealthGateTesting
import Testing

/// Peak memory on a large export: a 200 MB export.xml generated into a temporary folder (and
/// deleted after), read by the `apple-health-bench` child, whose peak resident memory (VmHWM,
/// the whole process: runtime, buffers, one batch) must stay within 64 MB. The release-mode
/// figures on 1 GB are in docs/apple-health.md.
@Suite("Apple Health export: a 200 MB export is read within 64 MB of resident memory")
struct MemoryTests {
    @Test("200 MB of records, heartbeat lists included: every record read, peak RSS ≤ 64 MB")
    func boundedMemory() async throws {
        // Generating and reading take seconds each: waited for off the cooperative pool, so the
        // one-thread pool pass does not stall every other suite meanwhile.
        let dir = try await offThread { try ExportFixture.generate(["--seed", "7", "--big", "200000000"]) }
        defer { try? FileManager.default.removeItem(at: dir) }
        let counts = try #require(try ExportFixture.summary(dir)["counts"] as? [String: Int])
        let r = try await offThread {
            try HealthGateExecutable.run([dir.appendingPathComponent("export.xml").path], timeout: .seconds(120), executable: "apple-health-bench")
        }
        try #require(r.status == 0, "apple-health-bench: \(r.stderr)")
        let out = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        print("apple-health-bench (debug build) on 200 MB: \(r.stdout)")
        let peak = try #require(out["peakRSSKilobytes"] as? Int)
        #expect(peak > 0 && peak <= 64 * 1024, "peak RSS \(peak) kB")
        #expect(out["records"] as? Int == counts.values.reduce(0, +) && out["bad"] as? Int == 0 && out["complete"] as? Bool == true)
        // One heart-rate sample per heartbeat list (no gaps in the big export's lists).
        #expect(out["heartbeatSamples"] as? Int == counts["heartRateVariabilitySDNN"])
        #expect(out["samples"] as? Int == counts.values.reduce(0, +) + (counts["heartRateVariabilitySDNN"] ?? 0))
    }
}
