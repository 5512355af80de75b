import Foundation
import GATT
import HealthGateTesting
import HealthModel
import HealthStore
import HeartRateProfile
import Logging
import Synchronization
import Simulators
import Testing
@testable import BluetoothLinux
@testable import Gateway
@testable import Ingest
@testable import HealthGateConfiguration
import Locking

/// `live`'s strap path (``StrapSession``: straps as ``StrapSource``s into the ingest pipeline,
/// taps for the front-end): samples, batching, reconnect, two straps — simulated straps over
/// socket pairs, real SQLite. (Formerly `LiveSessionTests` of the separate `LiveSession` engine:
/// the same assertions, on the one path.)
@Suite("live: samples, batching, reconnect, two straps (simulated straps over socket pairs, real SQLite)")
struct StrapSessionTests {
    static let fast = ReconnectPolicy(initialPause: .milliseconds(10), maximumPause: .milliseconds(50), settlePause: .milliseconds(10))
    static let chest = StrapTarget(address: BluetoothAddress("F0:F1:F2:F3:F4:F5")!, addressType: .random, name: "chest")
    static let arm = StrapTarget(address: BluetoothAddress("C0:11:22:33:44:55")!, addressType: .random, name: "arm")

    static func tempStore() throws -> HealthStore {
        let dir = NSTemporaryDirectory() + "healthgate-live-\(UUID().uuidString)"
        return try HealthStore(path: dir + "/health.sqlite")
    }

    /// Each target as a session strap reaching its own simulated strap.
    static func straps(_ targets: [StrapTarget], _ peers: [BluetoothAddress: SimulatedPeripheral]) -> [StrapSession.Strap] {
        targets.map { t in
            let connector: StrapConnector = { target, _ in
                guard let s = peers[target.address] else { throw BluetoothError(errno: EHOSTDOWN, during: .connect(target.address, timeoutSeconds: 1)) }
                return try s.connectSocketPair()
            }
            return StrapSession.Strap(name: t.description, localIdentifier: t.localIdentifier, address: t.address.description,
                                      addressType: t.addressType.rawValue, connect: { try connector(t, $0) })
        }
    }

    /// Runs a session on a thread of its own; returns its stop, its outcome and its events.
    static func start(_ targets: [StrapTarget], _ peers: [BluetoothAddress: SimulatedPeripheral], store: HealthStore?,
                      sink: (any SampleSink)? = nil, flushInterval: Double = 60, maxNotifications: Int? = nil)
        -> (@Sendable () -> Void, Task<StrapSessionSummary, any Error>, SessionEvents) {
        let events = SessionEvents()
        var config = IngestConfiguration(flushInterval: .milliseconds(Int(flushInterval * 1000)))
        config.retryInterval = .milliseconds(20)
        let session = try! StrapSession(straps: straps(targets, peers), store: store, sink: sink, configuration: config, policy: fast,
                                        maxNotifications: maxNotifications, transactionTimeout: .seconds(5),
                                        logger: Logger(label: "test")) { events.append($0) }
        // A watchdog: a broken test fails instead of hanging on a count that is never reached. Its
        // 300 s start when the session does (the task waits for the cooperative pool first). It is
        // only a hang guard: every test stops its session itself after bounded waits, and in the
        // one-thread pass on a loaded machine a whole test (connect, reconnect, five readings) took
        // longer than 30 s, so a 30 s watchdog stopped the session mid-test.
        let task = Task { try await offThread { () throws -> StrapSessionSummary in
            DispatchQueue.global().asyncAfter(deadline: .now() + 300) { session.stop(reason: "watchdog") }
            return try session.run(trapsSignals: false)
        } }
        return ({ session.stop() }, task, events)
    }

    static func connections(_ e: SessionEvents, _ t: StrapTarget, in targets: [StrapTarget] = [chest, arm]) -> Int {
        e.all.reduce(0) { n, ev in if case .connected(let k, _) = ev, targets[k] == t { n + 1 } else { n } }
    }

    static func readings(_ e: SessionEvents) -> [StrapReading] {
        e.all.compactMap { if case .reading(let r) = $0 { r } else { nil } }
    }

