import Foundation
import GATT
import Synchronization

/// How a ``StrapRunner`` reconnects.
public struct ReconnectPolicy: Sendable, Hashable {
    /// The first pause after a link loss or a failed attempt, in seconds.
    public var initialPause: Double
    /// The longest pause: the pause doubles up to this.
    public var maximumPause: Double

    /// The default: 0.5 s doubling to 2 s. A kernel LE connect completes as soon as the strap
    /// advertises, so a strap that comes back is reconnected within one pause.
    public init(initialPause: Double = 0.5, maximumPause: Double = 2) {
        self.initialPause = initialPause
        self.maximumPause = maximumPause
    }

    /// The pause before attempt `failures + 1` after `failures` failures in a row (≥ 1).
    public func pause(afterFailures failures: Int) -> Double {
        guard failures > 0 else { return initialPause }
        return min(maximumPause, initialPause * pow(2, Double(min(failures - 1, 30))))
    }
}

/// What happens to one strap while a ``StrapRunner`` keeps it connected.
public enum StrapEvent: Sendable {
    /// Connected and discovered; sent just before subscribing (notifications follow).
    /// `connection` counts from 1; above 1 it is a reconnect.
    case connected(StrapTarget, StrapInfo, connection: Int)
    /// A Heart Rate Measurement payload. `firstOfConnection` marks the first one after each
    /// (re)connection; `connection` is which connection delivered it.
    case heartRate(StrapTarget, payload: [UInt8], receivedAt: Date, connection: Int, firstOfConnection: Bool)
    /// A Battery Level reading (read at connect, or notified).
    case battery(StrapTarget, level: UInt8, receivedAt: Date)
    /// The link ended (not after a stop).
    case disconnected(StrapTarget, reason: String)
    /// A connection attempt failed; the runner retries after `retryIn` seconds.
    case connectFailed(StrapTarget, reason: String, retryIn: Double)
}

/// Keeps one strap connected until stopped: connect, discover, read its information, subscribe
/// to heart rate (and battery), and after any link loss reconnect with ``ReconnectPolicy`` and
/// subscribe again (CCCDs are written on every connection).
///
/// Errors that retrying cannot fix — no Bluetooth in the kernel, no adapter, missing
/// permissions, a device that is not a strap — end ``run()`` with that error.
public final class StrapRunner: Sendable {
    public let target: StrapTarget
    private let connector: StrapConnector
    private let policy: ReconnectPolicy
    private let stop: StopSignal
    private let transactionTimeout: Duration
    private let events: @Sendable (StrapEvent) -> Void

    /// - Parameters:
    ///   - connector: makes a connected bearer (the kernel's, or a test peer's).
    ///   - stop: ends ``run()``; the link is closed cleanly.
    ///   - events: called for every event, on various threads (the GATT reader thread for
    ///     notifications): keep it short and thread-safe.
    public init(target: StrapTarget, connector: @escaping StrapConnector, policy: ReconnectPolicy = ReconnectPolicy(),
                stop: StopSignal, transactionTimeout: Duration = .seconds(30),
                events: @escaping @Sendable (StrapEvent) -> Void) {
        self.target = target
        self.connector = connector
        self.policy = policy
        self.stop = stop
        self.transactionTimeout = transactionTimeout
        self.events = events
    }

    /// Runs until the stop signal fires (returns normally) or an error retrying cannot fix (throws it).
    public func run() async throws {
        var connections = 0
        var failures = 0
        var info: StrapInfo?
        while !stop.isTriggered {
            let connection: StrapConnection
            let attemptStarted = monotonicSeconds()
            do {
                let target = self.target, connector = self.connector, stop = self.stop
                let bearer = try await onThread { try connector(target, stop) }
                if stop.isTriggered { bearer.close(); break }
                connection = try await StrapConnection.open(
                    target, bearer: bearer, transactionTimeout: transactionTimeout,
                    services: info == nil ? StrapConnection.allServices : StrapConnection.streamingServices)
            } catch {
                if stop.isTriggered { break }
                if Self.isPermanent(error) { throw error }
                failures += 1
                // The backoff spaces attempt *starts*: an attempt that already waited (a kernel
                // connect that timed out because the strap was away) is followed at once, so a
                // strap that comes back is caught by the next attempt without an extra pause.
                let pause = max(0, policy.pause(afterFailures: failures) - (monotonicSeconds() - attemptStarted))
                events(.connectFailed(target, reason: Self.describe(error), retryIn: pause))
                await sleep(pause)
                continue
            }

            connections += 1
            let number = connections
            var delivered = false
            do {
                // The first connection reads everything before subscribing (samples need the
                // device record); reconnects subscribe first, so data resumes at once.
                if info == nil { info = try await connection.readInfo() }
                // Announce the connection before subscribing, so consumers have the device
                // record and the gap mark in place when the first notification arrives.
                events(.connected(target, info ?? StrapInfo(), connection: number))
                let first = FirstFlag()
                let target = self.target, events = self.events
                try await connection.subscribeHeartRate { payload, at in
                    events(.heartRate(target, payload: payload, receivedAt: at, connection: number,
                                      firstOfConnection: first.take()))
                }
                if number > 1, let level = try await connection.readBattery() { info?.battery = level }
                try await connection.subscribeBattery { level, at in events(.battery(target, level: level, receivedAt: at)) }
                if let level = info?.battery { events(.battery(target, level: level, receivedAt: Date())) }
                failures = 0

                // Wait for the link to drop or for the stop.
                while connection.endReason == nil && !stop.isTriggered {
                    await sleep(0.05)
                }
                delivered = first.wasTaken
            } catch {
                if Self.isPermanent(error) { connection.close(); throw error }
            }
            let reason = connection.endReason
            connection.close()
            if stop.isTriggered { break }
            failures = delivered ? 1 : failures + 1
            events(.disconnected(target, reason: reason ?? "the link failed during setup"))
            await sleep(policy.pause(afterFailures: failures))
        }
    }

    /// Errors that a retry cannot fix.
    static func isPermanent(_ error: any Error) -> Bool {
        guard let e = error as? BluetoothError else { return false }
        switch e.kind {
        case .notInKernel, .noAdapter, .permissionDenied, .notSupported, .pairingFailed: return true
        default: return false
        }
    }

    static func describe(_ error: any Error) -> String {
        if let e = error as? BluetoothError { return e.message }
        return "\(error)"
    }

    /// Sleeps up to `seconds`, returning early when stopped.
    private func sleep(_ seconds: Double) async {
        let end = monotonicSeconds() + seconds
        while !stop.isTriggered {
            let left = end - monotonicSeconds()
            if left <= 0 { return }
            try? await Task.sleep(for: .milliseconds(Int(min(left, 0.05) * 1000) + 1))
        }
    }
}

/// True exactly once: for the first notification of a connection.
private final class FirstFlag: Sendable {
    private let taken = Atomic<Bool>(false)
    func take() -> Bool { !taken.exchange(true, ordering: .acquiringAndReleasing) }
    var wasTaken: Bool { taken.load(ordering: .acquiring) }
}
