import ChildProcess
import Foundation
import HealthGateConfiguration
import HealthGateTesting
import HealthModel
import HealthStore
@testable import MQTTUplink
import Testing

/// `healthgate run` with `[uplink.mqtt]` against a real broker (Debian's mosquitto, started by
/// the test) and an independent client (`mosquitto_sub`): Home Assistant discovery, values equal
/// to the store, a broker restart, retained availability on a clean stop and by the last will.
@Suite(.serialized) struct MQTTTests {
    typealias Message = (topic: String, payload: String)

    /// `healthgate simulate` (two straps, one pedometer) and `healthgate run` on its
    /// configuration plus `[uplink.mqtt]` for `broker`, as gateway `pi1`; `runEnvironment` is
    /// merged into `run`'s environment (a test's time zone).
    static func simulateAndRun(_ broker: ScratchMosquitto, dir: String, db: String, straps: Int = 2,
                               runEnvironment: [String: String] = [:]) throws -> (sim: WatchedChild, run: WatchedChild) {
        let exe = try #require(HealthGateExecutable.url).path
        let sim = try WatchedChild([exe, "simulate", "--straps", String(straps), "--pedometers", "1", "--rate", "4", "--dir", dir + "/s",
                                    "--config-out", dir + "/sim.toml"], stderr: .file(dir + "/sim.log"))
        for _ in 0..<600 where !FileManager.default.fileExists(atPath: dir + "/sim.toml") { usleep(100_000) }
        usleep(300_000)   // the file is written whole before the simulator listens: give it a moment
        let config = try String(contentsOfFile: dir + "/sim.toml", encoding: .utf8)
            .replacingOccurrences(of: "status_interval = 60", with: "status_interval = 1")
            + "\n[uplink.mqtt]\nurl = \"\(broker.certificate == nil ? "mqtt" : "mqtts")://127.0.0.1:\(broker.port)\"\ngateway = \"pi1\"\n"
            + (broker.certificate.map { "ca_file = \"\($0)\"\n" } ?? "")
        try config.write(toFile: dir + "/run.toml", atomically: true, encoding: .utf8)
        let run = try WatchedChild([exe, "run", "--config", dir + "/run.toml", "--db", db], environment: runEnvironment,
                                   stderr: .file(dir + "/run.log"))
        return (sim, run)
    }

    static func heartRateTopics(_ m: [Message]) -> [String: [String]] {
        Dictionary(grouping: m.filter { $0.topic.hasSuffix("/heart_rate") }, by: \.topic).mapValues { $0.map(\.payload) }
    }

