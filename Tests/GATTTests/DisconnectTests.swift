import Foundation
import GATT
import HealthGateTesting
import Simulators
import Synchronization
import Testing
import Locking

// A hang guard, not a latency bound: generous, because in the one-thread pass at a high load
// a test can wait minutes for the single pool thread before it runs at all.
/// A link that drops mid-procedure fails the procedure, and everything after it, cleanly.
@Suite(.timeLimit(.minutes(5))) struct DisconnectTests {
    @Test(arguments: [ATTOpcode.readByGroupTypeRequest, .readByTypeRequest, .findInformationRequest], BearerKind.allCases)
    func disconnectMidDiscovery(opcode: ATTOpcode, kind: BearerKind) async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        strap.inject(.disconnect(opcode: opcode, occurrence: opcode == .readByGroupTypeRequest ? 2 : 1))
        let ended = Lock<GATTError?>(nil)
        let bearer: any ATTBearer = kind == .inMemory ? strap.connect() : try strap.connectSocketPair()
        let client = GATTClient(bearer: bearer, onDisconnect: { reason in ended.withLock { $0 = reason } })
        await #expect {
            _ = try await client.discover()
        } throws: { error in
            if case GATTError.disconnected = error { return true }
            return false
        }
        // Every later call fails at once with the same reason.
        await #expect(throws: GATTError.self) { _ = try await client.read(handle: 1) }
        #expect(ended.withLock { $0 } != nil)
        #expect(client.endReason != nil)

        // A new connection (new client, fresh discovery) works.
        let again = try connect(strap, over: kind)
        defer { again.close() }
        #expect(try await again.discover().characteristic(0x2A37) != nil)
    }

    @Test func closeFailsQueuedRequests() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        strap.inject(.ignore(opcode: .readRequest))
        let client = try connect(strap, over: .socketPair)
        let first = Task { try await client.read(handle: 3) }
        let second = Task { try await client.read(handle: 3) }
        try await Task.sleep(for: .milliseconds(50))  // let both queue (no assertion on time)
        client.close()
        await #expect(throws: GATTError.self) { _ = try await first.value }
        await #expect(throws: GATTError.self) { _ = try await second.value }
    }

    /// After `close()`, `waitForReaderToEnd()` returns only once a notification handler that
    /// was running has finished, so what handlers touch can go to the next connection (the
    /// daemon hands each strap's record mapper on this way).
    @Test func waitForReaderToEndOutlastsARunningHandler() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let client = try connect(strap, over: .socketPair)
        let hrm = try #require(try await client.discover().characteristic(0x2A37))
        let inHandler = DispatchSemaphore(value: 0)
        let finished = Atomic<Bool>(false)
        try await client.subscribe(to: hrm) { _ in
            inHandler.signal()
            usleep(300_000)
            finished.store(true, ordering: .sequentiallyConsistent)
        }
        #expect(strap.notify(0x2A37, value: [0x00, 72]))
        #expect(await offThread { inHandler.wait(timeout: .now() + 30) } == .success)
        client.close()
        await offThread { client.waitForReaderToEnd() }
        let done = finished.load(ordering: .sequentiallyConsistent)
        #expect(done, "waitForReaderToEnd returned while a handler was still running")
        client.waitForReaderToEnd()   // again: returns at once
    }
}
