import AccessTokens
import Foundation
import HealthGateTesting
import HealthModel
@testable import HealthStore
@testable import HTTPAPI
import Logging
import Synchronization
import Testing

/// `GET /v1/live` over a real socket: `healthgate serve` as a child, `curl -N` as the client,
/// samples committed by this process into the store file (rows, growing quantity series,
/// deletes), as another writer would.
@Suite("GET /v1/live: Server-Sent Events, resume, scopes, slow clients, shutdown", .serialized)
struct LiveTests {
    static let strap = Source(name: "HealthGate BLE", identifier: "org.healthgate.ble")
    static let device = Device(name: "Strap A", manufacturer: "Acme", localIdentifier: "AA:01")

    /// Appends heart-rate quantities at `seconds` to the strap's series, `perCommit` per
    /// transaction (so the feed reports the open chunk again at each growth).
    static func grow(_ store: HealthStore, _ writer: SeriesWriter, _ seconds: Range<Int>, perCommit: Int = 2) throws {
        var i = seconds.lowerBound
        while i < seconds.upperBound {
            let end = min(i + perCommit, seconds.upperBound)
            try store.write { w in
                let key = SeriesWriter.Key(typeID: try w.typeID(.heartRate), sourceID: try w.sourceID(strap), deviceID: try w.deviceID(device))
                for t in i..<end {
                    try [UInt16]().withUnsafeBufferPointer { rr in
                        try writer.append(w, key: key, style: .discreteTemporallyWeighted, sensorLocation: .chest,
                                          start: at(Double(t)).timeIntervalSince1970, end: at(Double(t)).timeIntervalSince1970,
                                          value: Double(60 + t % 100), contact: .detected, flags: [], rr: rr)
                    }
                }
                try writer.flush(w)
            }
            i = end
        }
    }

    /// The keys a client must see for `samples`: `uuid` of a row, `uuid#index` of a series quantity.
    static func keys(_ samples: [QuantitySample]) -> [String] {
        samples.map { s in s.uuid.uuidString.lowercased() + (s.seriesIndex.map { "#\($0)" } ?? "") }
    }

    @Test("a dropped client resumes with Last-Event-ID: every sample and deletion once, none missing, series quantities once")
    func resumeWithoutGapsOrDuplicates() async throws {
        let db = TempStore()
        let store = try db.open()
        let server = try await ServeProcess.start(db: db.path)
        let token = try await makeToken(db.path, ["--name", "all", "--read", "all", "--write", "all"])
        let writer = SeriesWriter()

        let first = try LiveClient(server: server, token: token)
        try await first.waitSubscribed()
        try Self.grow(store, writer, 0..<10)
        let rows = try (0..<5).map { try steps(Double(100 + $0), at: Double(60 * $0)) }
        _ = try store.save(rows)
        var expected = Self.keys(try store.samples(SampleQuery(type: .heartRate))) + Self.keys(rows)
        try await first.waitFor(keys: Set(expected), deletions: [])
        _ = try store.delete(uuids: [rows[0].uuid])
        let deleted = rows[0].uuid.uuidString.lowercased()
        try await first.waitFor(keys: Set(expected), deletions: [deleted])
        let lastID = try #require(first.lastEventID)
        await offThread { first.drop() }

        // While it is away: the series grows on, more rows arrive.
        try Self.grow(store, writer, 10..<20, perCommit: 3)
        let more = try (5..<10).map { try steps(Double(100 + $0), at: Double(60 * $0)) }
        _ = try store.save(more)
        let second = try LiveClient(server: server, token: token, lastEventID: lastID)
        try await second.waitSubscribed()
        try Self.grow(store, writer, 20..<25)
        expected = Self.keys(try store.samples(SampleQuery(type: .heartRate))) + Self.keys(rows) + Self.keys(more)
        try await second.waitFor(keys: Set(expected).subtracting(first.sampleKeys), deletions: [])
        await offThread { second.drop() }

        let seen = first.sampleKeys + second.sampleKeys
        #expect(seen.count == Set(seen).count, "duplicates: \(Dictionary(grouping: seen, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted())")
        #expect(Set(seen) == Set(expected))
        #expect(first.deletions + second.deletions == [deleted])
        #expect(await offThread { server.stop() } == 0, "\(server.stderr)")
    }

