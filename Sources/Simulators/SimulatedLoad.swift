import Foundation
import GATT
import HeartRateProfile
import Synchronization
#if canImport(Glibc)
@preconcurrency import Glibc
import Locking
#endif

/// Simulated hardware for a real `healthgate run`: heart-rate straps served on Unix-domain
/// sockets (one ``SimulatedPeripheral`` each, speaking real ATT bytes, driven by a
/// ``SimulatedHeartRateSignal``) and serial pedometers on pseudo-terminals
/// (``SimulatedPedometer``, real line shapes), plus the TOML configuration that names them.
///
/// Used by `healthgate simulate` (two terminals: the simulators in one, the daemon in the
/// other), by `healthgate-bench`'s footprint run and by the daemon's tests, which also read the
/// per-strap notification counts and times to check what the daemon stored.
///
/// Thread rules: a `Sendable` class; every method may be called from any thread.
package final class SimulatedLoad: Sendable {
    /// One simulated strap: its name (the `[[strap]] name` of the configuration), the socket
    /// it is served on and the peripheral behind it.
    package struct Strap: Sendable {
        /// `Sim Strap N`.
        package let name: String
        /// The Unix-domain socket path.
        package let socketPath: String
        /// The ATT server.
        package let peripheral: SimulatedPeripheral
    }

    /// One simulated pedometer: its name, its pty and the link to it the configuration names.
    package struct Pedometer: Sendable {
        /// `Sim Pedometer N`.
        package let name: String
        /// The pty's far end, `/dev/pts/N`: the device node the daemon reads (and names the
        /// pedometer by, as it would a USB-serial adapter's node without a serial number).
        package var path: String { device.path }
        /// `DIRECTORY/pedometer-N`, a symbolic link to ``path``: what the configuration's
        /// `[[pedometer]] path` names, as a udev rule's `/dev/healthgate/pedometer-SERIAL` link
        /// would. It is removed when the load stops, before the pty goes: the kernel gives a
        /// freed pty's number to the next pty anyone opens, and a daemon left watching the bare
        /// `/dev/pts/N` would open that stranger's pty and read its lines.
        package let link: String
        /// The pty writer.
        package let device: SimulatedPedometer
    }

    /// The directory holding the sockets.
    package let directory: String
    /// The straps, in order.
    package let straps: [Strap]
    /// The pedometers, in order.
    package let pedometers: [Pedometer]
    /// Notifications per second per strap.
    package let rate: Double
    /// Time between pedometer readings.
    package let pedometerInterval: Duration

    private struct Sent {
        var count = 0
        /// Unix times of the most recent notifications, oldest first (bounded).
        var recent: [Double] = []
    }

    private static let recentLimit = 4_096
    private let listeners: Lock<[UnixSocketATTListener?]>
    private let sent: Lock<[Sent]>
    private let running = Atomic<Bool>(false)
    private let driverDone = DispatchSemaphore(value: 0)

    /// Creates `straps` straps listening on `directory/strap-N.sock` (the directory is created)
    /// and `pedometers` pedometers on fresh ptys. Nothing is sent until ``start()``.
    /// - Parameters:
    ///   - rate: notifications per second per strap (a real strap sends about 1).
    ///   - pedometerInterval: time between readings of each pedometer.
    /// - Throws: ``ATTBearerError`` or `POSIXError` when a socket or pty cannot be made.
    package init(directory: String, straps: Int, rate: Double = 1, pedometers: Int,
                pedometerInterval: Duration = .seconds(1)) throws {
        precondition(rate > 0, "rate must be positive")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
        self.rate = rate
        self.pedometerInterval = pedometerInterval
        var list: [Strap] = []
        var listeners: [UnixSocketATTListener?] = []
        var complete = false
        defer { if !complete { for l in listeners { l?.close() } } }
        for k in stride(from: 1, through: straps, by: 1) {
            var c = SimulatedStrapConfiguration()
            c.name = "Sim Strap \(k)"
            c.serialNumber = String(format: "SIM%04d", k)
            let p = SimulatedPeripheral.heartRateStrap(c)
            p.recordsTranscript = false   // runs for hours: keep memory flat
            let path = (directory as NSString).appendingPathComponent("strap-\(k).sock")
            listeners.append(try p.listen(onUnixSocket: path))
            list.append(Strap(name: "Sim Strap \(k)", socketPath: path, peripheral: p))
        }
        self.straps = list
        self.listeners = Lock(listeners)
        self.sent = Lock(Array(repeating: Sent(), count: straps))
        var peds: [Pedometer] = []
        for k in stride(from: 1, through: pedometers, by: 1) {
            let device = try SimulatedPedometer()
            let link = (directory as NSString).appendingPathComponent("pedometer-\(k)")
            try? FileManager.default.removeItem(atPath: link)   // a stale link of an earlier run
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: device.path)
            peds.append(Pedometer(name: "Sim Pedometer \(k)", link: link, device: device))
        }
        self.pedometers = peds
        complete = true
    }

    deinit { stop() }

    /// Starts the pedometers' writers and one driver thread that notifies every subscribed
    /// strap at ``rate`` (each strap its own seeded signal: RR intervals matching the bpm,
    /// Energy Expended every tenth notification).
    /// - Parameter onSent: called on the driver thread after each notification a subscribed
    ///   strap sent (the strap's index, what it sent, when): `simulate --sent-log`.
    package func start(onSent: (@Sendable (_ strap: Int, _ measurement: HeartRateMeasurement, _ at: Date) -> Void)? = nil) {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for p in pedometers { p.device.start(interval: pedometerInterval) }
        let thread = Thread { [self] in
            let period = 1 / rate
            var signals = straps.indices.map { SimulatedHeartRateSignal(seed: UInt64($0 + 1), baseBPM: 64 + Double($0 % 7) * 3) }
            var next = Date().timeIntervalSince1970
            while running.load(ordering: .acquiring) {
                for (k, s) in straps.enumerated() {
                    let m = signals[k].next(elapsed: period)
                    if s.peripheral.notifyHeartRate(m) {
                        let now = Date()
                        let t = now.timeIntervalSince1970
                        sent.withLock { all in
                            all[k].count += 1
                            all[k].recent.append(t)
                            if all[k].recent.count > Self.recentLimit { all[k].recent.removeFirst(all[k].recent.count / 2) }
                        }
                        onSent?(k, m, now)
                    }
                }
                next += period
                let wait = next - Date().timeIntervalSince1970
                if wait > 0 { usleep(UInt32(min(wait, 10) * 1_000_000)) } else { next = Date().timeIntervalSince1970 }
            }
            driverDone.signal()
        }
        thread.name = "sim-load"
        thread.start()
    }

    /// Stops sending, closes every strap link and socket (the files are removed), removes the
    /// pedometers' links and stops the pedometers. The ptys stay open until the load is
    /// released. Idempotent.
    package func stop() {
        for p in pedometers { try? FileManager.default.removeItem(atPath: p.link) }
        let wasRunning = running.exchange(false, ordering: .acquiringAndReleasing)
        // Links first: a driver blocked in send (a daemon that stopped reading) wakes with EPIPE.
        for l in listeners.withLock({ l in defer { l = l.map { _ in nil } }; return l }) { l?.close() }
        for s in straps { s.peripheral.disconnect() }
        if wasRunning { driverDone.wait() }
        for p in pedometers { p.device.stop() }
    }

    // MARK: Straps going away and coming back

    /// Strap `index` walks away: its socket file is removed and its link closed.
    package func takeDown(strap index: Int) {
        let l = listeners.withLock { l in defer { l[index] = nil }; return l[index] }
        l?.close()
        straps[index].peripheral.disconnect()
    }

    /// Strap `index` comes back: it listens on its socket path again.
    /// - Throws: ``ATTBearerError`` when the socket cannot be set up.
    package func bringBack(strap index: Int) throws {
        let l = try straps[index].peripheral.listen(onUnixSocket: straps[index].socketPath)
        let old = listeners.withLock { all in defer { all[index] = l }; return all[index] }
        old?.close()
    }

    // MARK: What was sent

    /// Notifications strap `index` has sent (only subscribed links count).
    package func sentCount(strap index: Int) -> Int { sent.withLock { $0[index].count } }

    /// Notifications sent by all straps.
    package var totalSent: Int { sent.withLock { $0.reduce(0) { $0 + $1.count } } }

    /// Notifications strap `index` had sent before `time` (exact while `time` lies within its
    /// last 2,048 notifications).
    package func sentCount(strap index: Int, before time: Date) -> Int {
        let t = time.timeIntervalSince1970
        return sent.withLock { all in
            let s = all[index]
            return s.count - s.recent.reversed().prefix { $0 >= t }.count
        }
    }

    /// Whether strap `index` has a client subscribed to Heart Rate Measurement right now.
    package func isSubscribed(strap index: Int) -> Bool {
        straps[index].peripheral.notificationsEnabled(BluetoothUUID(HeartRateUUIDs.heartRateMeasurement))
    }

    /// How many straps have a client subscribed to Heart Rate Measurement right now.
    package var subscribedStraps: Int { straps.indices.reduce(0) { $0 + (isSubscribed(strap: $1) ? 1 : 0) } }

    // MARK: Configuration for `healthgate run`

    /// `simulate --json`: the configuration written at `config`, the socket directory, the
    /// rate, every strap's socket, and every pedometer's link (`path`, as the configuration
    /// names it) and pty (`tty`).
    package func jsonObject(config: String) -> [String: Any] {
        ["config": config, "directory": directory, "rate": rate,
         "straps": straps.map { ["name": $0.name, "socket": $0.socketPath] },
         "pedometers": pedometers.map { ["name": $0.name, "path": $0.link, "tty": $0.path] }]
    }

    /// A `healthgate.toml` for `run` naming every strap by `socket` and every pedometer by
    /// `path` (its link), with the ingest settings of `samples/healthgate.toml` (batches of 1,000 or
    /// `flushIntervalMs`, spill on overflow).
    /// - Parameters:
    ///   - databasePath: written as `[store] path` when given (otherwise `--db` decides).
    package func configuration(databasePath: String? = nil, flushIntervalMs: Int = 250, statusInterval: Int = 60) -> String {
        func quoted(_ s: String) -> String {
            "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        var text = """
            # Written by `healthgate simulate`: \(straps.count) simulated strap(s) at \(rate) Hz on Unix sockets and
            # \(pedometers.count) simulated pedometer(s) on ptys. Run the daemon against them with
            #   healthgate run --config THIS_FILE --db /tmp/sim.sqlite
            # The paths exist only while `healthgate simulate` runs (docs/simulation.md).

            status_interval = \(statusInterval)

            """
        if let databasePath { text += "\n[store]\npath = \(quoted(databasePath))\n" }
        text += """

            [ingest]
            batch_size = 1000
            flush_interval_ms = \(flushIntervalMs)
            ring_capacity = 4096
            overflow = "spill"
            spill_limit = 100000
            retry_interval_ms = 500
            durability = "group"

            """
        for s in straps {
            text += "\n[[strap]]\nsocket = \(quoted(s.socketPath))\nname = \(quoted(s.name))\n"
        }
        for p in pedometers {
            text += "\n[[pedometer]]\npath = \(quoted(p.link))\nbaud = 115200\nname = \(quoted(p.name))\n"
        }
        return text
    }
}

extension SimulatedLoad {
    /// `simulate --sent-log`: one JSON line per heart-rate notification sent —
    /// `{"strap", "socket", "bpm", "rr" (1/1024 s ticks), "energy"?, "at"}` — what a daemon fed by
    /// this load should store, for checking a pipeline end to end (the live page's browser test).
    /// Each line is one `write(2)` to a file opened for appending: whole lines even when the
    /// process is stopped between two. A failed write (a full disk) loses that line, never the
    /// simulation.
    package final class SentLog: Sendable {
        private let fd: Int32
        private let straps: [(name: String, socket: String)]

        /// Opens (creates) `path` for appending.
        /// - Throws: `POSIXError` with the `open(2)` errno.
        package init(path: String, load: SimulatedLoad) throws {
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            self.fd = fd
            self.straps = load.straps.map { (name: $0.name, socket: $0.socketPath) }
        }

        deinit { close(fd) }

        /// Writes the line of `measurement`, sent by strap `index` at `at` (``SimulatedLoad/start(onSent:)``).
        @Sendable package func record(_ index: Int, _ measurement: HeartRateMeasurement, _ at: Date) {
            var object: [String: Any] = ["strap": straps[index].name, "socket": straps[index].socket,
                                         "bpm": Int(measurement.beatsPerMinute), "rr": measurement.rrIntervals.array.map(Int.init),
                                         "at": at.timeIntervalSince1970]
            if let e = measurement.energyExpendedKJ { object["energy"] = Int(e) }
            guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
            let line = Array(data) + [0x0A]
            _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }
    }
}
