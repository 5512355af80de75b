import Platform
import Foundation
import HealthModel
import HealthStore
import Ingest
import Logging
import Synchronization
import Udev
import Locking

/// The one hot-plug watcher for pedometers (`run`, `serial watch --auto`, `serial watch --reopen`):
/// it opens a ``PedometerSource`` for every tty matching a rule that is not open yet; when the
/// device goes away its source ends, and it is opened again when it comes back.
///
/// It listens to libudev's monitor (``UdevMonitor``: the `udev` source when a udev daemon runs,
/// else raw kernel uevents) and looks again at once when a tty appears, and it also scans every
/// `interval` (2 s): that catches what events cannot tell (a path rule on a pty, a device whose
/// node was not yet accessible when its event came — kernel events can precede udevd's
/// permissions — or a monitor the sandbox refused). Matching reads sysfs for USB ids and serial
/// numbers (`/sys/class/tty/*/device` up to the USB device), which works with or without a udev
/// daemon; `tag` rules need udevd's database (libudev). A rule with a `path` matches that path
/// (following symlinks such as `/dev/serial/by-id/…`).
///
/// Every pedometer is named by ``PedometerIdentity`` (the rule's `id`, else the USB serial number,
/// else the physical USB port), its counter state carried over from earlier versions' ids
/// (``PedometerStateMigration``), and — only once its port is open — recorded in the store's
/// device registry (kind `serial`).
package final class PedometerWatcher: Sendable {
    /// What a front-end may want per opened pedometer: an observer for its source's events.
    package typealias Observe = @Sendable (_ rule: GatewayConfig.Pedometer, _ path: String, _ identity: PedometerIdentity)
        -> (@Sendable (PedometerEvent) -> Void)?

    private let rules: [GatewayConfig.Pedometer]
    private let runner: SourceRunner
    private let logger: Logger
    private let store: HealthStore?
    private let observe: Observe?
    private let open = Lock<Set<String>>([])
    /// Ports that could not be opened, with why and when that was last logged: a port held by
    /// another program is retried at every scan, but said again only when the reason changes
    /// or every ``failureRepeat`` (a journal line every 2 s for days helps nobody).
    private let failing = Lock<[String: (why: String, at: ContinuousClock.Instant)]>([:])
    /// How often a lasting open failure of one port is logged again.
    package static let failureRepeat = Duration.seconds(600)
    private let monitor = Lock<UdevMonitor?>(nil)
    private let wake = DispatchSemaphore(value: 0)

    /// How many matching pedometers are open right now.
    package var openCount: Int { open.withLock { $0.count } }
    private let sysfs: Sysfs
    private let devDir: String

    /// A watcher starting sources on `runner`.
    /// - Parameters:
    ///   - store: where counter state of earlier versions' ids is carried over to today's id and
    ///     opened pedometers are registered; nil skips both (`serial watch --no-store`).
    ///   - sysfs: the device tree to read (tests point it at one of their own).
    ///   - devDir: where the nodes of sysfs's ttys are (`/dev`, or `$HEALTHGATE_DEV_DIR`: ``Sysfs/systemDeviceDirectory``).
    ///   - observe: gives each source an observer (a front-end's tap), or nil.
    package init(rules: [GatewayConfig.Pedometer], runner: SourceRunner, logger: Logger, store: HealthStore? = nil,
                sysfs: Sysfs = .system, devDir: String = Sysfs.systemDeviceDirectory, observe: Observe? = nil) {
        self.rules = rules
        self.runner = runner
        self.logger = logger
        self.store = store
        self.sysfs = sysfs
        self.devDir = devDir
        self.observe = observe
    }

    /// Starts listening for device events (when the system allows it) and scans now and then
    /// every `interval` on a thread of its own until the runner stops.
    /// - Returns: where device events come from, or nil when only the periodic scan runs (the
    ///   reason is logged).
    @discardableResult
    package func start(interval: Duration = .seconds(2)) -> UdevEventSource? {
        guard !rules.isEmpty else { return nil }
        var source: UdevEventSource?
        do {
            let m = try UdevMonitor { [wake] event in
                if event.action == "add" || event.action == "bind" { wake.signal() }
            }
            source = m.source
            monitor.withLock { $0 = m }
        } catch {
            logger.warning("\(error); looking for pedometers every \(interval) instead")
        }
        let stop = runner.stop
        let thread = Thread { [self] in
            while !stop.isRaised {
                scanOnce()
                let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
                _ = wake.wait(timeout: .now() + seconds)
            }
            monitor.withLock { $0?.stop(); $0 = nil }
        }
        thread.name = "pedometer-watch"
        thread.start()
        stop.onRaise { [wake] in wake.signal() }
        return source
    }

    /// One scan: starts sources for new matches. Returns the paths started.
    @discardableResult
    package func scanOnce() -> [String] {
        var started: [String] = []
        for (path, rule) in matches() {
            let isNew = open.withLock { $0.insert(path).inserted }
            guard isNew else { continue }
            let identity = self.identity(path, rule: rule)
            let retrying = failing.withLock { $0[path] != nil }
            logger.log(level: retrying ? .debug : .notice, "pedometer \(path) appeared (rule \(rule.name ?? rule.summary)); opening it as \(identity.id) (\(identity.basis.rawValue)) at \(rule.baud) baud, format \(rule.format)")
            if let store {
                do {
                    if let old = try PedometerStateMigration.carryOver(in: store, identity: identity) {
                        logger.notice("pedometer \(path): counter state carried over from its old id \(old) to \(identity.id)")
                    }
                } catch {
                    logger.error("pedometer \(path): could not carry its counter state over from an old id (\(error)); not opening it now, retrying at the next scan")
                    _ = open.withLock { $0.remove(path) }
                    continue
                }
            }
            let front = observe?(rule, path, identity)
            let registry = Self.registry(store: store, path: path, identity: identity, logger: logger)
            var source = PedometerSource(path: path, id: identity.id, options: rule.sourceOptions, name: rule.name,
                                         device: Self.device(identity: identity, name: rule.name, path: path),
                                         reconnects: false) { [self] event in
                switch event {
                case .openFailed(let error): openFailed(path, error)
                case .opened: opened(path)
                default: break
                }
                registry(event)
                front?(event)
            }
            source.observerLogsOpenFailures = true
            do {
                try runner.start(source) { [self] in
                    _ = open.withLock { $0.remove(path) }
                }
                started.append(path)
            } catch {
                _ = open.withLock { $0.remove(path) }
            }
        }
        return started
    }

    /// Logs that `path` could not be opened: at error the first time, when the reason changes
    /// and every ``failureRepeat`` while it lasts; at debug otherwise.
    private func openFailed(_ path: String, _ error: any Error) {
        let why = "\(error)"
        let say = failing.withLock { f -> Bool in
            if let last = f[path], last.why == why, last.at.duration(to: .now) < Self.failureRepeat { return false }
            f[path] = (why, .now)
            return true
        }
        logger.log(level: say ? .error : .debug, "pedometer \(path): \(why)\(say ? " (retried at every scan; said again in \(Self.failureRepeat) if it lasts)" : "")")
    }

    /// Notes that `path` opened; after failures, says so once.
    private func opened(_ path: String) {
        if let last = failing.withLock({ $0.removeValue(forKey: path) }) {
            logger.notice("pedometer \(path) is open now (before, it could not be: \(last.why))")
        }
    }

    /// Every present tty matching a rule, with the rule (first match wins).
    func matches() -> [(String, GatewayConfig.Pedometer)] {
        var out: [(String, GatewayConfig.Pedometer)] = []
        var seen = Set<String>()
        var udevCache: [TTYDevice]?
        func udevDevices() -> [TTYDevice] {
            if let udevCache { return udevCache }
            let all = (try? Udev().ttyDevices()) ?? []
            udevCache = all
            return all
        }
        for rule in rules {
            if let p = rule.path {
                let real = (try? FileManager.default.destinationOfSymbolicLink(atPath: p)).map {
                    URL(fileURLWithPath: $0, relativeTo: URL(fileURLWithPath: p).deletingLastPathComponent()).standardized.path
                } ?? p
                if FileManager.default.fileExists(atPath: real), seen.insert(real).inserted { out.append((real, rule)) }
                continue
            }
            if rule.tag != nil {
                // Tags live in udevd's database: libudev.
                for d in udevDevices() where rule.matches(d) {
                    if let node = d.devnode, seen.insert(node).inserted { out.append((node, rule)) }
                }
                continue
            }
            for tty in sysfs.ttys() {
                guard let usb = tty.usb else { continue }
                if let v = rule.vendor, v != usb.vendorID { continue }
                if let p = rule.product, p != usb.productID { continue }
                if let s = rule.serial, s != usb.serial, s != usb.serial.map(PedometerIdentity.udevSafe) { continue }
                let dev = "\(devDir)/\(tty.name)"
                if seen.insert(dev).inserted { out.append((dev, rule)) }
            }
        }
        return out
    }

    /// The pedometer's identity (``PedometerIdentity``): the rule's `id`, else the USB serial
    /// number, else the physical USB port, else the device node.
    func identity(_ path: String, rule: GatewayConfig.Pedometer) -> PedometerIdentity {
        PedometerIdentity.resolve(path: path, given: rule.id, sysfs: sysfs)
    }

    /// The device a pedometer's samples carry: the rule's name (else the USB product id, else the
    /// tty's name), the USB vendor:product as model, `serial:<id>` as local identifier.
    package static func device(identity: PedometerIdentity, name: String?, path: String) -> Device {
        Device(name: name ?? URL(fileURLWithPath: path).lastPathComponent,
               model: identity.usb.map { "\($0.vendorID):\($0.productID)" },
               localIdentifier: "serial:\(identity.id)")
    }

    /// An observer recording a pedometer in the store's device registry once its port is open
    /// (never for a path that is no tty or cannot be opened), with the time it was last seen.
    package static func registry(store: HealthStore?, path: String, identity: PedometerIdentity,
                                logger: Logger) -> @Sendable (PedometerEvent) -> Void {
        { event in
            guard let store else { return }
            switch event {
            case .opened(let device, _):
                do { _ = try store.upsertDevice(DeviceRecord(device: device, kind: .serial, address: path, lastSeen: Date())) } catch {
                    logger.warning("could not record pedometer \(identity.id) in the device registry: \(error)")
                }
            default:
                break
            }
        }
    }
}
