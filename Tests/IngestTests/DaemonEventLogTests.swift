import Platform
import Foundation
import GATT
import HealthGateTesting
import Simulators
import HealthModel
import HealthStore
import Logging
import Synchronization
import Testing
@testable import Gateway
@testable import Ingest
@testable import Systemd
import Locking

/// What the daemon tells the journal about its devices and its store: a strap's connection,
/// subscription and disconnect once each at info, a full disk at warning for as long as it
/// lasts and its end at notice, and every strap in the device registry (issue #17, item 18).
@Suite struct DaemonEventLogTests {
    /// Journal lines (`<priority>message`) collected from any thread.
    final class Lines: Sendable {
        private let lines = Lock<[String]>([])
        func append(_ l: String) { lines.withLock { $0.append(l) } }
        func withLock<R: Sendable>(_ body: ([String]) -> R) -> R { lines.withLock { body($0) } }
    }

    /// A logger whose journal lines are collected.
    static func capturingLogger() -> (Logger, Lines) {
        let lines = Lines()
        var logger = Logger(label: "healthgate") { label in
            JournalLogHandler(label: label) { l in lines.append(l.trimmingCharacters(in: .newlines)) }
        }
        logger.logLevel = .debug
        return (logger, lines)
    }

    @Test func aStrapsConnectSubscribeAndDisconnectAreLoggedOnceEachAtInfo() async throws {
        let (logger, lines) = Self.capturingLogger()
        let strap = SimulatedPeripheral.heartRateStrap()
        let log = StrapEventLog(logger: logger)
        let source = StrapSource(name: "strap chest", localIdentifier: "AA:BB:CC:DD:EE:10",
                                 events: { log.log($0, strap: "strap chest") }) { _ in try strap.connectSocketPair() }
        let pipeline = try IngestPipeline(sink: RecordingSink())
        let runner = SourceRunner(pipeline: pipeline, logger: logger)
        pipeline.start()
        try runner.start(source)
        #expect(await eventually { strap.notifyHeartRate([0x06, 70]) })
        strap.disconnect()
        // The runner reconnects by itself; the second connection is subscribed again.
        #expect(await eventually { lines.withLock { $0 }.contains("<6>strap chest: subscribed to heart rate notifications (connection 2)") },
                "\(lines.withLock { $0 })")
        _ = await offThread { runner.stopAll(); return pipeline.stop() }