    @Test("after a server restart (an id of another run) or from a change-feed anchor, nothing is missed")
    func resumeAcrossRestartAndFromAnchor() async throws {
        let db = TempStore()
        let store = try db.open()
        let firstServer = try await ServeProcess.start(db: db.path)
        let token = try await makeToken(db.path, ["--name", "all", "--read", "all"])
        let before = try LiveClient(server: firstServer, token: token)
        try await before.waitSubscribed()
        let rows = try (0..<3).map { try steps(Double(10 + $0), at: Double(60 * $0)) }
        _ = try store.save(rows)
        try await before.waitFor(keys: Set(Self.keys(rows)), deletions: [])
        let lastID = try #require(before.lastEventID)
        await offThread { before.drop() }
        #expect(await offThread { firstServer.stop() } == 0)

        let whileDown = try (3..<6).map { try steps(Double(10 + $0), at: Double(60 * $0)) }
        _ = try store.save(whileDown)
        let anchor = try store.currentAnchor().description
        let server = try await ServeProcess.start(db: db.path)
        let after = try LiveClient(server: server, token: token, lastEventID: lastID)
        try await after.waitSubscribed()
        let later = try (6..<8).map { try steps(Double(10 + $0), at: Double(60 * $0)) }
        _ = try store.save(later)
        try await after.waitFor(keys: Set(Self.keys(whileDown + later)), deletions: [])
        await offThread { after.drop() }
        // Rows are never repeated: the set it left in was complete.
        #expect(Set(after.sampleKeys) == Set(Self.keys(whileDown + later)))
        #expect(after.sampleKeys.count == whileDown.count + later.count)

        // The `anchor` parameter (from GET /v1/changes) starts there.
        let fromAnchor = try LiveClient(server: server, token: token, path: "/v1/live?anchor=\(anchor)")
        try await fromAnchor.waitSubscribed()
        try await fromAnchor.waitFor(keys: Set(Self.keys(later)), deletions: [])
        await offThread { fromAnchor.drop() }
        #expect(fromAnchor.sampleKeys == Self.keys(later))

        // A malformed id or anchor is a 400; an anchor of another store a 409.
        let bad = try await server.request("GET", "/v1/live", token: token, headers: ["Last-Event-ID: nonsense"])
        #expect(bad.status == 400 && bad.error.contains("Last-Event-ID"), "\(bad.body)")
        let other = try await server.get("/v1/live?anchor=v1:0123456789abcdef:1:0", token: token)
        #expect(other.status == 409 && other.error.contains("resynchronise"), "\(other.body)")
        #expect(await offThread { server.stop() } == 0, "\(server.stderr)")
    }

    @Test("a sensor-contact event reaches only tokens that may read heart rate; a strap's coming and going reaches every token")
    func contactEventsNeedHeartRateScope() async throws {
        let db = TempStore()
        _ = try db.open()
        let feed = LiveFeed(path: db.path, registry: .standard, logger: Logger(label: "test"))
        try feed.start()
        let heart = try await feed.subscribe(lastEventID: nil, anchor: nil, types: nil, mayRead: { $0 == "heartRate" })
        let steps = try await feed.subscribe(lastEventID: nil, anchor: nil, types: nil, mayRead: { $0 == "stepCount" })
        for event in ["connected", "contact", "disconnected"] {
            feed.publish(device: ["event": event, "localIdentifier": "socket:/s/strap-1", "kind": "strap"])
        }
        feed.close()   // ends both streams after what was published
        func events(_ sub: LiveFeed.Subscription) async -> [String] {
            var seen: [String] = []
            for await text in sub.live {
                for name in ["connected", "contact", "disconnected"] where text.contains("\"event\":\"\(name)\"") { seen.append(name) }
            }
            return seen
        }
        #expect(await events(heart) == ["connected", "contact", "disconnected"])
        #expect(await events(steps) == ["connected", "disconnected"])
    }

