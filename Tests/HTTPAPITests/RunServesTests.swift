import Foundation
import HealthGateTesting
import Testing

/// `healthgate run` with an `[http]` table: simulated straps (`healthgate simulate`), the API
/// over TLS with a throwaway certificate made by openssl, and the refusal of a plain
/// non-loopback listen.
@Suite("healthgate run serving the HTTP API ([http]): TLS, device states, metrics, live samples", .serialized)
struct RunServesTests {
    /// A child `healthgate` whose stderr is collected.
    final class Child: @unchecked Sendable {
        let process = Process()
        private let lock = NSLock()
        private var err = ""
        init(_ args: [String]) throws {
            process.executableURL = HealthGateExecutable.url
            process.arguments = args
            let pipe = Pipe()
            process.standardError = pipe
            let out = Pipe()
            process.standardOutput = out
            process.standardInput = FileHandle.nullDevice
            try process.run()
            for h in [pipe.fileHandleForReading, out.fileHandleForReading] {
                readToEndOnThread(h) { [self] d in
                    lock.lock(); err += String(decoding: d, as: UTF8.self); lock.unlock()
                }
            }
        }
        var output: String { lock.lock(); defer { lock.unlock() }; return err }
        func waitFor(_ text: String, seconds: Double) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline, process.isRunning {
                if output.contains(text) { return true }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return output.contains(text)
        }
        /// SIGTERM (or `signal`), then a bounded wait; SIGKILL at the bound.
        func stop(_ signal: Int32 = SIGTERM, seconds: Double = 60) -> Int32 {
            if process.isRunning { kill(process.processIdentifier, signal) }
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            return process.terminationStatus
        }
        deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }
    }

    /// `healthgate simulate ARGS` writing its configuration into `dir`, then `healthgate run` on
    /// it with an `[http]` table (`http`: its keys beside `listen`); returns both children and
    /// the API's base URL once run serves it.
    static func simulateAndRun(_ simulate: [String], db: String, dir: String, http: String, scheme: String) async throws -> (Child, Child, String) {
        let sim = try Child(["simulate"] + simulate + ["--dir", dir + "/s", "--config-out", dir + "/sim.toml"])
        #expect(await offThread { sim.waitFor("\n", seconds: 120) }, "simulate printed nothing: \(sim.output)")
        let config = try String(contentsOfFile: dir + "/sim.toml", encoding: .utf8) + "\n[http]\nlisten = \"127.0.0.1:0\"\n" + http
        try config.write(toFile: dir + "/run.toml", atomically: true, encoding: .utf8)
        let run = try Child(["run", "--config", dir + "/run.toml", "--db", db])
        let serving = "serving the HTTP API on \(scheme)://"
        #expect(await offThread { run.waitFor(serving, seconds: 120) }, "\(run.output)")
        let line = try #require(run.output.components(separatedBy: "\n").first { $0.contains(serving) })
        let base = try #require(line.range(of: "\(scheme)://").map { String(line[$0.lowerBound...]).trimmingCharacters(in: .whitespaces) })
        return (sim, run, base)
    }

    /// The value of the unlabelled sample `name` in a Prometheus text scrape.
    static func value(_ scrape: String, _ name: String) -> Double? {
        scrape.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    static func curl(_ args: [String]) async throws -> String {
        let a = args
        return try await offThread {
            try HealthGateExecutable.run(["-s", "-S", "--max-time", "20"] + a, timeout: .seconds(40),
                                         launcher: URL(fileURLWithPath: "/usr/bin/curl")).stdout
        }
    }

    @Test("run answers over TLS: devices with their connection state, pipeline metrics, live heart rate and disconnect events; SIGTERM stops it with 0")
    func tls() async throws {
        let db = TempStore()
        let dir = db.dir.path
        let made = try await offThread {
            try HealthGateExecutable.run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                          "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem", "-days", "1",
                                          "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                                         timeout: .seconds(60), launcher: URL(fileURLWithPath: "/usr/bin/openssl"))
        }
        #expect(made.status == 0, "\(made.stderr)")
        let token = try await makeToken(db.path, ["--name", "coach", "--read", "all", "--admin"])
        let stepsOnly = try await makeToken(db.path, ["--name", "steps", "--read", "stepCount"])
        let (sim, run, base) = try await Self.simulateAndRun(["--straps", "2", "--rate", "4"], db: db.path, dir: dir,
            http: "certificate = \"\(dir)/cert.pem\"\nkey = \"\(dir)/key.pem\"\n", scheme: "https")
        let auth = ["--cacert", dir + "/cert.pem", "-H", "Authorization: Bearer \(token)"]

        // Both straps connected and notifying, as the daemon sees them. The simulator's pedometers
        // are listed too (with a pedometer connection object) once their first steps are stored.
        var devices: [[String: Any]] = []
        func strapStates() -> [[String: Any]] {
            devices.compactMap { $0["connection"] as? [String: Any] }.filter { $0["kind"] as? String == "strap" }
        }
        for _ in 0..<120 {
            devices = (json(try await Self.curl(auth + [base + "/v1/devices"])) as? [[String: Any]]) ?? []
            let states = strapStates()
            if states.count == 2, states.allSatisfy({ $0["connected"] as? Bool == true && $0["heartRate"] != nil }) { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        let states = strapStates()
        #expect(states.count == 2 && states.allSatisfy { $0["connected"] as? Bool == true && $0["heartRate"] != nil }, "\(devices)")
        // The simulator's pedometers: connected from their ports' opening (the watcher's events).
        let pedometers = devices.compactMap { $0["connection"] as? [String: Any] }.filter { $0["kind"] as? String == "pedometer" }
        #expect(!pedometers.isEmpty && pedometers.allSatisfy { $0["connected"] as? Bool == true }, "\(devices)")
        // A token that may not read heart rate sees the straps come and go, but none of their
        // heart-rate data: no bpm, no sensor contact, no last-sample time (HealthKit's rule).
        let limited = ["--cacert", dir + "/cert.pem", "-H", "Authorization: Bearer \(stepsOnly)"]
        let seen = (json(try await Self.curl(limited + [base + "/v1/devices"])) as? [[String: Any]]) ?? []
        let limitedStraps = seen.compactMap { $0["connection"] as? [String: Any] }.filter { $0["kind"] as? String == "strap" }
        #expect(limitedStraps.count == 2 && limitedStraps.allSatisfy {
            $0["connected"] as? Bool == true && $0["heartRate"] == nil && $0["contact"] == nil && $0["lastSample"] == nil
        }, "\(seen)")

        let metrics = try await Self.curl(auth + [base + "/metrics"])
        // The pipeline's counters are Prometheus counters (monotonic, `_total`), its depths gauges.
        for name in ["pushed", "committed", "spilled", "dropped", "rejected", "failed_writes", "batches"] {
            #expect(metrics.contains("# TYPE healthgate_ingest_\(name)_total counter"), "\(name): \(metrics.prefix(3000))")
        }
        #expect(Self.value(metrics, "healthgate_ingest_committed_total").map { $0 > 0 } == true, "\(metrics.prefix(3000))")
        #expect(metrics.contains("# TYPE healthgate_ingest_ring_depth gauge"))
        #expect(metrics.contains("healthgate_ingest_commit_latency_seconds_bucket"))
        // Per strap: connected 1 and the battery the simulated straps report (87 %).
        let strapBattery = metrics.split(separator: "\n").filter { $0.hasPrefix("healthgate_device_battery_percent{") && $0.contains("kind=\"strap\"") }
        #expect(strapBattery.count == 2 && strapBattery.allSatisfy { $0.hasSuffix(" 87.0") || $0.hasSuffix(" 87") }, "\(metrics.prefix(3000))")
        #expect(metrics.split(separator: "\n").filter { $0.hasPrefix("healthgate_device_connected{") && $0.contains("kind=\"strap\"") }
            .allSatisfy { $0.hasSuffix(" 1.0") || $0.hasSuffix(" 1") })
        // Straps over Unix sockets have no radio: no RSSI series (the real-stack `daemon`
        // scenario reads one from the kernel's controller).
        #expect(!metrics.contains("healthgate_device_rssi_dbm{"), "\(metrics.prefix(3000))")
        let laterMetrics = try await Self.curl(auth + [base + "/metrics"])
        #expect((Self.value(laterMetrics, "healthgate_ingest_committed_total") ?? 0) >= (Self.value(metrics, "healthgate_ingest_committed_total") ?? .infinity),
                "a counter never goes back")

        // The live stream carries the straps' heart rate as it is committed.
        let live = try await offThread {
            try HealthGateExecutable.run(["-s", "-N", "--max-time", "3"] + auth + [base + "/v1/live?type=heartRate"],
                                         timeout: .seconds(30), launcher: URL(fileURLWithPath: "/usr/bin/curl")).stdout
        }
        #expect(live.contains("event: sample") && live.contains("\"type\":\"heartRate\""), "\(live.prefix(2000))")
        // Plain HTTP to the TLS port is not served.
        let plain = try await Self.curl(["-o", "/dev/null", "-w", "%{http_code}", base.replacingOccurrences(of: "https://", with: "http://") + "/healthz"])
        #expect(plain != "200")

        // Device events: the simulator going away disconnects both straps, on the stream.
        // The server counts the 3-second client above until its next write fails: wait for it
        // to go, or the gauge below would count it for the new stream (a CI run stopped the
        // simulator before the new stream was subscribed, and saw no strap disconnect).
        var stale = true
        for _ in 0..<80 where stale {
            let scrape = try await Self.curl(auth + [base + "/metrics"])
            stale = (Self.value(scrape, "healthgate_http_live_clients") ?? 0) != 0
            if stale { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(!stale, "the finished /v1/live client is still counted in healthgate_http_live_clients")
        let liveArgs = ["-s", "-N", "--max-time", "35"] + auth + [base + "/v1/live"]
        async let events = offThread {
            try HealthGateExecutable.run(liveArgs, timeout: .seconds(60), launcher: URL(fileURLWithPath: "/usr/bin/curl")).stdout
        }
        // The simulator stops only once that stream is connected (the server's live_clients
        // gauge), not after a fixed pause: on a loaded machine curl connected after the
        // disconnects were published and saw none.
        var streaming = false
        for _ in 0..<80 where !streaming {
            let scrape = try await Self.curl(auth + [base + "/metrics"])
            streaming = (Self.value(scrape, "healthgate_http_live_clients") ?? 0) >= 1
            if !streaming { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(streaming, "the /v1/live client never showed up in healthgate_http_live_clients")
        #expect(await offThread { sim.stop() } == 0)
        let deviceEvents = try await events
        let disconnected = deviceEvents.components(separatedBy: "\n\n").filter { $0.contains("event: device") && $0.contains("\"event\":\"disconnected\"") }
        #expect(disconnected.filter { $0.contains("\"localIdentifier\":\"socket:") }.count >= 2, "\(deviceEvents.suffix(3000))")
        // …and its pedometers' ptys closing disconnects every one of them (the pedometer sources'
        // end). A pty the daemon opens again in the moment the simulator tears it down ends a
        // second time ("end of file" twice for one pedometer, seen in CI): counted by pedometer.
        let disconnectedPedometers = Set(disconnected.compactMap { event -> String? in
            guard let r = event.range(of: "\"localIdentifier\":\"serial:") else { return nil }
            return String(event[r.upperBound...].prefix { $0 != "\"" })
        })
        #expect(disconnectedPedometers.count == pedometers.count, "\(disconnectedPedometers) \(deviceEvents.suffix(3000))")
        // Disconnected straps: connected 0, and no battery series (a level read before the loss
        // is not a current one).
        let after = try await Self.curl(auth + [base + "/metrics"])
        let strapLines = after.split(separator: "\n").filter { $0.contains("kind=\"strap\"") }
        #expect(!strapLines.contains { $0.hasPrefix("healthgate_device_battery_percent{") }, "\(after.prefix(3000))")
        #expect(strapLines.filter { $0.hasPrefix("healthgate_device_connected{") }.allSatisfy { $0.hasSuffix(" 0.0") || $0.hasSuffix(" 0") },
                "\(after.prefix(3000))")
        // …and no heart rate or contact in /v1/devices: a strap out of reach has no current bpm
        // (its last sample's time stays).
        let gone = ((json(try await Self.curl(auth + [base + "/v1/devices"])) as? [[String: Any]]) ?? [])
            .compactMap { $0["connection"] as? [String: Any] }.filter { $0["kind"] as? String == "strap" }
        #expect(gone.count == 2 && gone.allSatisfy {
            $0["connected"] as? Bool == false && $0["heartRate"] == nil && $0["contact"] == nil && $0["lastSample"] != nil
        }, "\(gone)")

        #expect(await offThread { run.stop() } == 0, "\(run.output)")
    }

    @Test("under run, a /v1/live client that stops reading is cut off at its buffer while ingest goes on: nothing dropped, commits continue")
    func stoppedClientDoesNotStallIngest() async throws {
        let db = TempStore()
        let dir = db.dir.path
        let token = try await makeToken(db.path, ["--name", "coach", "--read", "all", "--admin"])
        // 10 straps at 100 Hz: ~1,000 events a second (~250 a commit), enough to fill a stopped
        // client's socket buffers (a few MB) and then its 1,024-event buffer within a minute,
        // while a reading client keeps up.
        let (sim, run, base) = try await Self.simulateAndRun(["--straps", "10", "--rate", "100", "--pedometers", "0"], db: db.path, dir: dir,
                                                             http: "live_client_buffer = 1024\n", scheme: "http")
        let auth = ["-H", "Authorization: Bearer \(token)"]
        func metric(_ name: String) async throws -> Double? { Self.value(try await Self.curl(auth + [base + "/metrics"]), name) }

        // A client that subscribes, then stops reading (SIGSTOP keeps its connection open).
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        client.arguments = ["-s", "-N", "-o", "/dev/null"] + auth + [base + "/v1/live"]
        client.standardInput = FileHandle.nullDevice
        try client.run()
        defer { if client.isRunning { kill(client.processIdentifier, SIGCONT); client.terminate(); client.waitUntilExit() } }
        // Subscribed (on a loaded machine even a reading curl may already have been cut off).
        for _ in 0..<120 {
            let (clients, cut) = (try await metric("healthgate_http_live_clients"), try await metric("healthgate_http_live_overflows_total") ?? 0)
            if clients == 1 || cut >= 1 { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        kill(client.processIdentifier, SIGSTOP)
        let committedBefore = try await metric("healthgate_ingest_committed_total") ?? 0

        // The server cuts the stopped client off; ingest never waits for it.
        var overflows = 0.0
        for _ in 0..<240 {
            overflows = try await metric("healthgate_http_live_overflows_total") ?? 0
            if overflows >= 1 { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(overflows >= 1, "the stopped client was never cut off: \(run.output.suffix(2000))")
        // Ingest goes on with the client stopped and cut off: seconds more of commits.
        try await Task.sleep(for: .seconds(3))
        let committedAfter = try await metric("healthgate_ingest_committed_total") ?? 0
        #expect(committedAfter > committedBefore + 500, "ingest went on: \(committedBefore) → \(committedAfter)")
        #expect(try await metric("healthgate_ingest_dropped_total") == 0)
        #expect(try await metric("healthgate_ingest_ring_depth").map { $0 < 5_000 } == true, "the rings do not back up behind the client")
        // Let it go: its stream was closed by the server, so curl ends by itself.
        kill(client.processIdentifier, SIGCONT)
        let ended = await offThread { () -> Bool in
            for _ in 0..<600 where client.isRunning { Thread.sleep(forTimeInterval: 0.1) }
            return !client.isRunning
        }
        #expect(ended, "the server did not close the stopped client's stream")
        #expect(await offThread { sim.stop() } == 0)
        #expect(await offThread { run.stop() } == 0, "\(run.output.suffix(2000))")
    }

    @Test("a non-loopback plain listen without allow_plain_http is refused with 78 and one sentence")
    func plainRefused() async throws {
        let db = TempStore()
        let file = db.dir.path + "/run.toml"
        try "[http]\nlisten = \"0.0.0.0:0\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["run", "--config", file, "--db", db.path])
        #expect(r.status == 78, "\(r.stderr)")
        #expect(r.stderr.contains("allow_plain_http = true") && r.stderr.contains("clear text"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        try "[http]\ncertificate = \"/nonexistent.pem\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let half = try await CLI.run(["run", "--config", file, "--db", db.path])
        #expect(half.status == 78 && half.stderr.contains("[http] certificate and [http] key go together"), "\(half.stderr)")
        // The bounds are serve's: one rule set, named as the file spells it.
        try "[http]\nmax_body_bytes = 100\n".write(toFile: file, atomically: true, encoding: .utf8)
        let small = try await CLI.run(["run", "--config", file, "--db", db.path])
        #expect(small.status == 78 && small.stderr.contains("run.toml: [http] max_body_bytes 100 is outside 1024"), "\(small.stderr)")
    }
}