    static func slug(_ s: String) -> String {
        String(s.map { c -> Character in c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_") ? c : "_" })
    }

    /// The retained messages on `topics` now, read by a fresh `mosquitto_sub --retained-only`.
    static func retained(_ broker: ScratchMosquitto, _ topics: [String]) throws -> [Message] {
        let sub = try broker.subscribe(topics, retainedOnly: true)
        try sub.finish()
        return sub.messages
    }

    static func temporaryDirectory() throws -> String {
        let dir = NSTemporaryDirectory() + "hg-mqtt-test-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test("[uplink.mqtt] url: mqtt:// and mqtts:// with their default ports and credentials; anything else is a sentence naming the file")
    func settings() throws {
        let plain = try HomeAssistantPublisher.Settings(GatewayConfig.UplinkMQTT(url: "mqtt://ha:p%40ss@broker.lan"), file: "run.toml")
        #expect(plain.endpoint.port == 1883 && !plain.endpoint.tls && plain.endpoint.host == "broker.lan")
        #expect(plain.endpoint.username == "ha" && plain.endpoint.password == "p@ss")
        var table = GatewayConfig.UplinkMQTT(url: "mqtts://broker.lan")
        table.gateway = "ward-3"
        let tls = try HomeAssistantPublisher.Settings(table, file: "run.toml")
        #expect(tls.endpoint.port == 8883 && tls.endpoint.tls && tls.endpoint.username == nil && tls.gateway == "ward-3")
        #expect(tls.endpoint.clientID == "healthgate-ward-3")
        for bad in ["http://broker", "mqtt://", "mqtt://h/topic", "broker:1883"] {
            let e = #expect(throws: MQTTError.self, "\(bad)") { try HomeAssistantPublisher.Settings(GatewayConfig.UplinkMQTT(url: bad), file: "run.toml") }
            #expect(e?.description.hasPrefix("run.toml: [uplink.mqtt] url") == true, "\(bad)")
        }
        table.caFile = "/nonexistent/ca.pem"
        let e = #expect(throws: MQTTError.self) { try HomeAssistantPublisher.Settings(table, file: "run.toml") }
        #expect(e?.description.contains("ca_file /nonexistent/ca.pem cannot be read") == true)
    }

    @Test("discovery configs and every committed value reach an independent subscriber, equal to the store; a clean stop leaves a retained 'offline'")
    func valuesEqualTheStore() async throws {
        // Blocking waits (children, polls): off the cooperative pool, which the one-thread pass shrinks to one.
        try await offThread { try Self.valuesEqualTheStoreBody() }
    }

    static func valuesEqualTheStoreBody() throws {
        let broker = try ScratchMosquitto()
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let sub = try broker.subscribe(["healthgate/#", "homeassistant/#"])
        usleep(300_000)   // subscribed before the gateway publishes anything
        let (sim, run) = try Self.simulateAndRun(broker, dir: dir, db: dir + "/h.sqlite")
        defer { sim.kill(); run.kill() }
        let flowing = sub.wait(seconds: 90) { m in
            let hr = Self.heartRateTopics(m)
            return hr.count == 2 && hr.values.allSatisfy { $0.count >= 8 } && m.contains { $0.topic.hasSuffix("/steps_today") }
        }
        #expect(flowing, "\((try? String(contentsOfFile: dir + "/run.log", encoding: .utf8)) ?? "")")

        // A workout started in a shell beside the daemon: its state on the gateway's retained
        // workout topic (running, then idle once stopped), and its Home Assistant sensor. A
        // (re)connection publishes the retained state again: repeats of one state count once.
        func workoutStates(_ m: [Message]) -> [String] {
            m.filter { $0.topic == "healthgate/pi1/workout" }.compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.payload.utf8)) as? [String: Any])?["state"] as? String
            }.reduce(into: []) { states, s in if states.last != s { states.append(s) } }
        }
        #expect(sub.wait(seconds: 10) { workoutStates($0) == ["idle"] }, "before any workout the topic says idle")
        let started = try HealthGateExecutable.run(["workout", "start", "--activity", "cycling", "--db", dir + "/h.sqlite", "--json"])
        #expect(started.status == 0, "\(started.stderr)")
        #expect(sub.wait(seconds: 10) { workoutStates($0).last == "running" })
        let running = try #require(sub.messages.last { $0.topic == "healthgate/pi1/workout" })
        let workout = try #require(try JSONSerialization.jsonObject(with: Data(running.payload.utf8)) as? [String: Any])
        #expect(workout["activity"] as? String == "cycling" && (workout["uuid"] as? String)?.count == 36, "\(running.payload)")
        let stopped = try HealthGateExecutable.run(["workout", "stop", "--db", dir + "/h.sqlite"])
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(sub.wait(seconds: 10) { workoutStates($0) == ["idle", "running", "idle"] }, "\(workoutStates(sub.messages))")
        run.signal(SIGTERM)
        #expect(try run.wait(timeout: 60) == 0)
        #expect(sub.wait(seconds: 10) { $0.last { $0.topic == "healthgate/pi1/status" }?.payload == "offline" })
        try sub.finish()
        let messages = sub.messages