    @Test("workouts started, paused, resumed, ended and deleted reach a token with the workout scope as they happen; others and type= without workout never see them",
          .timeLimit(.minutes(1)))
    func workoutEvents() async throws {
        let db = TempStore()
        let store = try db.open()
        let feed = LiveFeed(path: db.path, registry: .standard, pollInterval: .seconds(30), logger: Logger(label: "test"))
        try feed.start()
        let coach = try await feed.subscribe(lastEventID: nil, anchor: nil, types: nil, mayRead: { $0 == "workout" || $0 == "heartRate" })
        let noScope = try await feed.subscribe(lastEventID: nil, anchor: nil, types: nil, mayRead: { $0 == "heartRate" })
        let heartOnly = try await feed.subscribe(lastEventID: nil, anchor: nil, types: [.heartRate], workouts: false, mayRead: { _ in true })
        let workoutOnly = try await feed.subscribe(lastEventID: nil, anchor: nil, types: [], workouts: true, mayRead: { _ in true })
        var events = coach.live.makeAsyncIterator()
        /// The next workout or deletion event's name and data.
        func next() async throws -> (String, [String: Any])? {
            while let text = await events.next() {
                guard let name = text.split(separator: "\n").first(where: { $0.hasPrefix("event: ") })?.dropFirst(7),
                      name == "workout" || name == "deleted",
                      let line = text.split(separator: "\n").first(where: { $0.hasPrefix("data: ") }) else { continue }
                return (String(name), try #require(try JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any]))
            }
            return nil
        }
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        let w = Workout(activity: .running, start: t0, devices: ["Strap A"], source: Source(name: "HealthGate", identifier: "org.healthgate"))
        try store.saveWorkout(w)
        feed.wake()   // the poll is 30 s: each step is seen because of the wake, as run's commit tap wakes it
        var e = try #require(try await next())
        #expect(e.0 == "workout" && e.1["uuid"] as? String == w.uuid.uuidString.lowercased() && e.1["state"] as? String == "running")
        #expect(e.1["activity"] as? String == "running" && e.1["start"] as? String == ISO8601.string(t0) && e.1["end"] is NSNull)
        try store.updateWorkout(uuid: w.uuid, adding: WorkoutEvent(.pause, at: t0.addingTimeInterval(60)))
        feed.wake()
        e = try #require(try await next())
        #expect(e.1["state"] as? String == "paused" && (e.1["events"] as? [[String: Any]])?.count == 1)
        try store.updateWorkout(uuid: w.uuid, adding: WorkoutEvent(.resume, at: t0.addingTimeInterval(90)))
        feed.wake()
        e = try #require(try await next())
        #expect(e.1["state"] as? String == "running")
        let end = t0.addingTimeInterval(600.25)
        try store.updateWorkout(uuid: w.uuid, end: end)
        feed.wake()
        e = try #require(try await next())
        #expect(e.1["state"] as? String == "ended" && e.1["end"] as? String == ISO8601.string(end))
        _ = try store.deleteWorkout(uuid: w.uuid)
        feed.wake()
        e = try #require(try await next())
        #expect(e.0 == "deleted" && e.1["uuid"] as? String == w.uuid.uuidString.lowercased() && e.1["type"] as? String == "workout")
        feed.close()
        func texts(_ sub: LiveFeed.Subscription) async -> String {
            var all = ""
            for await text in sub.live { all += text }
            return all
        }
        for sub in [noScope, heartOnly] {
            let all = await texts(sub)
            #expect(!all.contains("workout"), "\(all)")
        }
        let only = await texts(workoutOnly)
        #expect(only.components(separatedBy: "event: workout").count - 1 == 4 && only.contains("\"type\":\"workout\""))
    }

    @Test("GET /v1/live?type=workout over HTTP: a token with the workout scope gets the workout events and no samples; one without it gets none")
    func workoutTypeOverHTTP() async throws {
        let db = TempStore()
        let store = try db.open()
        let server = try await ServeProcess.start(db: db.path)
        let coach = try await makeToken(db.path, ["--name", "coach", "--read", "workout,heartRate"])
        let heartOnly = try await makeToken(db.path, ["--name", "hr", "--read", "heartRate"])
        let workouts = try LiveClient(server: server, token: coach, path: "/v1/live?type=workout")
        let denied = try LiveClient(server: server, token: heartOnly, path: "/v1/live?type=workout,heartRate")
        try await workouts.waitSubscribed()
        try await denied.waitSubscribed()
        let w = Workout(activity: .cycling, start: Date(timeIntervalSince1970: 1_800_000_000), source: Source(name: "HealthGate", identifier: "org.healthgate"))
        /// Waits until the workout stream has seen `n` workout events.
        func seen(_ n: Int) async -> Bool {
            await offThread { () -> Bool in
                let end = Date().addingTimeInterval(30)
                while Date() < end, workouts.workoutStates.count < n { Thread.sleep(forTimeInterval: 0.1) }
                return workouts.workoutStates.count >= n
            }
        }
        // One step at a time: a poll sends each changed workout's state as it is then (a start
        // and an end read together are one `ended` event, as the change feed coalesces).
        try store.saveWorkout(w)
        #expect(await seen(1), "\(workouts.text)")
        let hr = try heartRate(71, at: 5)
        _ = try store.save([hr])
        try store.updateWorkout(uuid: w.uuid, end: w.start.addingTimeInterval(1_800))
        // The heart-rate-only token's stream gets the sample (it asked for heart rate too) and
        // nothing of the workout.
        try await denied.waitFor(keys: [hr.uuid.uuidString.lowercased()], deletions: [])
        #expect(await seen(2), "\(workouts.text)")
        await offThread { workouts.drop(); denied.drop() }
        #expect(workouts.workoutStates == ["running", "ended"], "\(workouts.text)")
        #expect(workouts.sampleKeys.isEmpty, "\(workouts.text)")
        #expect(denied.workoutStates.isEmpty && !denied.text.contains("workout"), "\(denied.text)")
        #expect(await offThread { server.stop() } == 0)
    }

    @Test("a token sees only the types it may read; without a token it is 401")
    func scopes() async throws {
        let db = TempStore()
        let store = try db.open()
        let server = try await ServeProcess.start(db: db.path)
        let stepsOnly = try await makeToken(db.path, ["--name", "coach", "--read", "stepCount"])
        let denied = try await server.get("/v1/live", token: nil)
        #expect(denied.status == 401)
        let client = try LiveClient(server: server, token: stepsOnly)
        try await client.waitSubscribed()
        let hr = try (0..<5).map { try heartRate(Double(70 + $0), at: Double($0)) }
        let st = try (0..<2).map { try steps(Double(50 + $0), at: Double(60 * $0)) }
        _ = try store.save(hr + st)
        _ = try store.delete(uuids: [hr[0].uuid])
        let another = try steps(7, at: 600)
        _ = try store.save([another])   // after the heart-rate commits: all of them were read before it arrives
        try await client.waitFor(keys: Set(Self.keys(st + [another])), deletions: [])
        await offThread { client.drop() }
        #expect(client.typesSeen == ["stepCount"], "\(client.text)")
        #expect(client.deletions.isEmpty)
        #expect(await offThread { server.stop() } == 0)
    }

    @Test("a client that stops reading is cut off at its buffer; ingest and the other clients go on; it resumes without a gap")
    func slowClient() async throws {
        let db = TempStore()
        let store = try db.open()
        let server = try await ServeProcess.start(db: db.path, ["--live-client-buffer", "1024"])
        let token = try await makeToken(db.path, ["--name", "all", "--read", "all", "--admin"])
        let slow = try LiveClient(server: server, token: token)
        let fast = try LiveClient(server: server, token: token)
        try await slow.waitSubscribed()
        try await fast.waitSubscribed()
        slow.pause()   // SIGSTOP: it keeps the connection and reads nothing
        // 30,000 events (~10 MB), 50 a commit every 20 ms: more than the kernel's socket buffers
        // hold for the stopped client (~4 MB each side) plus its 1,024 events, while the reading
        // client is never more than a few commits behind.
        var all: [QuantitySample] = []
        for batch in 0..<600 {
            let rows = try (0..<50).map { try steps(1, at: Double(batch * 50 + $0) * 60) }
            _ = try store.save(rows)
            all += rows
            try await Task.sleep(for: .milliseconds(20))
        }
        try await fast.waitFor(keys: Set(Self.keys(all)), deletions: [], timeout: 120)
        #expect(fast.sampleKeys.count == all.count)
        slow.resume()
        // The server ended the slow stream: curl ends by itself after reading what was sent.
        let ended = await offThread { slow.waitForExit(seconds: 60) }
        #expect(ended, "the slow client's stream was not closed by the server")
        #expect(slow.sampleKeys.count < all.count)
        print("LiveTests.slowClient: the stopped client had received \(slow.sampleKeys.count) of \(all.count) events when the server cut it off")
        let metrics = try await server.get("/metrics", token: token)
        #expect(metrics.body.contains("healthgate_http_live_overflows_total 1"), "\(metrics.body.prefix(3000))")
        #expect(server.stderr.contains("did not keep up"))
        // It reconnects with its last id and gets the rest.
        let slowID = slow.lastEventID
        #expect(slowID != nil)
        let again = try LiveClient(server: server, token: token, lastEventID: slowID)
        try await again.waitFor(keys: Set(Self.keys(all)).subtracting(slow.sampleKeys), deletions: [], timeout: 120)
        await offThread { again.drop() }
        await offThread { fast.drop() }
        #expect(await offThread { server.stop() } == 0)
    }

    @Test("a revoked token's open stream is closed within seconds (its reconnect is 401); other streams go on")
    func revokedTokenClosesStream() async throws {
        let db = TempStore()
        let store = try db.open()
        let server = try await ServeProcess.start(db: db.path)
        let token = try await makeToken(db.path, ["--name", "coach", "--read", "all"])
        let other = try await makeToken(db.path, ["--name", "other", "--read", "all"])
        let client = try LiveClient(server: server, token: token)
        let kept = try LiveClient(server: server, token: other)
        try await client.waitSubscribed()
        try await kept.waitSubscribed()
        let before = try steps(10, at: 0)
        _ = try store.save([before])
        try await client.waitFor(keys: Set(Self.keys([before])), deletions: [])
        let revoked = try await CLI.run(["token", "revoke", "coach", "--db", db.path])
        #expect(revoked.status == 0, "\(revoked.stderr)")
        // The server ends the stream by itself (the token is looked up again every 2 s).
        #expect(await offThread { client.waitForExit(seconds: 10) }, "the revoked token's stream stayed open: \(client.text)")
        let after = try steps(11, at: 60)
        _ = try store.save([after])
        try await kept.waitFor(keys: Set(Self.keys([before, after])), deletions: [])
        #expect(!client.sampleKeys.contains(Self.keys([after])[0]))
        #expect(try await server.get("/v1/live", token: token).status == 401)
        await offThread { kept.drop() }
        #expect(await offThread { server.stop() } == 0)
        #expect(server.stderr.contains("ended a /v1/live stream: its token 'coach' was revoked or has expired"), "\(server.stderr)")
    }

    @Test("streams of one token checking at once cost one store lookup, even while it is slow; a revocation is seen after the interval")
    func tokenChecksAreSingleFlight() async throws {
        let db = TempStore(), empty = TempStore()
        let store = try db.open()
        let made = try AccessTokenRegistry(store: store).create(name: "coach", scopes: TokenScopes(read: nil, write: []), expires: nil)
        let queue = StoreQueue(store: store, empty: try empty.open())
        let check = StreamTokenCheck(store: queue, interval: .milliseconds(1_500))
        // The store's queue is busy (a long statistics query): the first lookup waits behind it.
        let started = Atomic<Bool>(false)
        let busy = Task { try await queue.run { _ in started.store(true, ordering: .relaxed); usleep(400_000) } }
        while !started.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
        let answers = await withTaskGroup(of: Bool?.self) { group in
            for _ in 0..<50 { group.addTask { await check.isValid(made.token) } }
            return await group.reduce(into: [Bool?]()) { $0.append($1) }
        }
        try await busy.value
        #expect(check.lookups == 1, "\(check.lookups) lookups for 50 checks of one token")
        // The one lookup said valid; the others had its answer or none yet (nil keeps a stream open).
        #expect(answers.contains(true) && !answers.contains(false), "\(answers)")
        // Within the interval the answer is reused: a revocation is not looked up yet…
        try AccessTokenRegistry(store: store).revoke(name: "coach")
        #expect(await check.isValid(made.token) == true)
        #expect(check.lookups == 1)
        // …after it, one new lookup finds it revoked, and that answer is shared too.
        try await Task.sleep(for: .milliseconds(1_600))
        #expect(await check.isValid(made.token) == false)
        #expect(await check.isValid(made.token) == false)
        #expect(check.lookups == 2)
        // Another token is looked up on its own.
        #expect(await check.isValid("hg_0123456789abcdef_" + String(repeating: "ab", count: 32)) == false)
        #expect(check.lookups == 3)
    }

    @Test("SIGTERM closes open streams and serve exits 0")
    func shutdownClosesStreams() async throws {
        let db = TempStore()
        let server = try await ServeProcess.start(db: db.path)
        let token = try await makeToken(db.path, ["--name", "all", "--read", "all"])
        let client = try LiveClient(server: server, token: token)
        try await client.waitSubscribed()
        let status = await offThread { server.stop() }
        #expect(status == 0, "\(server.stderr)")
        #expect(await offThread { client.waitForExit(seconds: 10) }, "the stream stayed open after the server stopped")
    }
}

/// `curl -N` reading `/v1/live`, its output parsed as Server-Sent Events as it arrives.
final class LiveClient: @unchecked Sendable {
    private let process = Process()
    private let lock = NSLock()
    private var pending = ""
    private var started = false
    private var keys: [String] = []
    private var deleted: [String] = []
    private var types: Set<String> = []
    private var workouts: [String] = []
    private var lastID: String?
    private var tail = ""

