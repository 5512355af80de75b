import Platform
import Foundation
import GATT
import HealthGateTesting
import Ingest
import Simulators
import Synchronization
import Testing
@testable import Gateway
import Locking

/// A strap source under the one stop: a connection that ended leaves no hook behind (a daemon
/// reconnecting for months must not pile up dead connections), a stopped one returns only once
/// its handlers are done.
@Suite struct StrapSourceStopTests {
    @Test func aStrapConnectionThatEndedLeavesNoHook() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let source = StrapSource(name: "strap", localIdentifier: "AA:BB:CC:DD:EE:04", reconnects: false) { _ in
            try strap.connectSocketPair()
        }
        let pipeline = try IngestPipeline(sink: RecordingSink())
        let ring = try pipeline.makeRing(name: "t")
        let stop = StopSignal()
        let ended = Lock(false)
        Thread {
            _ = try? source.run(into: ring, slots: pipeline.slots, stop: stop)
            ended.withLock { $0 = true }
        }.start()
        #expect(await eventually { strap.notifyHeartRate([0x06, 70]) })   // subscribed: the connection is up
        #expect(stop.pendingHooks == 1)
        strap.disconnect()
        #expect(await eventually { ended.withLock { $0 } })
        #expect(stop.pendingHooks == 0)
    }

    /// A stopped connection's `run` returns only once its GATT reader thread is done: a
    /// notification handler still running (here a slow battery callback) finishes first, so the
    /// strap's record mapper is never touched by two connections at once.
    @Test func aStoppedConnectionReturnsOnlyAfterItsHandlersFinished() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let entered = DispatchSemaphore(value: 0)
        let handlerDone = Atomic<Bool>(false)
        let source = StrapSource(name: "strap", localIdentifier: "AA:BB:CC:DD:EE:05", reconnects: false,
                                 events: { e in
                                     guard case .battery = e else { return }
                                     entered.signal()
                                     usleep(300_000)
                                     handlerDone.store(true, ordering: .sequentiallyConsistent)
                                 }) { _ in try strap.connectSocketPair() }
        let pipeline = try IngestPipeline(sink: RecordingSink())
        let ring = try pipeline.makeRing(name: "t")
        let stop = StopSignal()
        let returned = DispatchSemaphore(value: 0)
        Thread {
            _ = try? source.run(into: ring, slots: pipeline.slots, stop: stop)
            returned.signal()
        }.start()
        #expect(await eventually { strap.notifyHeartRate([0x06, 70]) })   // subscribed
        #expect(strap.notify(BluetoothUUID(0x2A19), value: [50]))
        #expect(await offThread { entered.wait(timeout: .now() + 30) } == .success)
        stop.raise()   // closes the link while the handler sleeps
        #expect(await offThread { returned.wait(timeout: .now() + 30) } == .success)
        let done = handlerDone.load(ordering: .sequentiallyConsistent)
        #expect(done, "run returned while a notification handler of its connection was still running")
    }
}
