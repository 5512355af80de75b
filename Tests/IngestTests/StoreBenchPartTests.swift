import Foundation
import HealthGateTesting
import Testing

/// `healthgate-bench --only store` (issue 12): its plumbing end to end on a short capture and a
/// short write window — the capture is stored as series by `healthgate replay --max` and as
/// rows, the same heart-rate samples both ways (the bench checks that itself), and `healthgate
/// run` is measured with and without pedometers; the figures arrive as JSON. Figures are printed,
/// never asserted beyond being measured (docs/performance.md).
@Suite struct StoreBenchPartTests {
    @Test func storeAloneEndsWithItsJSONFigures() async throws {
        let r = try await offThread {
            try HealthGateExecutable.run(["--only", "store", "--store-seconds", "120", "--writes-seconds", "5", "--json"],
                                         executable: "healthgate-bench")
        }
        #expect(r.status == 0, "\(r.stderr)")
        let line = try #require(r.stdout.split(separator: "\n").last)
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Double])
        #expect(Set(figures.keys) == ["storeBytesPerHeartRateSample", "storeBytesPerHeartRateSampleRows",
                                      "storeBytesPerHeartRateSampleWithRR", "storeBytesPerHeartRateSampleWithRRRows",
                                      "writesBytesPerSample", "writesFloorBytesPerSample", "writesRatioToFloor",
                                      "writesStrapsOnlyBytesPerSample", "writesStrapsOnlyFloorBytesPerSample", "writesStrapsOnlyRatioToFloor"])
        #expect(figures.values.allSatisfy { $0 > 0 && $0.isFinite }, "\(figures)")
        #expect(r.stdout.contains("10 straps + 4 pedometers") && r.stdout.contains("one row a reading"))
    }

    @Test func tooShortAWriteWindowIsAUsageError() async throws {
        let r = try await offThread { try HealthGateExecutable.run(["--only", "store", "--writes-seconds", "1"], executable: "healthgate-bench") }
        #expect(r.status == 64 && r.stderr.contains("--writes-seconds"), "\(r.stderr)")
    }
}