    init(server: ServeProcess, token: String, lastEventID: String? = nil, path: String = "/v1/live") throws {
        var args = ["-s", "-N", "-H", "Authorization: Bearer \(token)"]
        if let lastEventID { args += ["-H", "Last-Event-ID: \(lastEventID)"] }
        args.append(server.base + path)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = args
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        readToEndOnThread(out.fileHandleForReading) { [self] d in received(String(decoding: d, as: UTF8.self)) }
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }

    /// Parses the complete blocks of what arrived.
    private func received(_ text: String) {
        lock.lock(); defer { lock.unlock() }
        pending += text
        tail = String((tail + text).suffix(2000))
        guard let end = pending.range(of: "\n\n", options: .backwards) else { return }
        let complete = pending[..<end.upperBound]
        pending = String(pending[end.upperBound...])
        for block in complete.components(separatedBy: "\n\n") where !block.isEmpty {
            var fields: [String: String] = [:]
            for line in block.split(separator: "\n") where !line.hasPrefix(":") {
                let parts = line.split(separator: ":", maxSplits: 1)
                fields[String(parts[0])] = parts.count > 1 ? String(parts[1].dropFirst()) : ""
            }
            if fields["retry"] != nil { started = true }
            if let id = fields["id"] { lastID = id }
            guard let o = json(fields["data"] ?? "") as? [String: Any] else { continue }
            if let t = o["type"] as? String { types.insert(t) }
            switch fields["event"] {
            case "sample":
                if let uuid = o["uuid"] as? String {
                    keys.append(uuid + (((o["series"] as? [String: Any])?["index"] as? Int).map { "#\($0)" } ?? ""))
                }
            case "deleted":
                if let uuid = o["uuid"] as? String { deleted.append(uuid) }
            case "workout":
                workouts.append(o["state"] as? String ?? "?")
            default: break
            }
        }
    }

