import Platform
import Foundation
import GATT
import HealthGateTesting
import Logging
import Synchronization
import Simulators
import Testing
@testable import BluetoothLinux
@testable import Gateway
@testable import Ingest
@testable import HealthGateConfiguration
import Locking

/// The one reconnect policy (``ReconnectPolicy`` in the ``SourceRunner``) on the one strap path
/// (``StrapSource``): link loss → reconnect → CCCD written again, backoff of failed attempts,
/// permanent errors, a stop during a pause. (Formerly `StrapRunnerTests` of the separate
/// `StrapRunner`: the same assertions.)
@Suite("Reconnect: subscribe, link loss, reconnect, backoff (simulated strap over a socket pair)")
struct ReconnectPolicyTests {
    static let target = StrapTarget(address: BluetoothAddress("F0:F1:F2:F3:F4:F5")!, addressType: .random)
    static let fast = ReconnectPolicy(initialPause: .milliseconds(10), maximumPause: .milliseconds(50), settlePause: .milliseconds(10))

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

    /// Collects what a runner reports.
    final class Seen: Sendable {
        let events = Lock<[StrapSource.Event]>([])
        let payloads = Lock<[(payload: [UInt8], connection: Int)]>([])
        let pauses = Lock<[Double]>([])
        let failures = Lock<[any Error]>([])
        var connected: [Int] { events.withLock { $0.compactMap { if case .connected(let c) = $0 { c.number } else { nil } } } }
    }

    /// A runner with `policy` running a strap source reached through `connector`.
    static func start(_ connector: @escaping StrapConnector, policy: ReconnectPolicy = fast, seen: Seen) throws -> (SourceRunner, IngestPipeline) {
        let pipeline = try IngestPipeline(sink: RecordingSink())
        let runner = SourceRunner(pipeline: pipeline, logger: Logger(label: "test"), policy: policy)
        runner.onRetry { _, _, pause in
            seen.pauses.withLock { $0.append(Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18) }
        }
        runner.onFailure { _, e in seen.failures.withLock { $0.append(e) } }
        let source = StrapSource(name: "strap", localIdentifier: target.localIdentifier, transactionTimeout: .seconds(5),
                                 events: { e in seen.events.withLock { $0.append(e) } },
                                 notifications: { n in seen.payloads.withLock { $0.append((Array(n.payload), n.connection)) } },
                                 connect: { try connector(target, $0) })
        pipeline.start()
        try runner.start(source)
        return (runner, pipeline)
    }

    static func cccdWrites(_ strap: SimulatedPeripheral) -> Int {
        guard let cccd = strap.cccdHandle(of: 0x2A37) else { return -1 }
        let w: [UInt8] = [0x12, UInt8(cccd & 0xFF), UInt8(cccd >> 8), 0x01, 0x00]
        return strap.transcript.filter { $0.direction == .clientToServer && $0.bytes == w }.count
    }

    @Test func deliversNotificationsAndReconnectsAfterLinkLoss() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let seen = Seen()
        let (runner, pipeline) = try Self.start(Connector(strap).connector, seen: seen)

        #expect(await eventually { seen.connected == [1] })
        #expect(await strapSubscribed(strap))
        for bpm: UInt8 in [70, 71, 72] { strap.notifyHeartRate([0x16, bpm, 0x00, 0x04]) }
        #expect(await eventually { seen.payloads.withLock { $0.count } == 3 })

        strap.disconnect()  // the strap walks away
        #expect(await eventually { seen.connected == [1, 2] })
        #expect(await strapSubscribed(strap))
        strap.notifyHeartRate([0x06, 90])
        #expect(await eventually { seen.payloads.withLock { $0.count } == 4 })

        let b = seen.payloads.withLock { $0 }
        #expect(b.map { $0.payload[1] } == [70, 71, 72, 90])
        #expect(b.map(\.connection) == [1, 1, 1, 2])
        #expect(strap.connectionCount == 2)
        #expect(Self.cccdWrites(strap) == 2)  // notifications re-enabled on the new link
        #expect(seen.events.withLock { $0 }.contains { if case .disconnected = $0 { true } else { false } })
        // The battery level read at connect comes with the connection.
        #expect(seen.events.withLock { $0 }.contains { if case .connected(let c) = $0 { c.battery == 87 } else { false } })

