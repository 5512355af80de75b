import Foundation
import GATT
import HealthModel
import HealthStore
import HeartRateProfile
import Ingest
import Logging
import Synchronization

/// One Heart Rate Measurement notification as a front-end shows it (`live`'s lines, `record`'s
/// capture): a copy of the raw-event tap's borrowed view, made only when a front-end asks.
package struct StrapReading: Sendable {
    /// Which of the session's straps sent it (an index into ``StrapSession/straps``).
    package var strap: Int
    /// Receipt time (the sample's timestamp).
    package var receivedAt: Date
    /// The payload exactly as received.
    package var payload: [UInt8]
    /// The decode, or `nil` when the payload was rejected (see ``rejection``).
    package var measurement: HeartRateMeasurement?
    /// Why the payload was rejected (empty, flags only, cut-short bpm).
    package var rejection: String?
    /// Which connection (1, 2, … after reconnects) delivered it.
    package var connection: Int
    /// The device record of that connection.
    package var device: Device
}

/// Per-strap totals of a session, for its summary.
package struct StrapTally: Sendable {
    /// Heart Rate Measurement notifications received.
    package var notifications = 0
    /// Payloads rejected by the decoder (counted, not stored).
    package var rejected = 0
    /// bpm of the accepted readings with bpm > 0.
    package var minBPM: Int?
    package var maxBPM: Int?
    package var bpmSum = 0
    package var bpmCount = 0
    /// Connections made (1 + reconnects).
    package var connections = 0

    /// The mean bpm of the readings with bpm > 0.
    package var averageBPM: Double? { bpmCount > 0 ? Double(bpmSum) / Double(bpmCount) : nil }

    mutating func add(_ m: HeartRateMeasurement?) {
        notifications += 1
        guard let m else { rejected += 1; return }
        guard m.beatsPerMinute > 0 else { return }
        let bpm = Int(m.beatsPerMinute)
        minBPM = min(minBPM ?? bpm, bpm)
        maxBPM = max(maxBPM ?? bpm, bpm)
        bpmSum += bpm
        bpmCount += 1
    }
}

/// What a session did.
package struct StrapSessionSummary: Sendable {
    /// From start to stop, in seconds.
    package var duration: Double
    /// One tally per strap, in the session's order.
    package var straps: [StrapTally]
    /// Samples committed to the store (0 without one).
    package var samplesStored: Int
    /// Transactions committed (0 without a store).
    package var batches: Int
    /// Samples that could not be saved when the session ended (the store kept failing).
    package var unsaved: Int

    package var notifications: Int { straps.reduce(0) { $0 + $1.notifications } }
    package var minBPM: Int? { straps.compactMap(\.minBPM).min() }
    package var maxBPM: Int? { straps.compactMap(\.maxBPM).max() }
    package var averageBPM: Double? {
        let n = straps.reduce(0) { $0 + $1.bpmCount }
        return n > 0 ? Double(straps.reduce(0) { $0 + $1.bpmSum }) / Double(n) : nil
    }
}