    private func locked<T>(_ body: () -> T) -> T { lock.lock(); defer { lock.unlock() }; return body() }

    /// `uuid` or `uuid#index` of every sample event, in arrival order.
    var sampleKeys: [String] { locked { keys } }
    /// The UUIDs of the `deleted` events.
    var deletions: [String] { locked { deleted } }
    /// The `state` of every `workout` event, in arrival order.
    var workoutStates: [String] { locked { workouts } }
    /// The types named by the events received.
    var typesSeen: Set<String> { locked { types } }
    /// The last id received (what a browser would send as Last-Event-ID).
    var lastEventID: String? { locked { lastID } }
    /// The last 2,000 characters received, for messages.
    var text: String { locked { tail } }

    /// Waits (off the pool) for the stream's first block: the server has attached the client.
    func waitSubscribed() async throws {
        let ok = await offThread { [self] in poll(seconds: 30) { locked { started } } }
        if !ok { throw LiveFailed(what: "no stream started", text: text) }
    }

    func waitFor(keys: Set<String>, deletions wanted: Set<String>, timeout: Double = 30) async throws {
        let ok = await offThread { [self] in
            poll(seconds: timeout) { locked { keys.count <= self.keys.count && keys.isSubset(of: Set(self.keys)) && wanted.isSubset(of: Set(deleted)) } }
        }
        if !ok {
            throw LiveFailed(what: "missing \(keys.subtracting(sampleKeys).count) of \(keys.count) samples", text: text)
        }
    }

    private func poll(seconds: Double, _ done: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if done() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return done()
    }

    /// Kills curl: the connection drops as a lost network would drop it.
    func drop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    func pause() { kill(process.processIdentifier, SIGSTOP) }
    func resume() { kill(process.processIdentifier, SIGCONT) }

    /// Whether curl ended by itself (the server closed the stream) within `seconds`.
    func waitForExit(seconds: Double) -> Bool {
        let ok = poll(seconds: seconds) { !process.isRunning }
        if !ok { drop() }
        return ok
    }

    struct LiveFailed: Error, CustomStringConvertible {
        let what: String
        let text: String
        var description: String { "\(what); received: \(text)" }
    }
}