    @Test func everyNotificationIsStoredInOneBatchWithExactRR() async throws {
        let store = try Self.tempStore()
        let strap = SimulatedPeripheral.heartRateStrap()
        let payloads: [[UInt8]] = (0..<20).map { i in [0x16, UInt8(60 + i), UInt8(0x00 + i), 0x04, 0x10, 0x04] }  // 2 RR each
        let (_, task, events) = Self.start([Self.chest], [Self.chest.address: strap], store: store,
                                           maxNotifications: payloads.count)
        #expect(await eventually { Self.connections(events, Self.chest) == 1 })
        #expect(await strapSubscribed(strap))
        for p in payloads { strap.notifyHeartRate(p) }
        let summary = try await task.value

        #expect(summary.notifications == 20)
        #expect(summary.samplesStored == 20)
        #expect(summary.batches == 1)  // the flush interval never came: one transaction at the end
        #expect(summary.minBPM == 60 && summary.maxBPM == 79)
        #expect(summary.averageBPM == 69.5)
        let samples = try store.samples(SampleQuery(type: .heartRate))
        #expect(samples.map { Int($0.canonicalValue) } == Array(60..<80))
        #expect(samples.map { $0.rrIntervals?.ticks ?? [] } == (0..<20).map { i in [UInt16(0x0400 + i), 0x0410] })
        #expect(samples.allSatisfy { $0.metadata.sensorContact == .detected })
        #expect(samples.allSatisfy { $0.metadata.heartRateSensorLocation == .chest })
        #expect(samples.allSatisfy { $0.device?.localIdentifier == "F0:F1:F2:F3:F4:F5" })
        #expect(samples.first?.device?.manufacturer == "HealthGate")
        let record = try #require(try store.device(address: "F0:F1:F2:F3:F4:F5"))
        #expect(record.kind == .ble)
        #expect(record.battery == 87)
        #expect(record.sensorLocation == .chest)
        #expect(record.lastSeen != nil)
    }

    @Test func batchesAreCommittedPeriodicallyNotPerNotification() async throws {
        let store = try Self.tempStore()
        let strap = SimulatedPeripheral.heartRateStrap()
        let (stop, task, events) = Self.start([Self.chest], [Self.chest.address: strap], store: store,
                                              flushInterval: 0.05)
        #expect(await eventually { Self.connections(events, Self.chest) == 1 })
        #expect(await strapSubscribed(strap))
        for i in 0..<50 { strap.notifyHeartRate([0x06, UInt8(100 + i)]) }
        #expect(await eventually { (try? store.samples(SampleQuery(type: .heartRate)).count) == 50 })  // stored while running
        stop()
        let summary = try await task.value
        #expect(summary.samplesStored == 50)
        #expect(summary.batches >= 1)
        #expect(summary.batches < 50)
    }

    @Test func reconnectMarksTheGapAndLosesNothing() async throws {
        let store = try Self.tempStore()
        let strap = SimulatedPeripheral.heartRateStrap()
        let (stop, task, events) = Self.start([Self.chest], [Self.chest.address: strap], store: store)
        #expect(await eventually { Self.connections(events, Self.chest) == 1 })
        #expect(await strapSubscribed(strap))
        for i in 0..<3 { strap.notifyHeartRate([0x10, UInt8(70 + i), 0x00, 0x04]) }
        #expect(await eventually { Self.readings(events).count == 3 })
        strap.disconnect()
        #expect(await eventually { Self.connections(events, Self.chest) == 2 })
        #expect(await strapSubscribed(strap))
        for i in 0..<2 { strap.notifyHeartRate([0x10, UInt8(80 + i), 0x00, 0x04]) }
        #expect(await eventually { Self.readings(events).count == 5 })
        stop()
        let summary = try await task.value

        let samples = try store.samples(SampleQuery(type: .heartRate))
        #expect(samples.map { Int($0.canonicalValue) } == [70, 71, 72, 80, 81])
        #expect(samples.map { $0.rrIntervals?.precededByGap } == [true, false, false, true, false])
        #expect(summary.straps[0].connections == 2)
        #expect(Self.readings(events).map(\.connection) == [1, 1, 1, 2, 2])
    }

