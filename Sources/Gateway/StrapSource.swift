import Foundation
import GATT
import HealthModel
import HeartRateProfile
import Ingest
import Platform
import Synchronization
import Locking

/// A BLE heart-rate strap as an ingest source — the one strap path of every command (`run`,
/// `live`, `record`, `demo`): over any ATT bearer (the kernel's L2CAP socket, a Unix socket
/// carrying the ATT channel, a socket pair to the simulated strap) it sets the strap up with
/// ``StrapConnection``, subscribes to Heart Rate Measurement and, on the GATT reader thread,
/// decodes each notification straight into ``SampleRecord``s (``HeartRateRecordMapper``) and
/// pushes them: no allocation and no lock per notification.
///
/// The first connection reads everything (Device Information, GAP name, location, battery)
/// before subscribing; reconnects discover only Heart Rate and Battery and subscribe at once,
/// so data resumes after a handful of round trips. Every connection rediscovers and
/// re-subscribes (non-bonded straps forget their CCCD). The mapper lives across connections:
/// the first RR after a (re)connect is flagged as preceded by a gap, and Energy Expended
/// continues across the outage. Notifications with 0 bpm and payloads without a heart-rate
/// value are counted, not stored.
///
/// Two taps serve front-ends without touching the daemon's hot path: ``Event``s (connected,
/// subscribed, battery, disconnected) and, when given, the raw-event tap ``Notification`` (the
/// payload borrowed from the receive buffer, its decode) for `live`'s lines and `record`'s
/// capture.
package struct StrapSource: IngestSource {
    package let name: String
    package let reconnects: Bool
    /// A stable id for the device registry: the strap's Bluetooth address (`AA:BB:…`), as
    /// `pair` registers it, or `socket:<path>`, so every command files the strap under one device.
    package let localIdentifier: String
    private let alias: String?
    private let transactionTimeout: Duration
    private let connect: @Sendable (StopSignal) throws -> any ATTBearer
    private let counters: Counters
    private let state = StateBox()
    private let events: (@Sendable (Event) -> Void)?
    private let notifications: (@Sendable (Notification) -> Void)?

    /// What the strap's connections share: the record mapper (energy continues over an outage)
    /// and what the first connection read. Touched only by the GATT reader thread of the current
    /// connection and by setup before it subscribes: a connection's `run` returns only after its
    /// reader thread has ended, so two connections never touch it at once.
    final class StateBox: @unchecked Sendable {
        var mapper: HeartRateRecordMapper?
        var info: StrapInfo?
        /// Steps of the wall clock since the last notification (the mapper's times move with them).
        var clock = ClockSteps.system.cursor()
    }

    /// Per-strap counters (any thread).
    package final class Counters: Sendable {
        /// Notifications decoded and pushed.
        package let pushed = Atomic<Int>(0)
        /// Notifications skipped: 0 bpm, or no heart-rate value at all.
        package let skipped = Atomic<Int>(0)
        /// Connections made.
        package let connections = Atomic<Int>(0)
        /// Subscribed to Heart Rate Measurement right now.
        package let subscribed = Atomic<Bool>(false)
        init() {}
    }

    /// The strap's counters.
    package var stats: Counters { counters }

    /// The source HealthGate's BLE samples carry.
    package static let source = Source(name: "HealthGate BLE", identifier: "org.healthgate.ble")

    /// What a connection learned about the strap, for the device registry (`healthgate devices`).
    package struct Connection: Sendable {
        /// Which connection this is: 1 for the first, above 1 a reconnect.
        package var number: Int
        /// The device record: name, Device Information strings, the local identifier.
        package var device: Device
        /// The Body Sensor Location, when the strap has one.
        package var sensorLocation: HeartRateSensorLocation?
        /// The Battery Level in percent, when the strap has the Battery service.
        package var battery: Int?
        /// When the connection was set up.
        package var at: Date
    }

    /// What happens to the strap, once per event: for the log, the device registry and
    /// front-ends (``StrapEventLog``, ``StrapRegistry``, ``StrapSession``).
    package enum Event: Sendable {
        /// Connected and set up (discovery done, the device record read); notifications are
        /// enabled next.
        case connected(Connection)
        /// Heart Rate Measurement notifications are on (the CCCD was written) for connection
        /// `number`.
        case subscribed(connection: Int)
        /// A Battery Level notification.
        case battery(level: Int, at: Date)
        /// The link's received signal strength in dBm (the kernel's Get Connection Information), read once subscribed and
        /// every ``StrapSource/signalInterval`` while connected; only over Bluetooth.
        case signal(dBm: Int, at: Date)
        /// The link of a set-up connection ended by itself (not by a stop); the runner reconnects.
        case disconnected(reason: String)
        /// A minute of beats gave no SDNN or RMSSD: too many of them were artefacts
        /// (``HeartRateRecordMapper/hrvMaxArtefacts``); a loose or dry strap, or arrhythmia.
        case hrvRefused(HeartRateRecordMapper.RefusedWindow, maxArtefacts: Double)
    }

    /// One notification as the raw-event tap sees it, on the GATT reader thread. `payload`
    /// borrows the receive buffer: valid only during the call (copy what you keep).
    package struct Notification {
        /// The value bytes exactly as received.
        package let payload: UnsafeRawBufferPointer
        /// Receipt time (the sample's timestamp).
        package let receivedAt: Date
        /// The decode, or why the payload was rejected.
        package let measurement: Result<HeartRateMeasurement, HeartRateMeasurementError>
        /// Which connection delivered it.
        package let connection: Int
        /// The device record of that connection.
        package let device: Device
    }

    /// A strap reached through `connect` (called once per connection attempt; it should give up
    /// when the stop signal is raised). `events` hears every ``Event`` and `notifications` (the
    /// raw-event tap) every notification, on the connection's threads (the GATT reader's for
    /// notifications), so both should hand slow work (a store write) to a queue of their own.
    package init(name: String, localIdentifier: String, alias: String? = nil, reconnects: Bool = true,
                transactionTimeout: Duration = .seconds(10),
                events: (@Sendable (Event) -> Void)? = nil, notifications: (@Sendable (Notification) -> Void)? = nil,
                connect: @escaping @Sendable (StopSignal) throws -> any ATTBearer) {
        self.init(StrapEndpoint(name: name, localIdentifier: localIdentifier, alias: alias, connect: connect), reconnects: reconnects,
                  transactionTimeout: transactionTimeout, events: events, notifications: notifications)
    }

    /// The strap `endpoint` names, as ``init(name:localIdentifier:alias:reconnects:transactionTimeout:events:notifications:connect:)``.
    package init(_ endpoint: StrapEndpoint, reconnects: Bool = true, transactionTimeout: Duration = .seconds(10),
                events: (@Sendable (Event) -> Void)? = nil, notifications: (@Sendable (Notification) -> Void)? = nil) {
        self.name = endpoint.name
        self.localIdentifier = endpoint.localIdentifier
        self.alias = endpoint.alias
        self.reconnects = reconnects
        self.transactionTimeout = transactionTimeout
        self.connect = endpoint.connect
        self.counters = Counters()
        self.events = events
        self.notifications = notifications
    }

    /// Why a set-up connection ended: already reported as ``Event/disconnected(reason:)``, so
    /// the runner does not log it again.
    struct LinkEnded: Error, ReportedBySource, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    /// How often a connected strap's signal strength is read (seconds).
    package static let signalInterval = 10.0

    package func run(into ring: SampleRing, slots: SlotTable, stop: StopSignal) throws {
        let bearer = try connect(stop)
        if stop.isRaised { bearer.close(); return }
        let number = counters.connections.add(1, ordering: .relaxed).newValue
        let ended = DispatchSemaphore(value: 0)
        let result = Lock<Result<StrapConnection, any Error>?>(nil)
        let setupDone = DispatchSemaphore(value: 0)
        let hookedBearer = bearer
        let hook = stop.onRaise { hookedBearer.close() }
        defer { hook.cancel() }   // this connection is over: the hook must not keep it alive
        let (name, alias, localIdentifier, counters, state, timeout) = (self.name, self.alias, self.localIdentifier, self.counters, self.state, self.transactionTimeout)
        let (events, notifications) = (self.events, self.notifications)
        Task {
            do {
                let connection = try await Self.setUp(bearer: bearer, ring: ring, slots: slots, name: name, alias: alias,
                                                      localIdentifier: localIdentifier, counters: counters, state: state,
                                                      number: number, timeout: timeout, ended: ended,
                                                      events: events, notifications: notifications)
                result.withLock { $0 = .success(connection) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            setupDone.signal()
        }
        setupDone.wait()
        let connection: StrapConnection
        switch result.withLock({ $0 })! {
        case .failure(let e):
            bearer.close()
            if stop.isRaised { return }
            throw e
        case .success(let c): connection = c
        }
        // The mapper goes to the next connection: this one's reader must be done with it.
        defer { connection.closeAndWait() }
        counters.subscribed.store(true, ordering: .relaxed)
        events?(.subscribed(connection: number))
        // This thread only waits for the link to end: it asks for the link's signal strength
        // meanwhile, every interval (a read that fails — the kernel busy with other links, a
        // transport without a radio — gives no event; the next may).
        if let events {
            repeat {
                if let dBm = bearer.signalStrength() { events(.signal(dBm: dBm, at: Date())) }
            } while ended.wait(timeout: .now() + Self.signalInterval) == .timedOut
        } else {
            ended.wait()
        }
        counters.subscribed.store(false, ordering: .relaxed)
        if stop.isRaised { return }
        let why = connection.endReason ?? "the link ended"
        events?(.disconnected(reason: why))
        throw LinkEnded(reason: why)
    }

    private static func setUp(bearer: any ATTBearer, ring: SampleRing, slots: SlotTable, name: String, alias: String?,
                              localIdentifier: String, counters: Counters, state: StateBox, number: Int, timeout: Duration,
                              ended: DispatchSemaphore, events: (@Sendable (Event) -> Void)?,
                              notifications: (@Sendable (Notification) -> Void)?) async throws -> StrapConnection {
        let first = state.info == nil
        let connection = try await StrapConnection.open(name, bearer: bearer, transactionTimeout: timeout,
                                                        services: first ? StrapConnection.allServices : StrapConnection.streamingServices,
                                                        onDisconnect: { _ in ended.signal() })
        do {
            // The first connection reads everything before subscribing (samples need the device
            // record); reconnects reuse it and subscribe at once, so data resumes quickly.
            var info: StrapInfo
            if let known = state.info { info = known } else { info = try await connection.readInfo() }
            if !first, let level = try await connection.readBattery() { info.battery = level }
            state.info = info
            let device = info.device(localIdentifier: localIdentifier, fallbackName: alias ?? name)
            let recordSlots = try HeartRateRecordMapper.Slots(table: slots, source: source, device: device)
            if state.mapper == nil { state.mapper = HeartRateRecordMapper(slots: recordSlots) }
            state.mapper!.slots = recordSlots
            state.mapper!.sensorLocation = info.sensorLocation
            state.mapper!.connectionStarted()
            events?(.connected(Connection(number: number, device: device, sensorLocation: info.sensorLocation,
                                          battery: info.battery, at: Date())))
            if let events {
                // Not every strap notifies its battery; one that does keeps the registry current.
                _ = try? await connection.subscribeBattery { level, at in events(.battery(level: level, at: at)) }
            }
            try await connection.subscribeHeartRate { event in
                // The GATT reader thread: this ring's single producer for this connection.
                let decoded = Result { () throws(HeartRateMeasurementError) in try HeartRateMeasurement.decode(event.value) }
                notifications?(Notification(payload: event.value, receivedAt: event.receivedAt, measurement: decoded,
                                            connection: number, device: device))
                guard case .success(let m) = decoded else {
                    counters.skipped.add(1, ordering: .relaxed)
                    return
                }
                let stepped = state.clock.take()
                if stepped != 0 { state.mapper!.clockStepped(by: stepped) }
                let refused = state.mapper!.counters.hrvWindowsRefused
                let stored = state.mapper!.map(m, at: event.receivedAt.timeIntervalSince1970, payload: event.value) { r, extra in
                    if let extra { ring.push(r, attachment: extra) } else { ring.push(r) }
                }
                if let events, state.mapper!.counters.hrvWindowsRefused != refused, let w = state.mapper!.lastRefusedWindow {
                    events(.hrvRefused(w, maxArtefacts: state.mapper!.hrvMaxArtefacts))
                }
                if stored { counters.pushed.add(1, ordering: .relaxed) } else { counters.skipped.add(1, ordering: .relaxed) }
            }
            return connection
        } catch {
            connection.closeAndWait()
            throw error
        }
    }
}

/// A strap to keep connected, as every strap command names it: how messages call it, the key
/// its samples and registry record go under, and how to reach it (``StrapSource`` connects
/// through it; ``StrapSession`` takes a list of them).
package struct StrapEndpoint: Sendable {
    /// How messages name it (`chest (AA:BB:…)`).
    package var name: String
    /// Its registry and sample key: the address, or `socket:<path>`.
    package var localIdentifier: String
    /// The user's name for it, which becomes the device record's name.
    package var alias: String?
    /// Its Bluetooth address, for the device registry.
    package var address: String?
    /// Its Bluetooth address type (`public`, `random`), for the device registry.
    package var addressType: String?
    /// Makes a connected ATT bearer (called once per attempt; gives up when stop is raised).
    package var connect: @Sendable (StopSignal) throws -> any ATTBearer

    /// A strap reached with `connect`.
    package init(name: String, localIdentifier: String, alias: String? = nil, address: String? = nil, addressType: String? = nil,
                connect: @escaping @Sendable (StopSignal) throws -> any ATTBearer) {
        self.name = name
        self.localIdentifier = localIdentifier
        self.alias = alias
        self.address = address
        self.addressType = addressType
        self.connect = connect
    }
}
