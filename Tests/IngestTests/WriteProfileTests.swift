import Foundation
import HealthGateTesting
import HealthModel
@testable import HealthStore
import Testing
@testable import Ingest

/// The SD-card write profile (issue #12, docs/store.md "Writes"): what `scripts/write-profile.sh`
/// divides the bytes written by, and what one ingest commit writes.
@Suite struct WriteProfileTests {
    static func tempPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("write-profile-\(name)-\(UUID().uuidString)")
            .appendingPathComponent("health.sqlite").path
    }

    @Test("every write transaction of the process is counted, explicit or single-statement")
    func commitsAreCounted() throws {
        let path = Self.tempPath("count")
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try HealthStore(path: path)
        let before = HealthStore.processCommits
        for k in 0..<3 {
            _ = try store.save([try QuantitySample(type: .heartRate, quantity: Quantity(Double(60 + k), .countPerMinute),
                                                   start: Date(timeIntervalSince1970: 1_790_000_000 + Double(k)),
                                                   end: Date(timeIntervalSince1970: 1_790_000_000 + Double(k)),
                                                   source: Source(name: "T", identifier: "t"))])
        }
        try store.write { w in try w.connection.execute("UPDATE state SET updated_at = 0 WHERE key = 'nothing'") }
        try store.withConnection { try $0.execute("INSERT INTO state(key, value, updated_at) VALUES ('k', NULL, 0)") }
        // Other suites commit in parallel: at least these five.
        #expect(HealthStore.processCommits >= before + 5)
    }
}
