import BluetoothLinux
import Foundation
import GATT
import HealthModel
import HealthStore
import Ingest
import Logging
import Synchronization
import Locking

/// The daemon's composition root (`healthgate run`): the configuration becomes sources — each
/// `[[strap]]` a ``StrapSource`` over the kernel's L2CAP socket or a Unix socket, each
/// `[[pedometer]]` rule a ``PedometerWatcher`` starting pedometer sources as they appear — feeding
/// one pipeline into the store, run by a ``GatewayRuntime`` until SIGTERM/SIGINT; the device
/// registry (``StrapRegistry``) and the journal (``StrapEventLog``) hear every strap event.
package final class GatewayDaemon: Sendable {
    /// The runtime (pipeline, runner, signals, systemd).
    package let runtime: GatewayRuntime
    /// The configured strap sources.
    package let straps: [StrapSource]
    private let watcher: PedometerWatcher
    private let config: GatewayConfig
    private let strapObservers: StrapObservers
    private let pedometerObservers: PedometerObservers
    private let statusNotes = Lock<[@Sendable () -> String?]>([])

    /// Adds `note` to every status line (the log's and systemd's `STATUS=`), after the devices:
    /// the uplinks' lag ("uplink 1234 changes behind"). Called on the status timer: keep it
    /// short; nil says nothing this time.
    package func addStatusNote(_ note: @escaping @Sendable () -> String?) {
        statusNotes.withLock { $0.append(note) }
    }

    /// Also tells `observer` every strap event, with the strap's local identifier and alias (the
    /// HTTP API's device states and live stream). Called on the strap's thread: keep it short.
    package func onStrapEvent(_ observer: @escaping @Sendable (StrapSource.Event, String, String?) -> Void) {
        strapObservers.add(observer)
    }

    /// Also tells `observer` every event of every pedometer the daemon opens, with the device its
    /// samples carry (local identifier `serial:<id>`, the rule's name): the HTTP API's connection
    /// state of pedometers. Called on the pedometer's thread: keep it short.
    package func onPedometerEvent(_ observer: @escaping @Sendable (PedometerEvent, Device) -> Void) {
        pedometerObservers.add(observer)
    }

    /// Seconds a strap's connect may stay pending (as `live`'s default). A pending LE connect
    /// completes as soon as the strap advertises, so a longer wait delays nothing; what it
    /// spares is cancelling connects, which is where the kernel misbehaves (seven straps started
    /// at once: the kernel connects them one at a time, and the last one's 10 s connect was
    /// cancelled just as its turn came; docs/bluetooth-linux.md, "Connect timeouts").
    package static let connectTimeout = 60.0

    /// Builds the daemon for `config` over `store`; straps with an address connect through
    /// `adapter` (nil: the kernel's choice). A strap's address type is the file's, else the one
    /// `pair` remembered, else a guess from the address.
    /// - Throws: ``HealthStore/StoreError`` (the registry could not be read), ``Ingest/IngestError``.
    package init(config: GatewayConfig, store: HealthStore, adapter: Adapter?, logger: Logger) throws {
        self.config = config
        runtime = try GatewayRuntime(store: store, configuration: config.ingest, durability: config.durability,
                                     policy: config.reconnect, logger: logger)
        let registry = StrapRegistry(store: store, logger: logger)
        let eventLog = StrapEventLog(logger: logger)
        let connector = kernelConnector(adapter: adapter, timeout: Self.connectTimeout)
        let encryptingConnector = kernelConnector(adapter: adapter, security: .medium, timeout: Self.connectTimeout)
        let observers = StrapObservers()
        var straps: [StrapSource] = []
        for s in config.straps {
            if let path = s.socket {
                // The strap's ATT channel over a Unix socket (a proxy, a remote radio,
                // `healthgate simulate`): the same client, reconnects and re-subscription.
                let (local, name) = ("socket:\(path)", "strap \(s.name ?? path)")
                straps.append(StrapSource(name: name, localIdentifier: local, alias: s.name, events: { e in
                    eventLog.log(e, strap: name)
                    registry.record(e, localIdentifier: local, alias: s.name)
                    observers.send(e, local, s.name)
                }) { _ in
                    try SocketATTBearer.connect(unixSocket: path)
                })
                continue
            }
            guard let text = s.address, let address = BluetoothAddress(text) else { continue }
            let target = StrapTarget.known(address, record: try store.device(address: address.description),
                                           addressType: s.addressType.flatMap(AddressType.init(rawValue:)), name: s.name)
            let type = target.addressType
            let (local, name) = (target.localIdentifier, "strap \(target)")
            straps.append(StrapSource(name: name, localIdentifier: local, alias: s.name, events: { e in
                eventLog.log(e, strap: name)
                registry.record(e, localIdentifier: local, address: address.description, addressType: type.rawValue, alias: s.name)
                observers.send(e, local, s.name)
            }, connect: { [connect = s.encrypt ? encryptingConnector : connector] in try connect(target, $0) }))
        }
        self.straps = straps
        strapObservers = observers
        let pedometerObservers = PedometerObservers()
        self.pedometerObservers = pedometerObservers
        watcher = PedometerWatcher(rules: config.pedometers, runner: runtime.runner, logger: logger, store: store) { rule, path, identity in
            let device = PedometerWatcher.device(identity: identity, name: rule.name, path: path)
            return { event in pedometerObservers.send(event, device) }
        }
    }

    /// Runs until SIGTERM/SIGINT, then stops the sources, drains, commits and returns the final
    /// counters. The status line starts with what `devices` says ("9/10 straps subscribed,
    /// 4 pedometer(s) open"). Blocks: call it from a thread of its own (``GatewayRuntime/run``).
    package func run() throws -> IngestStats {
        let stats = straps.map(\.stats)
        let (watcher, pedometerRules, notes) = (self.watcher, config.pedometers.count, statusNotes.withLock { $0 })
        return try runtime.run(sources: straps, statusInterval: .seconds(config.statusInterval), started: { watcher.start() },
                               devices: {
            var parts: [String] = []
            if !stats.isEmpty {
                parts.append("\(stats.filter { $0.subscribed.load(ordering: .relaxed) }.count)/\(stats.count) straps subscribed")
            }
            if pedometerRules > 0 { parts.append("\(watcher.openCount) pedometer(s) open") }
            parts += notes.compactMap { $0() }
            return parts.joined(separator: ", ")
        })
    }
}

/// The daemon's strap-event observers (``GatewayDaemon/onStrapEvent(_:)``).
private final class StrapObservers: Sendable {
    private let list = Lock<[@Sendable (StrapSource.Event, String, String?) -> Void]>([])
    func add(_ o: @escaping @Sendable (StrapSource.Event, String, String?) -> Void) { list.withLock { $0.append(o) } }
    func send(_ e: StrapSource.Event, _ local: String, _ alias: String?) { for o in list.withLock({ $0 }) { o(e, local, alias) } }
}

/// The daemon's pedometer-event observers (``GatewayDaemon/onPedometerEvent(_:)``).
private final class PedometerObservers: Sendable {
    private let list = Lock<[@Sendable (PedometerEvent, Device) -> Void]>([])
    func add(_ o: @escaping @Sendable (PedometerEvent, Device) -> Void) { list.withLock { $0.append(o) } }
    func send(_ e: PedometerEvent, _ d: Device) { for o in list.withLock({ $0 }) { o(e, d) } }
}