    @Test func energyDeltasBecomeActiveEnergySamples() async throws {
        let store = try Self.tempStore()
        let strap = SimulatedPeripheral.heartRateStrap()
        let (_, task, events) = Self.start([Self.chest], [Self.chest.address: strap], store: store,
                                           maxNotifications: 3)
        #expect(await eventually { Self.connections(events, Self.chest) == 1 })
        #expect(await strapSubscribed(strap))
        strap.notifyHeartRate([0x08, 70, 10, 0])   // baseline 10 kJ
        strap.notifyHeartRate([0x00, 71])          // no energy field: nothing invented
        strap.notifyHeartRate([0x08, 72, 16, 0])   // +6 kJ
        _ = try await task.value
        let energy = try store.samples(SampleQuery(type: .activeEnergyBurned))
        #expect(energy.count == 1)
        #expect(energy.first?.canonicalValue == 6)
        #expect(try store.samples(SampleQuery(type: .heartRate)).count == 3)
    }

    @Test func energySpentDuringALinkLossIsNotLost() async throws {
        let store = try Self.tempStore()
        let strap = SimulatedPeripheral.heartRateStrap()
        let (stop, task, events) = Self.start([Self.chest], [Self.chest.address: strap], store: store)
        #expect(await eventually { Self.connections(events, Self.chest) == 1 })
        #expect(await strapSubscribed(strap))
        strap.notifyHeartRate([0x08, 70, 96, 0])    // 96 kJ
        strap.notifyHeartRate([0x08, 70, 100, 0])   // +4
        #expect(await eventually { Self.readings(events).count == 2 })
        strap.disconnect()
        #expect(await eventually { Self.connections(events, Self.chest) == 2 })
        #expect(await strapSubscribed(strap))
        strap.notifyHeartRate([0x08, 71, 120, 0])   // +20, spent while the link was down
        strap.notifyHeartRate([0x08, 72, 132, 0])   // +12
        #expect(await eventually { Self.readings(events).count == 4 })
        stop()
        _ = try await task.value
        let energy = try store.samples(SampleQuery(type: .activeEnergyBurned))
        #expect(energy.map(\.canonicalValue) == [4, 20, 12])
        #expect(energy.reduce(0) { $0 + $1.canonicalValue } == 132 - 96)
    }

    @Test func rejectedPayloadsAreCountedNotStored() async throws {
        let store = try Self.tempStore()
        let strap = SimulatedPeripheral.heartRateStrap()
        let (_, task, events) = Self.start([Self.chest], [Self.chest.address: strap], store: store,
                                           maxNotifications: 4)
        #expect(await eventually { Self.connections(events, Self.chest) == 1 })
        #expect(await strapSubscribed(strap))
        for p: [UInt8] in [[], [0x16], [0x01, 0x48], [0x06, 65]] { strap.notifyHeartRate(p) }
        let summary = try await task.value
        #expect(summary.straps[0].rejected == 3)
        #expect(summary.samplesStored == 1)
        let r = Self.readings(events)
        #expect(r.map { $0.rejection != nil } == [true, true, true, false])
        #expect(r.last?.measurement?.beatsPerMinute == 65)
    }

