import Foundation
import HealthGateTesting
import Testing

/// `healthgate-bench`, the benchmark's own executable (issue #11): it runs a part on its own and
/// explains a missing `healthgate` for the footprint part. (The hot-path part takes minutes in a
/// debug build, so its traced child is not run here.)
/// Figures are printed, never asserted (docs/performance.md); these tests check the plumbing.
@Suite struct BenchExecutableTests {
    static func bench(_ arguments: [String]) async throws -> HealthGateExecutable.Result {
        try await offThread { try HealthGateExecutable.run(arguments, executable: "healthgate-bench") }
    }

    static func lastJSON(_ stdout: String) throws -> [String: Any] {
        let line = try #require(stdout.split(separator: "\n").last)
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func latencyAloneEndsWithItsJSONFigures() async throws {
        let r = try await Self.bench(["--only", "latency", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let figures = try Self.lastJSON(r.stdout)
        #expect(Set(figures.keys) == ["p50LatencyMs", "p99LatencyMs"])
        let p50 = try #require(figures["p50LatencyMs"] as? Double)
        let p99 = try #require(figures["p99LatencyMs"] as? Double)
        #expect(p50 > 0 && p99 >= p50)
    }

    @Test func theFootprintWithoutAHealthgateIsUnavailableWithAnAnswer() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID().uuidString)/healthgate").path
        let r = try await Self.bench(["--only", "footprint", "--healthgate", missing])
        #expect(r.status == 69)
        #expect(r.stderr.contains(missing) && r.stderr.contains("--healthgate PATH"), "\(r.stderr)")
    }

    @Test func zeroRoundsIsAUsageError() async throws {
        let r = try await Self.bench(["--rounds", "0"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--rounds must be at least 1"), "\(r.stderr)")
    }

    @Test func healthgateHasNoBenchSubcommand() async throws {
        let r = try await offThread { try HealthGateExecutable.run(["bench"]) }
        #expect(r.status == 64)
    }
}
