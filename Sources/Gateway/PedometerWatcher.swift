import Foundation
import HealthStore
import Ingest
import Logging
import Synchronization
import Udev

/// Opens pedometers as they appear: every `interval` it looks for tty devices matching the
/// configured rules and starts a ``PedometerSource`` for each match not already open; when a
/// device goes away its source ends, and it is opened again when it comes back.
///
/// Matching reads sysfs (`/sys/class/tty/*/device` up to the USB device's `idVendor`,
/// `idProduct`, `serial`), which works with or without a udev daemon; a rule with a `path`
/// matches that path (following symlinks such as `/dev/serial/by-id/…`).
public final class PedometerWatcher: Sendable {
    private let rules: [GatewayConfig.Pedometer]
    private let runner: SourceRunner
    private let logger: Logger
    private let store: HealthStore?
    private let open = Mutex<Set<String>>([])

    /// How many matching pedometers are open right now.
    public var openCount: Int { open.withLock { $0.count } }
    private let sysfs: Sysfs
    private let devDir: String

    /// A watcher starting sources on `runner`.
    /// - Parameters:
    ///   - store: where counter state of earlier versions' ids is carried over to today's id
    ///     (``PedometerStateMigration``) before a pedometer is opened; nil skips that.
    ///   - sysfs: the device tree to read (tests point it at one of their own).
    public init(rules: [GatewayConfig.Pedometer], runner: SourceRunner, logger: Logger, store: HealthStore? = nil,
                sysfs: Sysfs = .system, devDir: String = "/dev") {
        self.rules = rules
        self.runner = runner
        self.logger = logger
        self.store = store
        self.sysfs = sysfs
        self.devDir = devDir
    }

    /// Scans now and then every `interval` on a thread of its own until the runner stops.
    public func start(interval: Duration = .seconds(2)) {
        guard !rules.isEmpty else { return }
        let thread = Thread { [self] in
            while !runner.stop.isRaised {
                scanOnce()
                runner.stop.sleep(interval)
            }
        }
        thread.name = "pedometer-watch"
        thread.start()
    }

    /// One scan: starts sources for new matches. Returns the paths started.
    @discardableResult
    public func scanOnce() -> [String] {
        var started: [String] = []
        for (path, rule) in matches() {
            let isNew = open.withLock { $0.insert(path).inserted }
            guard isNew else { continue }
            let identity = self.identity(path, rule: rule)
            logger.notice("pedometer \(path) appeared (rule \(rule.name ?? rule.path ?? "usb")); opening it as \(identity.id) (\(identity.basis.rawValue)) at \(rule.baud) baud, format \(rule.format)")
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
            let source = PedometerSource(path: path, id: identity.id, options: rule.sourceOptions,
                                         name: rule.name, reconnects: false)
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

    /// Every present tty matching a rule, with the rule (first match wins).
    func matches() -> [(String, GatewayConfig.Pedometer)] {
        var out: [(String, GatewayConfig.Pedometer)] = []
        var seen = Set<String>()
        for rule in rules {
            if let p = rule.path {
                let real = (try? FileManager.default.destinationOfSymbolicLink(atPath: p)).map {
                    URL(fileURLWithPath: $0, relativeTo: URL(fileURLWithPath: p).deletingLastPathComponent()).standardized.path
                } ?? p
                if FileManager.default.fileExists(atPath: real), seen.insert(real).inserted { out.append((real, rule)) }
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
}