    @Test func noStoreShowsButDoesNotSave() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let (_, task, events) = Self.start([Self.chest], [Self.chest.address: strap], store: nil, maxNotifications: 2)
        #expect(await eventually { Self.connections(events, Self.chest) == 1 })
        #expect(await strapSubscribed(strap))
        strap.notifyHeartRate([0x06, 61])
        strap.notifyHeartRate([0x06, 62])
        let summary = try await task.value
        #expect(summary.samplesStored == 0 && summary.batches == 0)
        #expect(Self.readings(events).compactMap { $0.measurement?.beatsPerMinute } == [61, 62])
    }

    @Test func twoStrapsAtOnceEachSampleTaggedWithItsDevice() async throws {
        let store = try Self.tempStore()
        var armConfig = SimulatedStrapConfiguration()
        armConfig.name = "Arm HR"
        armConfig.bodySensorLocation = 2  // wrist
        let chestStrap = SimulatedPeripheral.heartRateStrap(), armStrap = SimulatedPeripheral.heartRateStrap(armConfig)
        let (stop, task, events) = Self.start([Self.chest, Self.arm], [Self.chest.address: chestStrap, Self.arm.address: armStrap],
                                              store: store)
        #expect(await eventually { Self.connections(events, Self.chest) == 1 && Self.connections(events, Self.arm) == 1 })
        #expect(await strapSubscribed(chestStrap))
        #expect(await strapSubscribed(armStrap))
        for i in 0..<5 {
            chestStrap.notifyHeartRate([0x06, UInt8(120 + i)])
            armStrap.notifyHeartRate([0x06, UInt8(90 + i)])
        }
        #expect(await eventually { Self.readings(events).count == 10 })
        stop()
        _ = try await task.value
        let chest = try store.samples(SampleQuery(type: .heartRate, device: "F0:F1:F2:F3:F4:F5"))
        let arm = try store.samples(SampleQuery(type: .heartRate, device: "C0:11:22:33:44:55"))
        #expect(chest.map { Int($0.canonicalValue) } == Array(120..<125))
        #expect(arm.map { Int($0.canonicalValue) } == Array(90..<95))
        #expect(arm.allSatisfy { $0.metadata.heartRateSensorLocation == .wrist && $0.device?.name == "Arm HR" })
    }

    /// A sink that fails its first writes, as a full disk would, then writes to the store.
    final class FlakySink: SampleSink, @unchecked Sendable {
        let inner: StoreSink
        let failuresLeft = Atomic<Int>(2)
        init(_ s: HealthStore) throws { inner = try StoreSink(store: s) }
        func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable) throws(SinkError) {
            if failuresLeft.subtract(1, ordering: .relaxed).oldValue > 0 {
                throw SinkError(.diskFull, "disk full (simulated)")
            }
            try inner.write(records, slots: slots)
        }
    }

    @Test func aFailingStoreKeepsTheBatchAndRetries() async throws {
        let store = try Self.tempStore()
        let strap = SimulatedPeripheral.heartRateStrap()
        let (stop, task, events) = Self.start([Self.chest], [Self.chest.address: strap], store: store, sink: try FlakySink(store),
                                              flushInterval: 0.02)
        #expect(await eventually { Self.connections(events, Self.chest) == 1 })
        #expect(await strapSubscribed(strap))
        for i in 0..<10 { strap.notifyHeartRate([0x06, UInt8(50 + i)]) }
        #expect(await eventually { (try? store.samples(SampleQuery(type: .heartRate)).count) == 10 })
        stop()
        let summary = try await task.value
        #expect(summary.unsaved == 0)
        #expect(try store.samples(SampleQuery(type: .heartRate)).map { Int($0.canonicalValue) } == Array(50..<60))
        #expect(events.all.contains { if case .storeFailed = $0 { true } else { false } })
    }

    /// The front-end's stall observer comes in addition to the runtime's log line, not in its
    /// place (a second `onStallChange` replaced the first).
    @Test func aStoreFailureIsBothShownAndLogged() async throws {
        let store = try Self.tempStore()
        let strap = SimulatedPeripheral.heartRateStrap()
        let (logger, lines) = DaemonEventLogTests.capturingLogger()
        let events = SessionEvents()
        var config = IngestConfiguration(flushInterval: .milliseconds(20))
        config.retryInterval = .milliseconds(20)
        let session = try StrapSession(straps: Self.straps([Self.chest], [Self.chest.address: strap]), store: store,
                                       sink: try FlakySink(store), configuration: config, policy: Self.fast,
                                       transactionTimeout: .seconds(5), logger: logger) { events.append($0) }
        let task = Task { try await offThread { () throws -> StrapSessionSummary in
            DispatchQueue.global().asyncAfter(deadline: .now() + 300) { session.stop(reason: "watchdog") }
            return try session.run(trapsSignals: false)
        } }
        #expect(await strapSubscribed(strap))
        strap.notifyHeartRate([0x06, 61])
        #expect(await eventually { (try? store.samples(SampleQuery(type: .heartRate)).count) == 1 })
        session.stop()
        _ = try await task.value
        #expect(events.all.contains { if case .storeFailed = $0 { true } else { false } })
        #expect(lines.withLock { $0 }.contains { $0.hasPrefix("<4>the store refused a batch") }, "\(lines.withLock { $0 })")
    }
}

/// Collects a session's events from any thread.
final class SessionEvents: Sendable {
    private let items = Lock<[StrapSession.Event]>([])
    func append(_ x: StrapSession.Event) { items.withLock { $0.append(x) } }
    var all: [StrapSession.Event] { items.withLock { $0 } }
}

/// True once the client has enabled Heart Rate Measurement notifications on `strap`'s current
/// connection (its CCCD reads 0x0001; the simulated strap resets it on every new connection).
func strapSubscribed(_ strap: SimulatedPeripheral) async -> Bool {
    await eventually { strap.cccdHandle(of: 0x2A37).flatMap { strap.value(at: $0) } == [0x01, 0x00] }
}
