import Foundation
import HealthModel
import HealthStore
import Ingest
import Logging
import Testing
@testable import Gateway
import HealthGateTesting
@testable import Systemd

/// The daemon removes change-feed tombstones once they are past the store's retention, without
/// anyone running `healthgate tombstones --prune`.
@Suite struct TombstonePruningTests {
    @Test func theRuntimePrunesExpiredTombstonesByItself() async throws {
        let store = try HealthStore(path: tempDBPath("prune"))
        let samples = try (0..<3).map { i in
            try QuantitySample(type: .heartRate, quantity: Quantity(Double(60 + i), .countPerMinute),
                               start: Date(timeIntervalSince1970: 1_790_000_000 + Double(i)),
                               end: Date(timeIntervalSince1970: 1_790_000_000 + Double(i)),
                               source: Source(name: "t", identifier: "t"))
        }
        try store.save(samples)
        #expect(try store.delete(uuids: samples.map(\.uuid)) == 3)
        try store.setTombstoneRetention(1)   // expired one second after the delete
        #expect(try store.changeFeedStatus().tombstoneCount == 3)

        let runtime = try GatewayRuntime(store: store, configuration: IngestConfiguration(),
                                         tombstonePruneInterval: .seconds(1), logger: Logger(label: "test"),
                                         notifier: SystemdNotifier(environment: [:]))
        // `run` blocks until stopped: on a thread of its own, never on one of the cooperative
        // pool's (two on a 2-core CI machine) that `eventually` needs to get to `requestStop`.
        let done = Task { await offThread { Result { try runtime.run(sources: []) } } }
        let pruned = await eventually { (try? store.changeFeedStatus().tombstoneCount) == 0 }
        runtime.requestStop(reason: "test")
        _ = try await done.value.get()
        #expect(pruned, "the tombstones past their one-second retention are still there")
    }
}