        let all = lines.withLock { $0 }
        func count(_ prefix: String) -> Int { all.filter { $0.hasPrefix(prefix) }.count }
        let config = SimulatedStrapConfiguration()
        #expect(all.first { $0.hasPrefix("<6>strap chest: connected") }
                == "<6>strap chest: connected (\(config.manufacturer ?? "") \(config.model ?? ""), battery 87 %, chest)", "\(all)")
        #expect(count("<6>strap chest: connected") == 1, "\(all)")
        #expect(count("<6>strap chest: subscribed to heart rate notifications") == 2, "\(all)")   // one per connection
        #expect(count("<6>strap chest: disconnected (") == 1, "\(all)")
        #expect(count("<6>strap chest: reconnected (connection 2)") == 1, "\(all)")
        // The disconnect is not logged a second time by the runner as a failure.
        #expect(!all.contains { $0.hasPrefix("<4>strap chest") || $0.hasPrefix("<3>strap chest") }, "\(all)")
    }

    @Test("a minute of beats too artefact-ridden for HRV is logged once at info with why")
    func anHRVWindowRefusedIsLoggedWithWhy() async throws {
        let (logger, lines) = Self.capturingLogger()
        let strap = SimulatedPeripheral.heartRateStrap()
        let log = StrapEventLog(logger: logger)
        let source = StrapSource(name: "strap chest", localIdentifier: "AA:BB:CC:DD:EE:11",
                                 events: { log.log($0, strap: "strap chest") }) { _ in try strap.connectSocketPair() }
        let pipeline = try IngestPipeline(sink: RecordingSink())
        let runner = SourceRunner(pipeline: pipeline, logger: logger)
        pipeline.start()
        try runner.start(source)
        // One RR interval a notification (flags: RR present, uint8 bpm): eight missed beats in the minute.
        let payloads = SDNNTests.ticksWithMissedBeats().map { t in [UInt8(0x10), 70, UInt8(t & 0xFF), UInt8(t >> 8)] }
        #expect(await eventually { strap.notifyHeartRate(payloads[0]) })
        for p in payloads.dropFirst() { _ = strap.notifyHeartRate(p) }
        let wanted = "beats were artefacts (more than the 10 % allowed; a loose or dry strap, or an irregular rhythm)"
        #expect(await eventually { lines.withLock { $0 }.contains { $0.hasPrefix("<6>strap chest: no SDNN/RMSSD for the ") && $0.hasSuffix(wanted) } },
                "\(lines.withLock { $0 })")
        _ = await offThread { runner.stopAll(); return pipeline.stop() }
        #expect(lines.withLock { $0 }.filter { $0.contains("no SDNN/RMSSD") }.count == 1)
    }

    /// A source that pushes `count` heart-rate records, then ends.
    struct Burst: IngestSource {
        let name = "burst"
        let reconnects = false
        let count: Int
        func run(into ring: SampleRing, slots: SlotTable, stop: StopSignal) throws {
            // Step counts, stored one row each by the test's sink.
            let steps = try slots.slot(for: .stepCount), src = try slots.slot(for: Source(name: "burst"))
            for i in 0..<count { ring.push(SampleRecord(typeSlot: steps, value: 60, start: Double(i), end: Double(i + 1), sourceSlot: src)) }
        }
    }

    @Test func aFullDiskIsAWarningForAsLongAsItLastsAndItsEndANotice() async throws {
        let (logger, lines) = Self.capturingLogger()
        let store = try HealthStore(path: tempDBPath("stall-log"))
        // Cap the file at its current size: the first batch needs a page and gets SQLITE_FULL.
        let pages = try store.withConnection { db -> Int64 in
            let s = try db.prepare("PRAGMA page_count", cached: false)
            _ = try s.step()
            return s.int64(0)
        }
        try store.withConnection { try $0.execute("PRAGMA max_page_count = \(pages)") }
        // One row per reading (the sink's series storage takes every record without extras, step
        // counts included, a few bytes each, which never ask for a page this test refuses).
        let runtime = try GatewayRuntime(sink: try StoreSink(store: store, storage: .individual), store: store, configuration: IngestConfiguration(
            batchSize: 100, flushInterval: .milliseconds(5), retryInterval: .milliseconds(20)), logger: logger)
        let final = Lock<IngestStats?>(nil)
        Thread {
            let stats = try? runtime.run(sources: [Burst(count: 500)], statusInterval: .milliseconds(1))
            final.withLock { $0 = stats }
        }.start()
        // The stall is reported once at warning, and the status line repeats it at warning.
        #expect(await eventually(seconds: 60) {
            lines.withLock { $0 }.filter { $0.hasPrefix("<4>") && $0.contains("; stalled: disk full") }.count >= 2
        }, "\(lines.withLock { $0 })")
        try store.withConnection { try $0.execute("PRAGMA max_page_count = 1073741823") }
        #expect(await eventually(seconds: 60) { lines.withLock { $0 }.contains("<5>the store accepts writes again; the writer resumed") },
                "\(lines.withLock { $0 })")
        runtime.requestStop(reason: "test")
        #expect(await eventually(seconds: 60) { final.withLock { $0 } != nil })
        #expect(final.withLock { $0 }?.committed == 500)

        let all = lines.withLock { $0 }
        let stalls = all.filter { $0.contains("the store refused a batch and the writer is holding it: disk full") }
        #expect(stalls.count == 1 && stalls[0].hasPrefix("<4>"), "\(all)")
        // No status line of the stall at info, where `journalctl -p warning` would miss it.
        #expect(!all.contains { $0.hasPrefix("<6>") && $0.contains("stalled:") }, "\(all)")
    }

    @Test func everyStrapGoesToTheRegistryAsABLEDeviceSocketStrapsToo() async throws {
        let store = try HealthStore(path: tempDBPath("registry"))
        let (logger, _) = Self.capturingLogger()
        let registry = StrapRegistry(store: store, logger: logger)
        let at = Date(timeIntervalSince1970: 1_790_000_000)
        let socket = StrapSource.Connection(number: 1, device: Device(name: "sim 1", localIdentifier: "socket:/tmp/s1"),
                                            sensorLocation: .chest, battery: 87, at: at)
        registry.record(.connected(socket), localIdentifier: "socket:/tmp/s1")
        let radio = StrapSource.Connection(number: 1, device: Device(name: "chest", localIdentifier: "AA:BB:CC:DD:EE:11"),
                                           sensorLocation: nil, battery: nil, at: at)
        registry.record(.connected(radio), localIdentifier: "AA:BB:CC:DD:EE:11", address: "AA:BB:CC:DD:EE:11", addressType: "random")
        registry.record(.battery(level: 50, at: at.addingTimeInterval(60)), localIdentifier: "socket:/tmp/s1")
        registry.flush()
        let ble = try store.devices(kind: .ble)
        #expect(Set(ble.compactMap(\.device.localIdentifier)) == ["socket:/tmp/s1", "AA:BB:CC:DD:EE:11"])
        let s1 = try #require(try store.device(localIdentifier: "socket:/tmp/s1"))
        #expect(s1.battery == 50 && s1.address == nil && s1.sensorLocation == .chest)
        #expect(try store.device(localIdentifier: "AA:BB:CC:DD:EE:11")?.addressType == "random")
    }
}