        // Every committed heart-rate sample was published once, with the store's value.
        let store = try HealthStore(path: dir + "/h.sqlite", mode: .readOnly)
        let stored = Dictionary(grouping: try store.samples(SampleQuery(type: .heartRate)), by: { $0.device?.localIdentifier ?? "?" })
        #expect(stored.count == 2)
        let published = Self.heartRateTopics(messages)
        for (local, samples) in stored {
            let topic = "healthgate/pi1/\(Self.slug(local))/heart_rate"
            let values = samples.map { String(Int64($0.quantity.value)) }
            #expect(published[topic]?.sorted() == values.sorted(), "\(topic): \(published[topic]?.count ?? 0) published, \(values.count) stored")
        }
        // Steps today: the last value equals the store's count for the pedometer today.
        let steps = try store.samples(SampleQuery(type: .stepCount, start: Calendar.current.startOfDay(for: Date())))
        let pedometer = try #require(steps.first?.device?.localIdentifier)
        let lastToday = messages.last { $0.topic == "healthgate/pi1/\(Self.slug(pedometer))/steps_today" }?.payload
        #expect(lastToday == String(Int64(steps.reduce(0) { $0 + $1.quantity.value })),
                "stored (steps, start, end): \(steps.map { ($0.quantity.value, $0.startDate.timeIntervalSince1970, $0.endDate.timeIntervalSince1970) }); published: \(messages.filter { $0.topic.hasSuffix("/steps_today") }.map(\.payload))")

        // Home Assistant discovery: a device per strap with its sensors pointing at the topics.
        let strap = try #require(stored.keys.first)
        let id = "healthgate_pi1_\(Self.slug(strap))"
        let config = try #require(messages.first { $0.topic == "homeassistant/sensor/\(id)_heart_rate/config" })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(config.payload.utf8)) as? [String: Any])
        #expect(object["state_topic"] as? String == "healthgate/pi1/\(Self.slug(strap))/heart_rate")
        #expect(object["unit_of_measurement"] as? String == "bpm")
        #expect((object["device"] as? [String: Any])?["identifiers"] as? [String] == [id])
        let availability = (object["availability"] as? [[String: Any]])?.compactMap { $0["topic"] as? String } ?? []
        #expect(availability.contains("healthgate/pi1/status"))
        #expect(messages.contains { $0.topic == "homeassistant/sensor/healthgate_pi1_\(Self.slug(pedometer))_steps_today/config" })
        #expect(messages.contains { $0.topic == "homeassistant/binary_sensor/\(id)_contact/config" })
        let workoutConfig = try #require(messages.last { $0.topic == "homeassistant/sensor/healthgate_pi1_workout/config" })
        let wc = try #require(try JSONSerialization.jsonObject(with: Data(workoutConfig.payload.utf8)) as? [String: Any])
        #expect(wc["state_topic"] as? String == "healthgate/pi1/workout" && wc["value_template"] as? String == "{{ value_json.state }}")

        // What a client that connects later sees: the gateway offline, the discovery configs.
        let later = try Self.retained(broker, ["healthgate/#", "homeassistant/#"])
        #expect(later.contains { $0.topic == "healthgate/pi1/status" && $0.payload == "offline" })
        #expect(later.contains { $0.topic == "homeassistant/sensor/\(id)_heart_rate/config" })
        #expect(later.contains { $0.topic == "healthgate/pi1/workout" && $0.payload == "{\"state\":\"idle\"}" })
        sim.signal(SIGTERM)
    }

    @Test("a broker restart: the gateway reconnects and publishes discovery, availability and values again; SIGKILL leaves the will's retained 'offline'")
    func brokerRestartAndWill() async throws {
        // Blocking waits (children, polls): off the cooperative pool, which the one-thread pass shrinks to one.
        try await offThread { try Self.brokerRestartAndWillBody() }
    }

    static func brokerRestartAndWillBody() throws {
        let broker = try ScratchMosquitto()
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (sim, run) = try Self.simulateAndRun(broker, dir: dir, db: dir + "/h.sqlite")
        defer { sim.kill(); run.kill() }
        let first = try broker.subscribe(["healthgate/#"])
        #expect(first.wait(seconds: 90) { Self.heartRateTopics($0).count == 2 })
        try first.finish()

        // The broker goes away (and, without persistence, forgets every retained message).
        try broker.stop()
        usleep(2_500_000)
        // The status line (every second here) says so while the broker is away.
        let log = (try? String(contentsOfFile: dir + "/run.log", encoding: .utf8)) ?? ""
        #expect(log.contains("mqtt broker away"), "\(log.suffix(2000))")
        try broker.start()
        var again: [Message] = []
        for _ in 0..<40 {
            again = try Self.retained(broker, ["healthgate/#", "homeassistant/#"])
            // The republish after a reconnection is a stream of messages: a snapshot taken while it
            // is under way holds only part of it, so wait for all of what is checked below.
            if again.contains(where: { $0.topic == "healthgate/pi1/status" && $0.payload == "online" }),
               again.filter({ $0.topic.hasSuffix("_heart_rate/config") }).count == 2,
               again.filter({ $0.topic.hasSuffix("/available") && $0.payload == "online" }).count == 3 { break }
        }
        #expect(again.contains { $0.topic == "healthgate/pi1/status" && $0.payload == "online" }, "\(again)")
        #expect(again.filter { $0.topic.hasSuffix("_heart_rate/config") }.count == 2, "\(again)")
        #expect(again.filter { $0.topic.hasSuffix("/available") && $0.payload == "online" }.count == 3, "\(again)")
        let after = try broker.subscribe(["healthgate/#"])
        #expect(after.wait(seconds: 30) { Self.heartRateTopics($0).count == 2 })
        try after.finish()

        // No clean stop: the broker publishes the will.
        run.kill()
        var last: [Message] = []
        for _ in 0..<20 {
            last = try Self.retained(broker, ["healthgate/pi1/status"])
            if last.first?.payload == "offline" { break }
        }
        #expect(last.first?.payload == "offline", "\(last)")
        sim.signal(SIGTERM)
    }

    @Test("mqtts:// with ca_file: the gateway verifies the broker's certificate and publishes over TLS")
    func overTLS() async throws {
        // Blocking waits (children, polls): off the cooperative pool, which the one-thread pass shrinks to one.
        try await offThread { try Self.overTLSBody() }
    }

    static func overTLSBody() throws {
        let broker = try ScratchMosquitto(tls: true)
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let sub = try broker.subscribe(["healthgate/#"])
        usleep(300_000)
        let (sim, run) = try Self.simulateAndRun(broker, dir: dir, db: dir + "/h.sqlite", straps: 1)
        defer { sim.kill(); run.kill() }
        let flowing = sub.wait(seconds: 90) { Self.heartRateTopics($0).values.first.map { $0.count >= 3 } ?? false }
        #expect(flowing, "\((try? String(contentsOfFile: dir + "/run.log", encoding: .utf8)) ?? "")")
        #expect(((try? String(contentsOfFile: dir + "/run.log", encoding: .utf8)) ?? "").contains("mqtt: connected to mqtts://127.0.0.1"))
        run.signal(SIGTERM)
        #expect(try run.wait(timeout: 60) == 0)
        try sub.finish()
        sim.signal(SIGTERM)
    }
}
