import Foundation
import HealthGateTesting
import Testing

/// `healthgate-bench --only import` (issue 12): its plumbing end to end on a small file — the
/// generated file imports completely three ways (the bench checks the row counts itself) and the
/// figures arrive as JSON. Figures are printed, never asserted (docs/performance.md).
@Suite struct ImportBenchPartTests {
    @Test func importAloneEndsWithItsJSONFigures() async throws {
        let r = try await offThread {
            try HealthGateExecutable.run(["--only", "import", "--import-samples", "2000", "--rounds", "1", "--json"],
                                         executable: "healthgate-bench")
        }
        #expect(r.status == 0, "\(r.stderr)")
        let line = try #require(r.stdout.split(separator: "\n").last)
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(Set(figures.keys) == ["importSamplesPerSecond", "importPeakRSSBytes", "importCeilingRowsPerSecond",
                                      "importPythonRowsPerSecond", "importVsPython", "importVsCeiling"])
        #expect((figures["importSamplesPerSecond"] as? Double ?? 0) > 0)
        #expect((figures["importPeakRSSBytes"] as? Int ?? 0) > 0)
        #expect(r.stdout.contains("vs ceiling"))
    }

    @Test func tooFewImportSamplesIsAUsageError() async throws {
        let r = try await offThread { try HealthGateExecutable.run(["--only", "import", "--import-samples", "10"], executable: "healthgate-bench") }
        #expect(r.status == 64 && r.stderr.contains("--import-samples"), "\(r.stderr)")
    }
}
