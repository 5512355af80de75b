import Foundation
import HealthGateTesting
import Testing

/// `healthgate-bench --only apple-health` (issue 15): its plumbing end to end on a small
/// generated export — `healthgate import --apple-health` and healthkit-to-sqlite (from
/// .venv-bench/, which scripts/test.sh installs) both import it from the zip and from the XML, and
/// the figures arrive as JSON. Figures are printed, never asserted beyond being measured
/// (docs/performance.md).
@Suite struct AppleHealthBenchPartTests {
    @Test func appleHealthAloneEndsWithItsJSONFigures() async throws {
        let baseline = FileManager.default.isExecutableFile(atPath: ".venv-bench/bin/healthkit-to-sqlite")
        if !baseline && ProcessInfo.processInfo.environment["CI"] == nil { return }   // a developer's machine without the venv
        let r = try await offThread {
            try HealthGateExecutable.run(["--only", "apple-health", "--apple-health-bytes", "200000", "--json"], executable: "healthgate-bench")
        }
        #expect(r.status == 0, "\(r.stderr)")
        let line = try #require(r.stdout.split(separator: "\n").last)
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        for input in ["Zip", "XML"] {
            for key in ["Seconds", "PeakRSSBytes", "BaselineSeconds", "Ratio"] {
                let v = (figures["appleHealth\(input)\(key)"] as? NSNumber)?.doubleValue
                #expect(v.map { $0 > 0 && $0.isFinite } == true, "appleHealth\(input)\(key): \(figures)")
            }
        }
        #expect(r.stdout.contains("healthkit-to-sqlite") && r.stdout.contains("goal >= 10x"))
    }
}
