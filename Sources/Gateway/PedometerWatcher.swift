import Foundation
import Ingest
import Logging
import Synchronization

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
    private let open = Mutex<Set<String>>([])

    /// How many matching pedometers are open right now.
    public var openCount: Int { open.withLock { $0.count } }
    private let sysfs: String
    private let devDir: String

    /// A watcher starting sources on `runner`.
    public init(rules: [GatewayConfig.Pedometer], runner: SourceRunner, logger: Logger,
                sysfs: String = "/sys/class/tty", devDir: String = "/dev") {
        self.rules = rules
        self.runner = runner
        self.logger = logger
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
            logger.notice("pedometer \(path) appeared (rule \(rule.name ?? rule.path ?? "usb")); opening it at \(rule.baud) baud, format \(rule.format)")
            let source = PedometerSource(path: path, id: rule.id ?? defaultID(path), options: rule.sourceOptions,
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
            let names = (try? FileManager.default.contentsOfDirectory(atPath: sysfs)) ?? []
            for name in names.sorted() {
                guard let usb = usbProperties(tty: name) else { continue }
                if let v = rule.vendor, v != usb.vendor { continue }
                if let p = rule.product, p != usb.product { continue }
                if let s = rule.serial, s != usb.serial { continue }
                let dev = "\(devDir)/\(name)"
                if seen.insert(dev).inserted { out.append((dev, rule)) }
            }
        }
        return out
    }

    /// The id a pedometer's counter state is kept under when its rule names none: the USB
    /// serial number (what `serial watch` uses by default, and stable when the adapter comes back
    /// as another ttyUSBn), else the path.
    func defaultID(_ path: String) -> String {
        let tty = URL(fileURLWithPath: path).lastPathComponent
        if let serial = usbProperties(tty: tty)?.serial, !serial.isEmpty { return serial }
        return path
    }

    /// idVendor/idProduct/serial of the USB device above a tty, from sysfs.
    func usbProperties(tty: String) -> (vendor: String, product: String, serial: String?)? {
        let devicePath = "\(sysfs)/\(tty)/device"
        guard (try? FileManager.default.destinationOfSymbolicLink(atPath: devicePath)) != nil else { return nil }
        // Resolve every link on the way (in real sysfs the class entry is itself a link).
        var dir = URL(fileURLWithPath: devicePath).resolvingSymlinksInPath()
        for _ in 0..<6 {
            let read = { (f: String) in
                (try? String(contentsOf: dir.appendingPathComponent(f), encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            if let v = read("idVendor"), let p = read("idProduct") {
                return (v.lowercased(), p.lowercased(), read("serial"))
            }
            dir.deleteLastPathComponent()
        }
        return nil
    }
}