/// The strap path of the interactive commands (`live`, `record`): the very path `run` takes —
/// each strap a ``StrapSource`` (one connection setup, one record mapper, the runner's one
/// reconnect policy) pushing into an ``IngestPipeline`` run by a ``GatewayRuntime`` (one stop
/// mechanism, one signal trap) — with taps for the front-end: the raw-event tap turns each
/// notification into a ``StrapReading`` (payload hex, `record`'s capture lines) and the
/// strap events into ``Event``s. Without a store (`--no-store`, `record`) the pipeline writes to
/// a ``NullSink``.
package final class StrapSession: Sendable {
    /// A strap to keep connected.
    package typealias Strap = StrapEndpoint

    /// What a front-end shows as the session runs.
    package enum Event: Sendable {
        /// Strap `strap` connected (connection 1) or reconnected; notifications are enabled next.
        case connected(strap: Int, StrapSource.Connection)
        /// A notification (the raw-event tap).
        case reading(StrapReading)
        /// A Battery Level notification.
        case battery(strap: Int, level: Int, at: Date)
        /// The link ended; the session reconnects.
        case disconnected(strap: Int, reason: String)
        /// A connection attempt failed; the next starts in `retryIn` seconds.
        case connectFailed(strap: Int, reason: String, retryIn: Double)
        /// The store refused a batch; the writer keeps it and retries (nothing accepted is lost).
        case storeFailed(String)
    }

    /// The straps, in the order given.
    package let straps: [Strap]
    private let runtime: GatewayRuntime
    private let sources: [StrapSource]
    private let storing: Bool
    private let registry: StrapRegistry?
    private let tallies: Locked<[StrapTally]>

    /// A session over `straps`.
    /// - Parameters:
    ///   - store: where samples and the device registry go; `nil` stores nothing (`--no-store`).
    ///   - sink: the pipeline's sink; default the store's (``StoreSink``), or a ``NullSink``
    ///     without a store. Tests pass one that fails.
    ///   - configuration: the pipeline's batching (default: a commit about once a second).
    ///   - policy: how straps reconnect.
    ///   - maxNotifications: stop after this many notifications from all straps (`--count`).
    ///   - events: what the front-end shows; called from several threads (keep it short).
    package init(straps: [Strap], store: HealthStore?, sink: (any SampleSink)? = nil,
                configuration: IngestConfiguration = IngestConfiguration(flushInterval: .seconds(1)),
                policy: ReconnectPolicy = ReconnectPolicy(), maxNotifications: Int? = nil,
                transactionTimeout: Duration = .seconds(30), logger: Logger,
                events: @escaping @Sendable (Event) -> Void) throws {
        self.straps = straps
        storing = store != nil
        let sink: any SampleSink = try sink ?? store.map { try StoreSink(store: $0) } ?? NullSink()
        let runtime = try GatewayRuntime(sink: sink, store: store, configuration: configuration, policy: policy, logger: logger)
        self.runtime = runtime
        let tallies = Locked([StrapTally](repeating: StrapTally(), count: straps.count))
        self.tallies = tallies
        let registry = store.map { StrapRegistry(store: $0, logger: logger) }
        self.registry = registry
        let total = Locked(0)
        var sources: [StrapSource] = []
        for (k, strap) in straps.enumerated() {
            sources.append(StrapSource(
                strap, transactionTimeout: transactionTimeout,
                events: { e in
                    registry?.record(e, localIdentifier: strap.localIdentifier, address: strap.address, addressType: strap.addressType)
                    switch e {
                    case .connected(let c):
                        tallies.withLock { $0[k].connections = c.number }
                        events(.connected(strap: k, c))
                        if let level = c.battery { events(.battery(strap: k, level: level, at: c.at)) }
                    case .battery(let level, let at): events(.battery(strap: k, level: level, at: at))
                    case .disconnected(let reason): events(.disconnected(strap: k, reason: reason))
                    case .subscribed, .signal, .hrvRefused: break
                    }
                },
                notifications: { n in
                    let reading = StrapReading(strap: k, receivedAt: n.receivedAt, payload: Array(n.payload),
                                               measurement: try? n.measurement.get(),
                                               rejection: n.measurement.failure.map { "\($0)" }, connection: n.connection, device: n.device)
                    tallies.withLock { $0[k].add(reading.measurement) }
                    events(.reading(reading))
                    let seen = total.withLock { n -> Int in n += 1; return n }
                    if let maxNotifications, seen >= maxNotifications { runtime.requestStop(reason: "\(maxNotifications) notifications received") }
                }))
        }
        self.sources = sources
        runtime.onRetry { name, reason, pause in
            guard let k = straps.firstIndex(where: { $0.name == name }) else { return }
            events(.connectFailed(strap: k, reason: reason, retryIn: Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18))
        }
        runtime.pipeline.onStallChange { reason in if let reason { events(.storeFailed(reason)) } }
    }

    /// Stops the session (any thread): the straps disconnect, what was received is committed.
    package func stop(reason: String = "stopped") { runtime.requestStop(reason: reason) }

    /// Runs until ``stop(reason:)``, SIGINT/SIGTERM (a second one exits at once), `duration`, or
    /// `maxNotifications`; then disconnects every strap, commits what is pending and returns
    /// the summary. Blocks: call it from a thread of its own (``GatewayRuntime/run``).
    /// - Throws: an error no retry can fix (no Bluetooth, no permission, not a strap), after
    ///   stopping every strap and committing what was received.
    package func run(duration: Duration? = nil, trapsSignals: Bool = true) throws -> StrapSessionSummary {
        let started = ContinuousClock.now
        let final: IngestStats
        do {
            final = try runtime.run(sources: sources, duration: duration, statusInterval: .seconds(3600),
                                    trapsSignals: trapsSignals, interactive: true)
        } catch {
            registry?.flush()
            throw error
        }
        registry?.flush()   // the device registry is current when the command reports
        let elapsed = started.duration(to: .now)
        return StrapSessionSummary(duration: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
                                   straps: tallies.withLock { $0 },
                                   samplesStored: storing ? Int(final.committed) : 0, batches: storing ? Int(final.batches) : 0,
                                   unsaved: Int(final.abandoned))
    }
}

extension Result {
    /// The error, or nil for a success.
    var failure: Failure? {
        if case .failure(let e) = self { return e }
        return nil
    }
}
