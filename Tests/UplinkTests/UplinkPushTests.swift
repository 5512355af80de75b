import ChildProcess
import ScratchPostgres
import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing
@testable import Uplink

/// The PostgreSQL uplink against a real server (docs/uplink.md): one throwaway cluster for the
/// whole suite (`PostgresCluster`), a database per test. The suite is serialized because two
/// of its tests stop the server. Every check compares the central set with the local one:
/// count and every (uuid, series index, type, value, start, end), values compared bit for bit.
@Suite(.serialized)
struct UplinkPushTests {
    static let strap = Device(name: "Polar H10", manufacturer: "Polar", localIdentifier: "strap-1")
    static let pedometer = Device(name: "Pedo", localIdentifier: "ped-1")
    static let gatewaySource = Source(name: "HealthGate", identifier: "org.healthgate")
    static let t0 = 1_764_000_000.0

    // MARK: fixtures

    /// A store at a new temporary path.
    static func makeStore() throws -> (HealthStore, String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("uplink-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("health.sqlite").path
        return (try HealthStore(path: path), path)
    }

    /// `n` step-count samples (a pedometer's minutes, with sync identifiers) from `offset` on.
    static func steps(_ n: Int, from offset: Int = 0) throws -> [QuantitySample] {
        try (offset..<(offset + n)).map { i in
            try QuantitySample(type: .stepCount, quantity: Quantity(Double(10 + i % 90), .count),
                               start: Date(timeIntervalSince1970: t0 + Double(i) * 60),
                               end: Date(timeIntervalSince1970: t0 + Double(i) * 60 + 60), source: gatewaySource,
                               device: pedometer, metadata: Metadata(syncIdentifier: "ped-1:\(i)", syncVersion: 1))
        }
    }

    /// Quantities `range` of the heart-rate series `uuid` (one every `every` seconds, 1 Hz by
    /// default, RR intervals, chest).
    static func series(_ uuid: UUID, _ range: Range<Int>, every: Double = 1) throws -> [QuantitySample] {
        try range.map { i in
            let at = Date(timeIntervalSince1970: t0 + Double(i) * every + 0.125)
            return try QuantitySample(uuid: uuid, type: .heartRate, quantity: Quantity(Double(60 + i % 40), .countPerMinute),
                                      start: at, end: at, source: gatewaySource, device: strap,
                                      metadata: Metadata(heartRateSensorLocation: .chest),
                                      rrIntervals: RRIntervals(ticks: [1000 + UInt16(i % 50)], precededByGap: i == range.lowerBound))
                .inSeries(index: i)
        }
    }

    /// Every quantity the store holds as comparable rows.
    static func localRows(_ store: HealthStore) throws -> [String] {
        try store.samples(SampleQuery()).map { s in
            "\(s.uuid.uuidString.lowercased())|\(s.seriesIndex ?? -1)|\(s.type.identifier)|\(s.canonicalValue.bitPattern)|"
                + "\(s.startDate.timeIntervalSince1970.bitPattern)|\(s.endDate.timeIntervalSince1970.bitPattern)"
        }.sorted()
    }

    /// Every quantity the server holds for `gateway`, read by psql (an independent client).
    static func centralRows(_ cluster: PostgresCluster, _ db: String, gateway: String) throws -> [String] {
        try cluster.psql(db, """
            SELECT uuid, coalesce(series_index, -1), type, value, start_s, end_s FROM healthgate.quantities
             WHERE gateway = '\(gateway)'
            """).map { line in
            let f = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 6, let v = Double(f[3]), let s = Double(f[4]), let e = Double(f[5]) else { return "unreadable: \(line)" }
            return "\(f[0])|\(f[1])|\(f[2])|\(v.bitPattern)|\(s.bitPattern)|\(e.bitPattern)"
        }.sorted()
    }

    /// Expects the server's set for `gateway` to equal the store's: count, no duplicates, every row.
    static func expectEqual(_ store: HealthStore, _ cluster: PostgresCluster, _ db: String, gateway: String,
                            sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let (local, central) = try await offThread { (try localRows(store), try centralRows(cluster, db, gateway: gateway)) }
        #expect(central.count == local.count, "central \(central.count) rows, local \(local.count)", sourceLocation: sourceLocation)
        #expect(Set(central).count == central.count, "duplicates on the server", sourceLocation: sourceLocation)
        #expect(central == local, "the central set differs from the local one", sourceLocation: sourceLocation)
        #expect(!local.isEmpty, sourceLocation: sourceLocation)
    }

    static func setUp(_ name: String) async throws -> (PostgresCluster, String) {
        try await offThread {
            let cluster = try PostgresCluster.get()
            let db = try cluster.createDatabase("\(name)_\(UInt32.random(in: 0...UInt32.max))")
            return (cluster, db)
        }
    }

    static func pusher(_ store: HealthStore, _ cluster: PostgresCluster, _ db: String, gateway: String = "g1",
                       batch: Int = 500) throws -> UplinkPusher {
        try UplinkPusher(store: store, url: try UplinkURL(cluster.url(db)), gateway: gateway, batchSize: batch)
    }

    // MARK: tests

    @Test func pushSendsEverythingOnceGrowthOnceAndThenNothing() async throws {
        let (cluster, db) = try await Self.setUp("push")
        let (store, _) = try Self.makeStore()
        let hr = UUID.timeOrdered()
        try await offThread {
            _ = try store.save(try Self.steps(1200))
            _ = try store.save(try Self.series(hr, 0..<1000))
        }
        let pusher = try Self.pusher(store, cluster, db, batch: 300)
        let first = try await pusher.push()
        #expect(first.fullSync)
        // Every quantity counts toward the batch: the series went in pieces, not as one batch.
        #expect(first.samples == 1200 && first.quantities == 1000 && first.batches >= 8)
        try await Self.expectEqual(store, cluster, db, gateway: "g1")

        // Nothing new: nothing sent, the anchor stays.
        let again = try await pusher.push()
        #expect(again.batches == 0 && again.samples == 0 && again.quantities == 0 && !again.fullSync)
        #expect(again.anchor == first.anchor)

        // The series grows (its last chunk is sent again whole) and more samples arrive: each
        // quantity lands once.
        try await offThread {
            _ = try store.save(try Self.series(hr, 1000..<1170))
            _ = try store.save(try Self.steps(30, from: 1200))
        }
        let grown = try await pusher.push()
        #expect(grown.samples == 30 && grown.quantities >= 170 && !grown.fullSync)
        try await Self.expectEqual(store, cluster, db, gateway: "g1")
        let counts = try await offThread { try cluster.psql(db, "SELECT count(*) FROM healthgate.series_quantities WHERE uuid = '\(hr.uuidString.lowercased())'") }
        #expect(counts == ["1170"])
        // Reference rows went first; the anchor is on the server and in the store.
        let refs = try await offThread {
            try cluster.psql(db, "SELECT (SELECT count(*) FROM healthgate.devices WHERE gateway = 'g1'), (SELECT count(*) FROM healthgate.types), (SELECT anchor FROM healthgate.gateways WHERE name = 'g1')")
        }
        #expect(refs == ["2|2|\(grown.anchor)"])
        let local = try store.stateString(pusher.target.anchorKey)
        #expect(local == grown.anchor)
    }

    @Test func workoutsAreMirroredWithTheirPausesEndsAndDeletions() async throws {
        let (cluster, db) = try await Self.setUp("workouts")
        let (store, _) = try Self.makeStore()
        let source = Source(name: "HealthGate", identifier: "org.healthgate.workout")
        func at(_ s: Double) -> Date { Date(timeIntervalSince1970: Self.t0 + s) }
        let a = Workout(activity: .running, start: at(0.25), devices: ["Polar H10"], source: source)
        let b = Workout(activity: .cycling, start: at(100), end: at(200), source: source)
        try store.saveWorkout(a)
        try store.saveWorkout(b)
        let pusher = try Self.pusher(store, cluster, db, batch: 1)
        let first = try await pusher.push()
        #expect(first.workouts == 2 && first.workoutDeletions == 0, "batches of one: two pages")
        func rows() async throws -> [String] {
            try await offThread {
                try cluster.psql(db, "SELECT uuid, activity, start_s - \(Int(Self.t0)), coalesce((end_s - \(Int(Self.t0)))::text, '-'), jsonb_array_length(events), devices::text FROM healthgate.workouts WHERE gateway = 'g1' ORDER BY start_s")
            }
        }
        let u = { (w: Workout) in w.uuid.uuidString.lowercased() }
        #expect(try await rows() == ["\(u(a))|running|0.25|-|0|[\"Polar H10\"]", "\(u(b))|cycling|100|200|0|[]"], "start and end to the fraction")
        #expect(try await pusher.push().workouts == 0, "nothing changed: nothing sent")

        try store.updateWorkout(uuid: a.uuid, adding: WorkoutEvent(.pause, at: at(10)))
        try store.updateWorkout(uuid: a.uuid, end: at(50))
        #expect(try store.deleteWorkout(uuid: b.uuid))
        let c = Workout(activity: .walking, start: at(300), end: at(400), source: source)
        try store.saveWorkout(c)
        let second = try await pusher.push()
        #expect(second.workouts == 2 && second.workoutDeletions == 1)
        #expect(try await rows() == ["\(u(a))|running|0.25|50|1|[\"Polar H10\"]", "\(u(c))|walking|300|400|0|[]"])

        // An anchor the store cannot continue (another store's, or ahead of a restored file):
        // everything again, and nothing left over.
        _ = try await offThread { try cluster.psql(db, "UPDATE healthgate.gateways SET workout_anchor = 'w1:0123456789abcdef:99'") }
        _ = try await offThread { try cluster.psql(db, "INSERT INTO healthgate.workouts(gateway, uuid, activity, start_s, events, devices, source) VALUES ('g1', '\(UUID().uuidString)', 'yoga', 1, '[]', '[]', 'x')") }
        let resync = try await pusher.push()
        #expect(resync.workouts == 2)
        #expect(try await rows().count == 2)
    }

    @Test func deletesOnTheGatewayReachTheServer() async throws {
        let (cluster, db) = try await Self.setUp("del")
        let (store, _) = try Self.makeStore()
        let hr = UUID.timeOrdered()
        let steps = try Self.steps(100)
        try await offThread {
            _ = try store.save(steps)
            _ = try store.save(try Self.series(hr, 0..<50))
        }
        let pusher = try Self.pusher(store, cluster, db, batch: 40)
        _ = try await pusher.push()
        try await Self.expectEqual(store, cluster, db, gateway: "g1")
        // A sample, a whole series, and a sync-identifier replacement (a delete plus an add).
        let replacement = try QuantitySample(type: .stepCount, quantity: Quantity(5, .count), start: steps[7].startDate, end: steps[7].endDate,
                                             source: Self.gatewaySource, device: Self.pedometer,
                                             metadata: Metadata(syncIdentifier: "ped-1:7", syncVersion: 2))
        try await offThread {
            #expect(try store.delete(uuids: [steps[3].uuid, hr]) == 51)
            _ = try store.save([replacement])
        }
        let report = try await pusher.push()
        #expect(report.deletions == 3 && report.samples == 1)
        try await Self.expectEqual(store, cluster, db, gateway: "g1")
        let gone = try await offThread {
            try cluster.psql(db, "SELECT count(*) FROM healthgate.quantities WHERE uuid IN ('\(steps[3].uuid.uuidString.lowercased())', '\(hr.uuidString.lowercased())', '\(steps[7].uuid.uuidString.lowercased())')")
        }
        #expect(gone == ["0"])
    }

    // Once disabled: in about one run of three the push did not exit after the server stopped
    // mid-upload. A PostgresNIO query whose server vanished can stay pending after its
    // connection is closed, and the batch deadline waited for it in a task group; the deadline
    // now never waits on the query (ServerDeadline).
    @Test func serverStoppedAndRestartedMidUploadEndsEqual() async throws {
        let (cluster, db) = try await Self.setUp("restart")
        let (store, path) = try Self.makeStore()
        try await offThread { _ = try store.save(try Self.steps(20_000)) }
        let status = try await offThread { () throws -> Int32 in
            let child = try Self.pushChild(path, cluster.url(db), gateway: "g1", batch: 5)
            defer { child.kill() }
            #expect(Self.waitForFirstCommit(cluster, db, child), "the push committed no batch")
            #expect(try child.poll(), "the push ended before the server was stopped: make the store bigger")
            try cluster.stop(mode: "fast")
            let code = try child.wait(timeout: 120)
            try cluster.start()
            return code
        }
        #expect(status == 69, "a push whose server went away exits 69 (unavailable)")
        let rerun = try await offThread { try HealthGateExecutable.run(["uplink", "push", "--db", path, "--url", cluster.url(db), "--gateway", "g1"]) }
        #expect(rerun.status == 0, "\(rerun.stderr)")
        try await Self.expectEqual(store, cluster, db, gateway: "g1")
    }

    /// The link fails without the server stopping, through a TCP proxy the test controls: cut
    /// (both sockets shut down) the push ends at once saying the connection closed; silent
    /// (nothing forwarded, sockets open) it ends at the batch deadline saying so. Each exits 69;
    /// a push without the proxy then ends equal.
    @Test func aCutOrSilentLinkEndsThePushWith69AndARerunEndsEqual() async throws {
        let (cluster, db) = try await Self.setUp("proxy")
        let role = "proxy_\(UInt32.random(in: 0...UInt32.max))"
        _ = try await offThread { try cluster.psql(db, "CREATE ROLE \(role) LOGIN SUPERUSER PASSWORD 'proxy-pw'") }
        let (store, path) = try Self.makeStore()
        try await offThread { _ = try store.save(try Self.steps(20_000)) }
        // A cut is seen by PostgresNIO ("lost mid-upload") or, when its query is left pending, by
        // the closed connection; a silent link only by the deadline.
        for (fault, says) in [("cut", ["closed the connection", "was lost mid-upload"]), ("silent", ["did not answer within"])] {
            let proxy = try TCPProxy(upstream: cluster.port)
            defer { proxy.stop() }
            let url = "postgres://\(role):proxy-pw@127.0.0.1:\(proxy.port)/\(db)?sslmode=disable"
            let log = NSTemporaryDirectory() + "uplink-proxy-\(fault)-\(UUID().uuidString.prefix(8)).log"
            let status = try await offThread { () throws -> Int32 in
                guard let exe = HealthGateExecutable.url else { throw PostgresCluster.Failure("the healthgate executable is not built") }
                // The server's anchor ("" before the schema exists).
                func anchor() -> String { (try? cluster.psql(db, "SELECT coalesce(max(anchor), '') FROM healthgate.gateways"))?.first ?? "" }
                let before = anchor()
                let child = try WatchedChild([exe.path, "uplink", "push", "--db", path, "--url", url, "--gateway", "g1", "--batch-size", "5"],
                                             stderr: .file(log))
                defer { child.kill() }
                // Wait until this push committed a batch of its own, then fail the link.
                let deadline = Date().addingTimeInterval(60)
                while Date() < deadline, try child.poll(), anchor() == before { usleep(10_000) }
                #expect(try child.poll(), "the push ended before the link failed: make the store bigger")
                if fault == "cut" { proxy.cut() } else { proxy.freeze() }
                return try child.wait(timeout: 120)
            }
            let stderr = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            #expect(status == 69, "\(fault): \(stderr)")
            #expect(says.contains { stderr.contains($0) }, "\(fault): \(stderr)")
        }
        let rerun = try await offThread { try HealthGateExecutable.run(["uplink", "push", "--db", path, "--url", cluster.url(db), "--gateway", "g1"]) }
        #expect(rerun.status == 0, "\(rerun.stderr)")
        try await Self.expectEqual(store, cluster, db, gateway: "g1")
    }

    @Test func gatewayKilledMidBatchEndsEqual() async throws {
        let (cluster, db) = try await Self.setUp("sigkill")
        let (store, path) = try Self.makeStore()
        try await offThread {
            _ = try store.save(try Self.steps(20_000))
            _ = try store.save(try Self.series(UUID.timeOrdered(), 0..<600))
        }
        try await offThread {
            let child = try Self.pushChild(path, cluster.url(db), gateway: "g1", batch: 5)
            defer { child.kill() }
            #expect(Self.waitForFirstCommit(cluster, db, child), "the push committed no batch")
            #expect(try child.poll(), "the push ended before it was killed: make the store bigger")
            child.signal(SIGKILL)
            #expect(try child.wait(timeout: 60) == 128 + SIGKILL)
        }
        let rerun = try await offThread { try HealthGateExecutable.run(["uplink", "push", "--db", path, "--url", cluster.url(db), "--gateway", "g1", "--json"]) }
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(rerun.stdout.contains("\"fullSync\":false"), "the rerun continues from the server's anchor: \(rerun.stdout)")
        try await Self.expectEqual(store, cluster, db, gateway: "g1")
    }

    /// A gateway offline for a week catches up: a series a day (one reading every 10 s) and a
    /// pedometer's minutes, pushed by `uplink push` with its default batch: many batches, none
    /// holding a whole series (every quantity counts toward a batch), and the central set equal.
    @Test func weekLongBacklogEndsEqualInBoundedBatches() async throws {
        let (cluster, db) = try await Self.setUp("week")
        let (store, path) = try Self.makeStore()
        try await offThread {
            for day in 0..<7 {
                _ = try store.save(try Self.series(UUID.timeOrdered(), (day * 8_640)..<((day + 1) * 8_640), every: 10))
            }
            _ = try store.save(try Self.steps(7 * 1_440))
        }
        let push = try await offThread {
            try HealthGateExecutable.run(["uplink", "push", "--db", path, "--url", cluster.url(db), "--gateway", "g1", "--json"],
                                         timeout: .seconds(600))
        }
        #expect(push.status == 0, "\(push.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(push.stdout.utf8)) as? [String: Any])
        #expect(report["quantities"] as? Int == 7 * 8_640 && report["samples"] as? Int == 7 * 1_440, "\(report)")
        // 70,560 items in batches of at most 5,000: a day's series went in two pieces at least.
        #expect((report["batches"] as? Int ?? 0) >= (7 * 8_640 + 7 * 1_440) / 5_000, "\(report)")
        try await Self.expectEqual(store, cluster, db, gateway: "g1")
    }

    @Test func threeGatewaysPushToOneServerAtOnce() async throws {
        let (cluster, db) = try await Self.setUp("three")
        var stores: [(HealthStore, String)] = []
        for _ in 0..<3 {
            let (store, path) = try Self.makeStore()
            try await offThread {
                _ = try store.save(try Self.steps(3000))
                _ = try store.save(try Self.series(UUID.timeOrdered(), 0..<300))
            }
            stores.append((store, path))
        }
        let paths = stores.map(\.1)
        let codes = try await offThread { () throws -> [Int32] in
            let children = try paths.enumerated().map { i, p in try Self.pushChild(p, cluster.url(db), gateway: "pi-\(i)", batch: 100) }
            return try children.map { try $0.wait(timeout: 120) }
        }
        #expect(codes == [0, 0, 0])
        for (i, (store, _)) in stores.enumerated() {
            try await Self.expectEqual(store, cluster, db, gateway: "pi-\(i)")
        }
        // The fleet views are plain SQL over all of them.
        let perDay = try await offThread { try cluster.psql(db, "SELECT gateway, sum(steps)::bigint FROM healthgate.steps_per_day GROUP BY gateway ORDER BY gateway") }
        let expected = try (0..<3000).reduce(0) { $0 + Int(try Self.steps(1, from: $1)[0].canonicalValue) }
        #expect(perDay == ["pi-0|\(expected)", "pi-1|\(expected)", "pi-2|\(expected)"])
        let perMinute = try await offThread { try cluster.psql(db, "SELECT count(DISTINCT gateway), sum(readings)::bigint FROM healthgate.heart_rate_per_minute") }
        #expect(perMinute == ["3|900"])
    }

    @Test func failuresExitWithTheirCodes() async throws {
        let (cluster, db) = try await Self.setUp("codes")
        let (store, path) = try Self.makeStore()
        try await offThread { _ = try store.save(try Self.steps(10)) }
        let freePort = try PostgresCluster.freePort()
        let cases: [(url: String, gateway: String, code: Int32, says: String)] = [
            ("mysql://x@localhost/db", "g1", 64, "not a PostgreSQL URL"),
            ("postgres://u@localhost:0/db", "g1", 64, "outside 1…65535"),
            ("postgres://u@127.0.0.1:\(freePort)/db?sslmode=disable", "g1", 69, "cannot reach PostgreSQL"),
            (cluster.tcpURL(db, password: "wrong"), "g1", 77, "refused the login"),
            (cluster.url("no_such_db"), "g1", 78, "no such database"),
        ]
        for c in cases {
            let r = try await offThread { try HealthGateExecutable.run(["uplink", "push", "--db", path, "--url", c.url, "--gateway", c.gateway]) }
            #expect(r.status == c.code, "\(c.url): \(r.stderr)")
            #expect(r.stderr.contains(c.says), "\(c.url): \(r.stderr)")
            if c.url.contains(":wrong@") { #expect(!r.stderr.contains("wrong"), "the password is never printed: \(r.stderr)") }
        }
        // A gateway name another store already uses is refused (78), not overwritten.
        _ = try await Self.pusher(store, cluster, db, gateway: "taken").push()
        let (_, other) = try Self.makeStore()
        let r = try await offThread { try HealthGateExecutable.run(["uplink", "push", "--db", other, "--url", cluster.url(db), "--gateway", "taken"]) }
        #expect(r.status == 78 && r.stderr.contains("already belongs to another store"), "\(r.stderr)")
        // The failure is recorded for `uplink status`; a success clears it.
        let status = try await offThread { try HealthGateExecutable.run(["uplink", "status", "--db", path, "--json"]) }
        #expect(status.status == 0 && status.stdout.contains("\"gateway\":\"taken\""), "\(status.stdout)")
        // The same through run's configuration ([store] path), and a missing store is 66.
        let file = URL(fileURLWithPath: path).deletingLastPathComponent().path + "/run.toml"
        try "[store]\npath = \"\(path)\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let viaConfig = try await offThread { try HealthGateExecutable.run(["uplink", "status", "--config", file, "--json"]) }
        #expect(viaConfig.status == 0 && viaConfig.stdout.contains("\"gateway\":\"taken\""), "\(viaConfig.stderr)")
        let none = try await offThread { try HealthGateExecutable.run(["uplink", "status", "--db", "/nonexistent/h.sqlite"]) }
        #expect(none.status == 66 && none.stderr.contains("no store at /nonexistent/h.sqlite"), "\(none.stderr)")
    }

    @Test func unshippedTombstonesAreNotPruned() async throws {
        let (cluster, db) = try await Self.setUp("hold")
        let (store, _) = try Self.makeStore()
        let steps = try Self.steps(20)
        try await offThread { _ = try store.save(steps) }
        let pusher = try Self.pusher(store, cluster, db)
        _ = try await pusher.push()
        try await offThread {
            _ = try store.delete(uuids: [steps[0].uuid, steps[1].uuid])
            // Everything is older than a cutoff in the future, but the uplink has not shipped them.
            #expect(try store.pruneTombstones(olderThan: Date().addingTimeInterval(3600)) == 0)
            #expect(try store.changeFeedStatus().tombstoneCount == 2)
        }
        let report = try await pusher.push()
        #expect(report.deletions == 2)
        try await Self.expectEqual(store, cluster, db, gateway: "g1")
        try await offThread {
            #expect(try store.pruneTombstones(olderThan: Date().addingTimeInterval(3600)) == 2)
            // Behind and caught up, as `uplink status` tells it.
            let s = try UplinkStatus.all(in: store)
            #expect(s.count == 1 && s.first?.behind == 0 && s.first?.lastError == nil && s.first?.gateway == "g1")
            _ = try store.save(try Self.steps(3, from: 100))
            #expect(try UplinkStatus.all(in: store).first?.behind == 3)
        }
    }

    @Test func runPushesBesideIngestAndOutlivesAnAbsentServer() async throws {
        let (cluster, db) = try await Self.setUp("run")
        let (store, path) = try Self.makeStore()
        try await offThread { _ = try store.save(try Self.steps(500)) }
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path
        func config(_ url: String, http: Bool = false) throws -> String {
            let file = dir + "/run-\(UUID().uuidString.prefix(6)).toml"
            try """
                status_interval = 1
                [uplink.postgres]
                url = "\(url)"
                gateway = "g1"
                interval_ms = 50
                retry_backoff_ms = 50
                retry_max_backoff_ms = 200
                """.appending(http ? "\n[http]\nlisten = \"127.0.0.1:0\"\n" : "").write(toFile: file, atomically: true, encoding: .utf8)
            return file
        }
        guard let exe = HealthGateExecutable.url else { throw PostgresCluster.Failure("the healthgate executable is not built: run swift build first") }
        // No server: run keeps going, the store keeps taking samples, the lag and the error are
        // recorded, logged and on /metrics (run serves the API here).
        let dead = try config("postgres://postgres@127.0.0.1:\(try PostgresCluster.freePort())/x?sslmode=disable", http: true)
        let token = try await offThread { try HealthGateExecutable.run(["token", "create", "--db", path, "--name", "scraper", "--metrics"]) }
        #expect(token.status == 0, "\(token.stderr)")
        let secret = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try await offThread {
            let child = try WatchedChild([exe.path, "run", "--config", dead, "--db", path], stderr: .file(dir + "/run-dead.log"))
            defer { child.kill() }
            var seen: UplinkStatus?
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, try child.poll() {
                _ = try store.save(try Self.steps(1, from: 1000 + Int.random(in: 0..<1_000_000)))
                seen = try UplinkStatus.all(in: store).first { $0.lastError != nil }
                // The warning with the lag is logged right after the error is recorded: wait for both.
                let text = (try? String(contentsOfFile: dir + "/run-dead.log", encoding: .utf8)) ?? ""
                if seen != nil, text.contains("changes behind"), text.contains("behind, failing") { break }
                usleep(50_000)
            }
            let log = (try? String(contentsOfFile: dir + "/run-dead.log", encoding: .utf8)) ?? ""
            #expect(seen?.lastError?.contains("cannot reach PostgreSQL") == true, "\(log)")
            #expect(try child.poll(), "run ended while its uplink could not reach the server: \(log)")
            if let r = log.range(of: "serving the HTTP API on http://") {
                let base = "http://" + log[r.upperBound...].prefix { !$0.isWhitespace }
                let scrape = try HealthGateExecutable.run(["-s", "-H", "Authorization: Bearer \(secret)", base + "/metrics"], timeout: .seconds(30),
                                                          launcher: URL(fileURLWithPath: "/usr/bin/curl")).stdout
                let lines = scrape.split(separator: "\n").filter { $0.contains("gateway=\"g1\"") }
                #expect(lines.contains { $0.hasPrefix("healthgate_uplink_failing{") && ($0.hasSuffix(" 1.0") || $0.hasSuffix(" 1")) }, "\(scrape.suffix(2000))")
                #expect(lines.contains { $0.hasPrefix("healthgate_uplink_behind_changes{") && !($0.hasSuffix(" 0.0") || $0.hasSuffix(" 0")) },
                        "\(scrape.suffix(2000))")
            } else {
                Issue.record("run did not log its HTTP address: \(log)")
            }
            child.signal(SIGTERM)
            #expect(try child.wait(timeout: 60) == 0, "\(log)")
            #expect(log.contains("changes behind"), "the lag is logged: \(log)")
            // …and is on the status line (the log's and systemd's STATUS=).
            #expect(log.split(separator: "\n").contains { $0.contains("committed") && $0.contains(" behind, failing") }, "\(log)")
        }
        // A live server: everything committed before and while run runs arrives, exactly once.
        let live = try config(cluster.url(db))
        try await offThread {
            let child = try WatchedChild([exe.path, "run", "--config", live, "--db", path], stderr: .file(dir + "/run-live.log"))
            defer { child.kill() }
            _ = try store.save(try Self.steps(300, from: 5000))
            let deadline = Date().addingTimeInterval(90)
            var equal = false
            while Date() < deadline, try child.poll() {
                if (try? Self.centralRows(cluster, db, gateway: "g1")) == (try Self.localRows(store)) { equal = true; break }
                usleep(100_000)
            }
            let log = (try? String(contentsOfFile: dir + "/run-live.log", encoding: .utf8)) ?? ""
            #expect(equal, "run's uplink did not catch up: \(log)")
            var caughtUp = false
            for _ in 0..<100 where !caughtUp {
                caughtUp = ((try? String(contentsOfFile: dir + "/run-live.log", encoding: .utf8)) ?? "").contains("uplink caught up")
                usleep(50_000)
            }
            #expect(caughtUp, "the status line says the uplink caught up: \(log)")
            child.signal(SIGTERM)
            #expect(try child.wait(timeout: 60) == 0, "\(log)")
        }
        try await Self.expectEqual(store, cluster, db, gateway: "g1")
    }

    // MARK: helpers (blocking: call off the pool)

    static func pushChild(_ path: String, _ url: String, gateway: String, batch: Int) throws -> WatchedChild {
        guard let exe = HealthGateExecutable.url else { throw PostgresCluster.Failure("the healthgate executable is not built: run swift build first") }
        return try WatchedChild([exe.path, "uplink", "push", "--db", path, "--url", url, "--gateway", gateway, "--batch-size", "\(batch)"])
    }

    /// Polls (psql) until the server holds an anchor for a gateway; false when the child ended first or after 60 s.
    static func waitForFirstCommit(_ cluster: PostgresCluster, _ db: String, _ child: WatchedChild) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let rows = try? cluster.psql(db, "SELECT count(*) FROM healthgate.gateways WHERE anchor IS NOT NULL"), rows == ["1"] { return true }
            if (try? child.poll()) == false { return false }
            usleep(10_000)
        }
        return false
    }
}