        _ = await offThread { runner.stopAll(); return pipeline.stop() }
        #expect(await eventually { !strap.notifyHeartRate([0x06, 60]) })  // link closed on stop
    }

    @Test func retriesFailedConnectsWithBackoff() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let seen = Seen()
        let connector = Connector(strap, failFirst: 3)
        let (runner, pipeline) = try Self.start(connector.connector, seen: seen)
        #expect(await eventually { !seen.connected.isEmpty })
        _ = await offThread { runner.stopAll(); return pipeline.stop() }
        let pauses = seen.pauses.withLock { $0 }
        // Each pause is the policy's (doubling), less the time the failed attempt already took.
        #expect(pauses.count == 3)
        for (p, want) in zip(pauses, [0.01, 0.02, 0.04]) { #expect(p >= 0 && p <= want, "\(pauses)") }
        #expect(connector.attempts.load(ordering: .relaxed) == 4)
    }

    @Test func anAttemptThatAlreadyWaitedIsRetriedAtOnce() async throws {
        let seen = Seen()
        let (runner, pipeline) = try Self.start({ target, stop in
            _ = stop.sleep(.milliseconds(100))  // a kernel connect that waited, then was refused
            throw BluetoothError(errno: ECONNREFUSED, during: .connect(target.address, timeoutSeconds: 0.1))
        }, seen: seen)
        #expect(await eventually { seen.pauses.withLock { $0.count } >= 2 })
        _ = await offThread { runner.stopAll(); return pipeline.stop() }
        #expect(seen.pauses.withLock { $0 }.first == 0)
    }

    /// A connect that timed out leaves the kernel cancelling it: the next attempt waits the
    /// policy's settle pause even though the attempt itself already waited (on Debian 12's 6.1
    /// kernel an immediate reconnect to the same strap crashed the connecting thread in
    /// `hci_chan_del`: docs/bluetooth-linux.md, "Connect timeouts").
    @Test func aTimedOutConnectWaitsTheSettlePause() async throws {
        let seen = Seen()
        let policy = ReconnectPolicy(initialPause: .milliseconds(10), maximumPause: .milliseconds(50), settlePause: .milliseconds(300))
        let attempts = Lock<[ContinuousClock.Instant]>([])
        let (runner, pipeline) = try Self.start({ target, stop in
            attempts.withLock { $0.append(.now) }
            _ = stop.sleep(.milliseconds(100))  // a kernel connect waiting for a strap that is away
            throw BluetoothError(errno: ETIMEDOUT, during: .connect(target.address, timeoutSeconds: 0.1))
        }, policy: policy, seen: seen)
        #expect(await eventually { attempts.withLock { $0.count } >= 3 })
        _ = await offThread { runner.stopAll(); return pipeline.stop() }
        let pauses = seen.pauses.withLock { $0 }
        #expect(!pauses.isEmpty && pauses.allSatisfy { abs($0 - 0.3) < 0.001 }, "\(pauses)")
        let starts = attempts.withLock { $0 }
        // Attempt starts are the attempt (100 ms) plus the settle pause apart, never less.
        for (a, b) in zip(starts, starts.dropFirst()) { #expect(a.duration(to: b) >= .milliseconds(400)) }
    }

    @Test func permanentErrorsEndTheRun() async throws {
        let seen = Seen()
        let (runner, pipeline) = try Self.start({ _, _ in
            throw BluetoothError(errno: EAFNOSUPPORT, during: .open(adapter: nil))
        }, seen: seen)
        // The source ends by itself: no retry, the failure reported.
        await offThread { runner.waitForAll() }
        _ = await offThread { pipeline.stop() }
        let e = try #require(seen.failures.withLock { $0 }.first as? BluetoothError)
        #expect(e.kind == .notInKernel)
        #expect(seen.pauses.withLock { $0 }.isEmpty)
    }

    /// No adapter is not permanent once a source runs: the Pi's built-in controller appears
    /// after `hciuart.service`, a dongle re-enumerates after a reset. The strap is tried again
    /// and connects when the adapter is there (the real-stack `adapter-reset` scenario does it
    /// against the kernel).
    @Test func aMissingAdapterIsWaitedFor() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let seen = Seen()
        let attempts = Atomic<Int>(0)
        let (runner, pipeline) = try Self.start({ target, _ in
            if attempts.add(1, ordering: .relaxed).newValue <= 2 {
                throw BluetoothError(errno: EHOSTUNREACH, during: .connect(target.address, timeoutSeconds: 1))
                    .blamingAdapter { .absent }
            }
            return try strap.connectSocketPair()
        }, seen: seen)
        #expect(await eventually { seen.connected == [1] })
        _ = await offThread { runner.stopAll(); return pipeline.stop() }
        #expect(seen.failures.withLock { $0 }.isEmpty)
        #expect(seen.pauses.withLock { $0.count } == 2)
    }

    @Test func permanentErrorsEndAnInteractiveSession() async throws {
        let session = try StrapSession(straps: [StrapSession.Strap(name: "strap", localIdentifier: "F0:F1:F2:F3:F4:F5") { _ in
            throw BluetoothError(errno: EAFNOSUPPORT, during: .open(adapter: nil))
        }], store: nil, policy: Self.fast, logger: Logger(label: "test")) { _ in }
        let outcome = await offThread { Result { try session.run(trapsSignals: false) } }
        #expect(throws: BluetoothError.self) { try outcome.get() }
    }

    @Test func stopDuringBackoffEndsPromptly() async throws {
        let seen = Seen()
        let (runner, pipeline) = try Self.start({ target, _ in
            throw BluetoothError(errno: EHOSTDOWN, during: .connect(target.address, timeoutSeconds: 1))
        }, policy: ReconnectPolicy(initialPause: .seconds(3600), maximumPause: .seconds(3600)), seen: seen)
        #expect(await eventually { !seen.pauses.withLock { $0 }.isEmpty })
        _ = await offThread { runner.stopAll(); return pipeline.stop() }  // returns although the pause is an hour
    }

    @Test func policyDoublesUpToTheCap() {
        let p = ReconnectPolicy()
        #expect((1...6).map { p.pause(afterFailures: $0) } == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(2), .seconds(2), .seconds(2)])
        #expect(ReconnectPolicy(initialPause: .seconds(3), maximumPause: .seconds(1)).maximumPause == .seconds(3))
    }
}
