import Foundation
import GATT
import Simulators
import Synchronization
import Testing
@testable import BluetoothLinux

@Suite("Strap runner: subscribe, link loss, reconnect (simulated strap over a socket pair)")
struct StrapRunnerTests {
    static let target = StrapTarget(address: BluetoothAddress("F0:F1:F2:F3:F4:F5")!, addressType: .random)
    static let fast = ReconnectPolicy(initialPause: 0.01, maximumPause: 0.05)

    /// A connector that hands out socket-pair links to `strap`, counting attempts; the first
    /// `failFirst` attempts fail as a timed-out kernel connect would.
    final class Connector: Sendable {
        let strap: SimulatedPeripheral
        let attempts = Atomic<Int>(0)
        let failFirst: Int
        init(_ strap: SimulatedPeripheral, failFirst: Int = 0) { self.strap = strap; self.failFirst = failFirst }
        var connector: StrapConnector {
            { [self] target, _ in
                let n = attempts.add(1, ordering: .relaxed).newValue
                if n <= failFirst { throw BluetoothError(errno: ETIMEDOUT, during: .connect(target.address, timeoutSeconds: 1)) }
                return try strap.connectSocketPair()
            }
        }
    }

    static func cccdWrites(_ strap: SimulatedPeripheral) -> Int {
        guard let cccd = strap.cccdHandle(of: 0x2A37) else { return -1 }
        let w: [UInt8] = [0x12, UInt8(cccd & 0xFF), UInt8(cccd >> 8), 0x01, 0x00]
        return strap.transcript.filter { $0.direction == .clientToServer && $0.bytes == w }.count
    }

    @Test func deliversNotificationsAndReconnectsAfterLinkLoss() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let stop = StopSignal()
        let events = Collector<StrapEvent>()
        let runner = StrapRunner(target: Self.target, connector: Connector(strap).connector, policy: Self.fast,
                                 stop: stop, transactionTimeout: .seconds(5)) { events.append($0) }
        let task = Task { try await runner.run() }

        func connected() -> [Int] { events.all.compactMap { if case .connected(_, _, let n) = $0 { n } else { nil } } }
        func beats() -> [(payload: [UInt8], connection: Int, first: Bool)] {
            events.all.compactMap { if case .heartRate(_, let p, _, let n, let f) = $0 { (p, n, f) } else { nil } }
        }

        #expect(await eventually { connected() == [1] })
        #expect(await subscribed(strap))
        for bpm: UInt8 in [70, 71, 72] { strap.notifyHeartRate([0x16, bpm, 0x00, 0x04]) }
        #expect(await eventually { beats().count == 3 })

        strap.disconnect()  // the strap walks away
        #expect(await eventually { connected() == [1, 2] })
        #expect(await subscribed(strap))
        strap.notifyHeartRate([0x06, 90])
        #expect(await eventually { beats().count == 4 })

        let b = beats()
        #expect(b.map { $0.payload[1] } == [70, 71, 72, 90])
        #expect(b.map(\.connection) == [1, 1, 1, 2])
        #expect(b.map(\.first) == [true, false, false, true])
        #expect(strap.connectionCount == 2)
        #expect(Self.cccdWrites(strap) == 2)  // notifications re-enabled on the new link
        #expect(events.all.contains { if case .disconnected = $0 { true } else { false } })
        // Battery is read and subscribed after heart rate on each link, so it may still be in
        // flight when the fourth beat lands: wait for it rather than race it.
        #expect(await eventually { events.all.contains { if case .battery(_, 87, _) = $0 { true } else { false } } })

        stop.trigger()
        try await task.value
        #expect(await eventually { !strap.notifyHeartRate([0x06, 60]) })  // link closed on stop
    }

    @Test func retriesFailedConnectsWithBackoff() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let stop = StopSignal()
        let events = Collector<StrapEvent>()
        let connector = Connector(strap, failFirst: 3)
        let runner = StrapRunner(target: Self.target, connector: connector.connector, policy: Self.fast,
                                 stop: stop, transactionTimeout: .seconds(5)) { events.append($0) }
        let task = Task { try await runner.run() }
        #expect(await eventually { events.all.contains { if case .connected = $0 { true } else { false } } })
        stop.trigger()
        try await task.value
        let pauses = events.all.compactMap { if case .connectFailed(_, _, let p) = $0 { p } else { nil } }
        // Each pause is the policy's (doubling), less the time the failed attempt already took.
        #expect(pauses.count == 3)
        for (p, want) in zip(pauses, [0.01, 0.02, 0.04]) { #expect(p >= 0 && p <= want, "\(pauses)") }
        #expect(connector.attempts.load(ordering: .relaxed) == 4)
    }

    @Test func anAttemptThatAlreadyWaitedIsRetriedAtOnce() async throws {
        let stop = StopSignal()
        let events = Collector<StrapEvent>()
        let runner = StrapRunner(target: Self.target, connector: { target, stop in
            _ = stop.wait(seconds: 0.1)  // a kernel connect waiting for a strap that is away
            throw BluetoothError(errno: ETIMEDOUT, during: .connect(target.address, timeoutSeconds: 0.1))
        }, policy: Self.fast, stop: stop) { events.append($0) }
        let task = Task { try await runner.run() }
        #expect(await eventually { events.all.count >= 2 })
        stop.trigger()
        try await task.value
        let pauses = events.all.compactMap { if case .connectFailed(_, _, let p) = $0 { p } else { nil } }
        #expect(pauses.first == 0)
    }

    @Test func permanentErrorsEndTheRun() async throws {
        let stop = StopSignal()
        let runner = StrapRunner(target: Self.target, connector: { target, _ in
            throw BluetoothError(errno: EAFNOSUPPORT, during: .open(adapter: nil))
        }, policy: Self.fast, stop: stop) { _ in }
        let e = await #expect(throws: BluetoothError.self) { try await runner.run() }
        #expect(e?.kind == .notInKernel)
    }

    @Test func stopDuringBackoffEndsPromptly() async throws {
        let stop = StopSignal()
        let runner = StrapRunner(target: Self.target, connector: { target, _ in
            throw BluetoothError(errno: EHOSTDOWN, during: .connect(target.address, timeoutSeconds: 1))
        }, policy: ReconnectPolicy(initialPause: 3600, maximumPause: 3600), stop: stop) { _ in }
        let task = Task { try await runner.run() }
        try await Task.sleep(for: .milliseconds(50))
        stop.trigger()
        try await task.value  // returns although the pause is an hour
    }

    @Test func policyDoublesUpToTheCap() {
        let p = ReconnectPolicy()
        #expect((1...6).map { p.pause(afterFailures: $0) } == [0.5, 1, 2, 2, 2, 2])
    }
}
