import Foundation
import Gateway
import HealthGateConfiguration
import HealthModel
import HealthStore
import Ingest
import Logging
import Synchronization
import Sysexits
import Locking

/// The MQTT publisher inside `healthgate run` (`[uplink.mqtt]`; docs/mqtt.md): every committed
/// heart-rate and step sample and each device's state under `<prefix>/<gateway>/<device>/…`,
/// with Home Assistant MQTT discovery (a device per strap and pedometer), a retained
/// availability topic and a last will; the gateway's workout in progress (`<prefix>/<gateway>/workout`,
/// retained JSON, read from the store's workout change feed whoever starts it). QoS 1. While the broker is away nothing is queued: live
/// values are dropped (they are in the store), and on reconnection the discovery configs,
/// availability and each device's latest state (retained) are published again.
package final class HomeAssistantPublisher: Sendable {
    /// What `[uplink.mqtt]` says, checked.
    package struct Settings: Sendable {
        var endpoint: MQTTConnection.Endpoint
        var gateway: String
        var topicPrefix: String
        var discoveryPrefix: String

        /// The settings of a configuration file's `[uplink.mqtt]` table (`file` names it in errors).
        /// - Throws: ``MQTTError`` (78) for a `url` that is not an MQTT URL.
        package init(_ table: GatewayConfig.UplinkMQTT, file: String) throws(MQTTError) {
            guard let c = URLComponents(string: table.url), let scheme = c.scheme, scheme == "mqtt" || scheme == "mqtts",
                  let host = c.host, !host.isEmpty, c.path.isEmpty || c.path == "/" else {
                throw MQTTError("\(file): [uplink.mqtt] url '\(table.url)' is not mqtt://[USER[:PASSWORD]@]HOST[:PORT] or mqtts://…: give the broker's address, e.g. mqtt://homeassistant.local:1883.")
            }
            let tls = scheme == "mqtts"
            if let ca = table.caFile, !FileManager.default.isReadableFile(atPath: ca) {
                throw MQTTError("\(file): [uplink.mqtt] ca_file \(ca) cannot be read: give a readable PEM file, or leave it out for the system's CA certificates.")
            }
            let gateway = table.gateway ?? Slug.make(GatewayConfig.defaultGatewayName())
            endpoint = .init(host: host, port: Int32(c.port ?? (tls ? 8883 : 1883)), tls: tls, caFile: table.caFile,
                             username: c.user?.removingPercentEncoding, password: c.password?.removingPercentEncoding,
                             clientID: "healthgate-\(gateway)")
            self.gateway = gateway
            topicPrefix = table.topicPrefix
            discoveryPrefix = table.discoveryPrefix
        }
    }

    /// What is known of one device, as last published.
    struct DeviceState: Sendable {
        var name: String
        var kind: Kind
        var manufacturer: String?
        var model: String?
        var connected: Bool?
        var battery: Int?
        var contact: Bool?
        var heartRate: Double?
        /// Steps since local midnight (nil until the store could be read for the day's first sample).
        var steps: StepsToday?
        var announced = false

        enum Kind: String, Sendable { case strap, pedometer }
    }

    private let settings: Settings
    private let connection: MQTTConnection
    private let devices = Lock<[String: DeviceState]>([:])
    private let queue = DispatchQueue(label: "healthgate.mqtt")
    private let storePath: String
    private let logger: Logger
    /// Live values dropped while the broker was away.
    private let dropped = Atomic<Int>(0)
    /// The workouts' change-feed position last looked at, and the workout topic's payload (queue only).
    private let workoutSeen = Lock<(position: Int64?, payload: String?)>((nil, nil))
    /// The store, opened read-only by the first workout poll (queue only).
    private let reader = Lock<HealthStore?>(nil)
    /// Why the last workout read failed, while it keeps failing: said once at warning (again
    /// when the reason changes), its recovery once at notice, not a line a second.
    private let workoutReadFailing = Lock<String?>(nil)
    /// Why the last read of a day's steps failed, while it keeps failing (queue only): said once.
    private let stepsReadFailing = Lock<String?>(nil)
    /// Set by ``stop()``: the workout poll stops rescheduling itself.
    private let stopped = Atomic<Bool>(false)
    /// How often the store's workout change feed is checked (a cheap read of its head, on the queue).
    package static let workoutPollInterval: DispatchTimeInterval = .seconds(1)

    /// Prepares the publisher for `daemon`; ``start()`` connects.
    package init(settings: Settings, storePath: String, daemon: GatewayDaemon, logger: Logger) throws(MQTTError) {
        self.settings = settings
        self.storePath = storePath
        self.logger = logger
        let status = "\(settings.topicPrefix)/\(settings.gateway)/status"
        connection = try MQTTConnection(settings.endpoint, will: (status, "offline"), logger: logger)
        connection.onConnect = { [weak self] in
            guard let self else { return }
            self.queue.async { self.republish() }
        }
        for s in daemon.straps {
            devices.withLock { $0[s.localIdentifier] = DeviceState(name: s.name, kind: .strap, connected: false) }
        }
        daemon.onStrapEvent { [weak self] event, local, alias in self?.strap(event, local: local, alias: alias) }
        daemon.onPedometerEvent { [weak self] event, device in self?.pedometer(event, device: device) }
        let slots = daemon.runtime.pipeline.slots
        let heartRate = try? slots.slot(for: .heartRate), steps = try? slots.slot(for: .stepCount)
        daemon.runtime.pipeline.addObserver { [weak self] batch in self?.committed(batch, heartRate: heartRate, steps: steps) }
    }

    /// Connects (in the background; a broker that is away is retried).
    package func start() {
        queue.async { [weak self] in self?.pollWorkouts() }
        connection.start()
        logger.notice("mqtt: publishing to \(settings.endpoint.host):\(settings.endpoint.port) under \(settings.topicPrefix)/\(settings.gateway)/…\(settings.discoveryPrefix.isEmpty ? "" : ", Home Assistant discovery under \(settings.discoveryPrefix)/")")
    }

    /// The publisher's state for `run`'s status line: "mqtt connected", or "mqtt broker away"
    /// with the live values not published since start.
    package func statusNote() -> String {
        let n = dropped.load(ordering: .relaxed)
        let note = connection.isConnected ? "mqtt connected" : "mqtt broker away"
        return n > 0 ? note + " (\(n) live values not published)" : note
    }

    /// Says "offline" on the availability topic, disconnects cleanly and stops.
    package func stop() {
        stopped.store(true, ordering: .relaxed)
        queue.sync {}
        connection.stop(finalMessage: (statusTopic, "offline"))
        let n = dropped.load(ordering: .relaxed)
        if n > 0 { logger.notice("mqtt: \(n) live values were not published while the broker was away (they are in the store)") }
    }

    // MARK: Topics

    private var base: String { "\(settings.topicPrefix)/\(settings.gateway)" }
    private var statusTopic: String { "\(base)/status" }
    private var workoutTopic: String { "\(base)/workout" }
    private func topic(_ local: String, _ leaf: String) -> String { "\(base)/\(Slug.make(local))/\(leaf)" }

    private func send(_ topic: String, _ payload: String, retain: Bool) {
        if !connection.publish(topic, payload, retain: retain) { dropped.add(1, ordering: .relaxed) }
    }

    // MARK: Events (their threads: hand over to the queue)

    private func strap(_ event: StrapSource.Event, local: String, alias: String?) {
        queue.async { [self] in
            var d = devices.withLock { $0[local] } ?? DeviceState(name: alias ?? local, kind: .strap)
            switch event {
            case .connected(let c):
                d.connected = true
                d.name = alias ?? c.device.name ?? d.name
                d.manufacturer = c.device.manufacturer ?? d.manufacturer
                d.model = c.device.model ?? d.model
                if let b = c.battery { d.battery = b }
            case .battery(let level, _):
                d.battery = level
            case .disconnected:
                d.connected = false
            case .subscribed, .signal, .hrvRefused:
                return
            }
            update(local, d)
        }
    }

    private func pedometer(_ event: PedometerEvent, device: Device) {
        guard let local = device.localIdentifier else { return }
        queue.async { [self] in
            var d = devices.withLock { $0[local] } ?? DeviceState(name: device.name ?? local, kind: .pedometer)
            switch event {
            case .opened: d.connected = true
            case .ended: d.connected = false
            case .openFailed, .session: return
            }
            update(local, d)
        }
    }

    /// One committed record, copied out of the batch (valid only during the observer call).
    private struct Reading: Sendable {
        var local: String
        var device: Device
        var isHeartRate: Bool
        var value: Double
        var end: Double
        var contact: Bool?
    }

    private func committed(_ batch: CommittedBatch, heartRate: UInt16?, steps: UInt16?) {
        var readings: [Reading] = []
        for r in batch.records where r.typeSlot == heartRate || r.typeSlot == steps {
            guard let device = batch.slots.device(r.deviceSlot), let local = device.localIdentifier else { continue }
            let contact: Bool? = r.flags.contains(.contactSupported) ? r.flags.contains(.contactDetected) : nil
            readings.append(Reading(local: local, device: device, isHeartRate: r.typeSlot == heartRate, value: r.value, end: r.end, contact: contact))
        }
        if readings.isEmpty { return }
        let copied = readings
        queue.async { [self] in
            for r in copied { reading(r) }
        }
    }

    private func reading(_ r: Reading) {
        var d = devices.withLock { $0[r.local] }
            ?? DeviceState(name: r.device.name ?? r.local, kind: r.isHeartRate ? .strap : .pedometer)
        if !d.announced { announce(r.local, &d) }
        if r.isHeartRate {
            d.heartRate = r.value
            send(topic(r.local, "heart_rate"), Self.number(r.value), retain: false)
            if let c = r.contact, c != d.contact {
                d.contact = c
                send(topic(r.local, "contact"), c ? "ON" : "OFF", retain: true)
            }
        } else {
            send(topic(r.local, "steps"), Self.number(r.value), retain: false)
            // A day's first sample starts from the store's count (StepsToday says how ties in
            // end time are counted); when the store cannot be read nothing is published, and the
            // next sample asks it again, rather than counting from a wrong zero.
            let day = Self.localDay(r.end)
            d.steps = StepsToday.after(d.steps, value: r.value, end: r.end, day: day) { before in
                stepsInStore(device: r.local, day: day, before: before)
            }
            if let today = d.steps { send(topic(r.local, "steps_today"), Self.number(today.total), retain: true) }
        }
        devices.withLock { $0[r.local] = d }
    }

    /// At local midnight every pedometer's count starts again from zero (queue only; called by
    /// the once-a-second workout poll and before a republish). Returns the counts that rolled
    /// over, for the caller to publish. Until 2026-11-29 nothing did: `steps_today` kept the
    /// day before's total until the pedometer's next step, and a reconnection sent it again.
    private func rollOverSteps(now: Date = Date()) -> [(local: String, today: StepsToday)] {
        let day = Self.localDay(now.timeIntervalSince1970)
        let midnight = Self.midnight(ofLocalDay: day).timeIntervalSince1970
        return devices.withLock { all in
            var rolled: [(local: String, today: StepsToday)] = []
            for (local, d) in all {
                guard let today = d.steps?.rolledOver(to: day, midnight: midnight) else { continue }
                all[local]?.steps = today
                rolled.append((local, today))
            }
            return rolled
        }
    }

    /// Steps stored for `device` from the local midnight of `day` in samples ending before
    /// `before`; nil when the store could not be read (said at warning once while it lasts, its
    /// recovery at notice).
    private func stepsInStore(device: String, day: Int, before: Double) -> Double? {
        do {
            let store = try HealthStore(path: storePath, mode: .readOnly)
            let midnight = Self.midnight(ofLocalDay: day)
            let samples = try store.samples(SampleQuery(type: .stepCount, start: midnight, end: Date(timeIntervalSince1970: before + 0.001),
                                                        device: device))
            if stepsReadFailing.withLock({ f in defer { f = nil }; return f != nil }) {
                logger.notice("mqtt: today's steps of \(device) can be read from the store again")
            }
            return samples.filter { $0.endDate.timeIntervalSince1970 < before }.reduce(0) { $0 + $1.quantity.value }
        } catch {
            let why = "\(error)"
            if stepsReadFailing.withLock({ f in defer { f = why }; return f != why }) {
                logger.warning("mqtt: could not read today's steps of \(device) from the store (\(why)); steps_today is published once the next reading can read it")
            }
            return nil
        }
    }

    /// Stores the device's new state and publishes what changed of its retained topics.
    private func update(_ local: String, _ new: DeviceState) {
        var d = new
        let old = devices.withLock { $0[local] }
        if !d.announced { announce(local, &d) }
        if let c = d.connected, c != old?.connected || !(old?.announced ?? false) {
            send(topic(local, "available"), c ? "online" : "offline", retain: true)
        }
        if let b = d.battery, b != old?.battery { send(topic(local, "battery"), String(b), retain: true) }
        devices.withLock { $0[local] = d }
    }

    // MARK: The workout in progress (queue)

    /// Publishes the workout in progress when the workouts' change feed moved: `{"state":
    /// "running"|"paused", "uuid", "activity", "start", "devices", "source"}` for the latest
    /// started one in progress, `{"state": "idle"}` when none is (retained, so a dashboard that
    /// connects later sees it).
    private func pollWorkouts() {
        guard !stopped.load(ordering: .relaxed) else { return }
        defer { queue.asyncAfter(deadline: .now() + Self.workoutPollInterval) { [weak self] in self?.pollWorkouts() } }
        for (local, today) in rollOverSteps() { send(topic(local, "steps_today"), Self.number(today.total), retain: true) }
        do {
            guard FileManager.default.fileExists(atPath: storePath) else { return }
            let store = try reader.withLock { r in
                if let r { return r }
                r = try HealthStore(path: storePath, mode: .readOnly)
                return r!
            }
            let position = try store.workoutPosition()
            if let was = workoutReadFailing.withLock({ f in defer { f = nil }; return f }) {
                logger.notice("mqtt: the workouts can be read from the store again (it failed with: \(was))")
            }
            guard position != workoutSeen.withLock({ $0.position }) else { return }
            var o: [String: Any] = ["state": "idle"]
            if let w = try store.workoutsInProgress().max(by: { $0.start < $1.start }) {
                o = ["state": w.state.rawValue, "uuid": w.uuid.uuidString.lowercased(), "activity": w.activity.rawValue,
                     "start": ISO8601.string(w.start), "devices": w.devices, "source": w.source.name]
            }
            let data = try JSONSerialization.data(withJSONObject: o, options: [.sortedKeys])
            let payload = String(decoding: data, as: UTF8.self)
            let changed = workoutSeen.withLock { seen -> Bool in
                defer { seen = (position, payload) }
                return seen.payload != payload
            }
            if changed && connection.isConnected {
                announceWorkout()
                send(workoutTopic, payload, retain: true)
            }
        } catch {
            let why = "\(error)"
            if workoutReadFailing.withLock({ f in defer { f = why }; return f != why }) {
                logger.warning("mqtt: could not read the workouts from the store (\(why)); trying again every second, said once while it lasts")
            }
        }
    }

    /// The gateway's own Home Assistant device with its workout sensor (state and attributes
    /// from the workout topic).
    private func announceWorkout() {
        guard !settings.discoveryPrefix.isEmpty else { return }
        let id = "healthgate_\(Slug.make(settings.gateway))"
        let o: [String: Any] = [
            "name": "Workout", "unique_id": "\(id)_workout", "state_topic": workoutTopic, "value_template": "{{ value_json.state }}",
            "json_attributes_topic": workoutTopic, "availability": [["topic": statusTopic]], "icon": "mdi:run", "qos": 1,
            "device": ["identifiers": [id], "name": "HealthGate \(settings.gateway)", "model": "Gateway"] as [String: Any],
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: o, options: [.sortedKeys]) else { return }
        send("\(settings.discoveryPrefix)/sensor/\(id)_workout/config", String(decoding: data, as: UTF8.self), retain: true)
    }

    /// After every (re)connection: the gateway online, every device's discovery and latest state.
    private func republish() {
        send(statusTopic, "online", retain: true)
        _ = rollOverSteps()   // published below with the rest
        if let payload = workoutSeen.withLock({ $0.payload }) {
            announceWorkout()
            send(workoutTopic, payload, retain: true)
        }
        let all = devices.withLock { $0 }
        for (local, var d) in all {
            announce(local, &d)
            if let c = d.connected { send(topic(local, "available"), c ? "online" : "offline", retain: true) }
            if let b = d.battery { send(topic(local, "battery"), String(b), retain: true) }
            if let c = d.contact { send(topic(local, "contact"), c ? "ON" : "OFF", retain: true) }
            if let s = d.steps { send(topic(local, "steps_today"), Self.number(s.total), retain: true) }
            devices.withLock { $0[local]?.announced = d.announced }
        }
    }

    // MARK: Home Assistant discovery

    /// Publishes the device's discovery configs (retained); marks it announced when they left.
    private func announce(_ local: String, _ d: inout DeviceState) {
        guard connection.isConnected else { return }
        d.announced = true
        guard !settings.discoveryPrefix.isEmpty else { return }
        let id = "healthgate_\(Slug.make(settings.gateway))_\(Slug.make(local))"
        var device: [String: Any] = ["identifiers": [id], "name": d.name]
        if let m = d.manufacturer { device["manufacturer"] = m }
        device["model"] = d.model ?? (d.kind == .strap ? "Heart-rate strap" : "Pedometer")
        let availability: [[String: Any]] = [["topic": statusTopic], ["topic": topic(local, "available")]]
        func config(_ component: String, _ leaf: String, _ fields: [String: Any]) {
            var o: [String: Any] = ["name": fields["name"] ?? leaf, "unique_id": "\(id)_\(leaf)", "state_topic": topic(local, leaf),
                                    "availability": availability, "availability_mode": "all", "device": device, "qos": 1]
            o.merge(fields) { _, new in new }
            guard let data = try? JSONSerialization.data(withJSONObject: o, options: [.sortedKeys]) else { return }
            send("\(settings.discoveryPrefix)/\(component)/\(id)_\(leaf)/config", String(decoding: data, as: UTF8.self), retain: true)
        }
        switch d.kind {
        case .strap:
            config("sensor", "heart_rate", ["name": "Heart rate", "unit_of_measurement": "bpm", "state_class": "measurement", "icon": "mdi:heart-pulse"])
            config("sensor", "battery", ["name": "Battery", "unit_of_measurement": "%", "device_class": "battery", "state_class": "measurement",
                                         "entity_category": "diagnostic"])
            config("binary_sensor", "contact", ["name": "Sensor contact", "payload_on": "ON", "payload_off": "OFF"])
        case .pedometer:
            config("sensor", "steps_today", ["name": "Steps today", "unit_of_measurement": "steps", "state_class": "total_increasing", "icon": "mdi:walk"])
        }
    }

    // MARK: Helpers

    static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }

    static func localDay(_ t: Double) -> Int {
        let offset = Double(TimeZone.current.secondsFromGMT(for: Date(timeIntervalSince1970: t)))
        return Int(((t + offset) / 86_400).rounded(.down))
    }

    static func midnight(ofLocalDay day: Int) -> Date {
        Calendar.current.startOfDay(for: Date(timeIntervalSince1970: Double(day) * 86_400 + 43_200 - Double(TimeZone.current.secondsFromGMT())))
    }
}

extension MQTTError: SysexitConvertible {
    package var sysexit: Sysexit { .config }
}

/// A topic level (or an id) from a name: letters, digits, `_` and `-`; anything else becomes `_`.
enum Slug {
    static func make(_ s: String) -> String {
        String(s.map { c -> Character in c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_") ? c : "_" })
    }
}
