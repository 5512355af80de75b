import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `healthgate serial watch` end to end: the built binary reads a real pty and stores exact totals.
@Suite(.serialized) struct WatchCommandTests {
    static var binary: URL? { HealthGateExecutable.url }

    /// A running `healthgate serial watch`, its JSON events collected as they arrive.
    final class Watch: @unchecked Sendable {
        let process = Process()
        /// JSON objects are not Sendable; they live behind a lock and are only read as copies.
        final class Log: @unchecked Sendable {
            private let lock = NSLock()
            private var items: [[String: Any]] = []
            func append(_ o: [String: Any]) { lock.lock(); items.append(o); lock.unlock() }
            var all: [[String: Any]] { lock.lock(); defer { lock.unlock() }; return items }
        }
        private let events = Log()
        private let stdout = Pipe()
        private let done = DispatchSemaphore(value: 0)

        init(_ args: [String]) throws {
            let bin = try #require(WatchCommandTests.binary, "build the healthgate binary first (swift build)")
            process.executableURL = bin
            process.arguments = ["serial", "watch"] + args + ["--json"]
            process.standardOutput = stdout
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let handle = stdout.fileHandleForReading
            Thread { [events, done] in
                var buffer = Data()
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    buffer += chunk
                    while let nl = buffer.firstIndex(of: 0x0A) {
                        let line = buffer[buffer.startIndex..<nl]
                        buffer = Data(buffer[(nl + 1)...])
                        if let o = try? JSONSerialization.jsonObject(with: line) as? [String: Any] {
                            events.append(o)
                        }
                    }
                }
                done.signal()
            }.start()
            // A watchdog so a hung child fails the test instead of hanging it.
            let p = process
            DispatchQueue.global().asyncAfter(deadline: .now() + 120) { if p.isRunning { p.terminate() } }
        }

        var all: [[String: Any]] { events.all }
        func count(_ event: String) -> Int { all.filter { $0["event"] as? String == event }.count }

        /// Waits until `condition` holds on the events so far (generous limit; outcome only), on a
        /// thread of its own: a test that waits here never holds a cooperative pool thread, so
        /// one that fails does not stall every other suite for its full minute.
        func wait(seconds: Int = 60, until condition: @escaping @Sendable ([[String: Any]]) -> Bool) async -> Bool {
            await offThread { [self] in
                for _ in 0..<(seconds * 100) {
                    if condition(all) { return true }
                    if !process.isRunning { return condition(all) }
                    usleep(10_000)
                }
                return false
            }
        }

        /// Waits for the command's `opened` event number `n` (1 = the first open; 2 = the first
        /// reopen): its port is set up (raw mode, exclusive) and read from, so what the test writes
        /// now is read. The file descriptor alone appears before termios setup ends.
        func waitForOpened(_ n: Int = 1) async -> Bool {
            await wait { events in events.filter { $0["event"] as? String == "opened" }.count >= n }
        }

        func finish() async -> Int32 {
            await offThread { [self] in
                process.waitUntilExit()
                done.wait()
                return process.terminationStatus
            }
        }
    }

    private func tempDB() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hg-watch-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent("health.sqlite").path
    }

    private func storedSteps(_ db: String) throws -> Double {
        try HealthStore(path: db).samples(SampleQuery(type: .stepCount)).reduce(0) { $0 + $1.quantity.value }
    }

    private func lineSeen(_ text: String) -> @Sendable ([[String: Any]]) -> Bool {
        { events in events.contains { $0["event"] as? String == "line" && $0["line"] as? String == text } }
    }

    @Test(.enabled(if: WatchCommandTests.binary != nil))
    func messyStreamIsStoredExactlyAndUnplugEndsTheCommand() async throws {
        let db = tempDB()
        let pty = try PtyPeer()
        defer { withExtendedLifetime(pty) {} }  // the master must outlive the reads
        let watch = try Watch([pty.path, "--db", db, "--id", "W1", "--counter-bits", "16"])
        #expect(await watch.waitForOpened())
        pty.send("HealthGate pedometer v1\r\n")                       // banner: rejected
        pty.send("{\"steps\":65530,\"seq\":1,\"boot\":\"A\"}\n")      // baseline
        pty.send("{\"steps\":65534,\"seq\":2,\"boot\":\"A\"}\n")      // +4
        pty.send("{\"steps\":65534,\"seq\":2,\"boot\":\"A\"}\n")      // duplicate
        pty.send("{\"steps\":3,\"seq\":4,\"boot\":\"A\"}\r")          // 16-bit wrap: +5, seq gap
        pty.send("{\"steps\":2,\"seq\":3,\"boot\":\"A\"}\r\n")        // late line: dropped
        pty.send("steps:10,seq:5,boot:A" + String(repeating: " ", count: 10) + "\r\n")  // +7, padded
        pty.send([0x73, 0xFF, 0x0A])                                   // not UTF-8: rejected
        pty.send("{\"steps\":4,\"seq\":0,\"boot\":\"B\"}\n")          // power cycle: +4
        pty.send("{\"steps\":9,\"seq\":1,\"boot\":\"B\"}\n")          // +5
        #expect(await watch.wait(until: lineSeen("{\"steps\":9,\"seq\":1,\"boot\":\"B\"}")))
        pty.unplug()
        #expect(await watch.finish() == 0)
        #expect(try storedSteps(db) == 25)
        #expect(watch.count("reject") == 2)
        #expect(watch.count("sample") == 5)
        #expect(watch.count("unplugged") == 1)
        let kinds = watch.all.compactMap { $0["event"] as? String == "counter" ? $0["kind"] as? String : nil }
        #expect(kinds.contains("wrap") && kinds.contains("duplicate") && kinds.contains("out-of-order") && kinds.contains("reset"))
    }

    @Test(.enabled(if: WatchCommandTests.binary != nil))
    func gatewayRestartMidStreamKeepsTheTotalExact() async throws {
        let db = tempDB()
        let first = try PtyPeer()
        defer { withExtendedLifetime(first) {} }  // the master must outlive the reads
        let run1 = try Watch([first.path, "--db", db, "--id", "W2"])
        #expect(await run1.waitForOpened())
        for (i, c) in [100, 103, 106, 109, 112].enumerated() { first.send("{\"steps\":\(c),\"seq\":\(i + 1),\"boot\":\"A\"}\n") }
        #expect(await run1.wait(until: lineSeen("{\"steps\":112,\"seq\":5,\"boot\":\"A\"}")))
        run1.process.terminate()                                         // SIGTERM: flush, exit 0
        #expect(await run1.finish() == 0)
        #expect(try storedSteps(db) == 12)

        // The gateway comes back (on another tty node); the device kept counting meanwhile.
        let second = try PtyPeer()
        defer { withExtendedLifetime(second) {} }  // the master must outlive the reads
        let run2 = try Watch([second.path, "--db", db, "--id", "W2"])
        #expect(await run2.waitForOpened())
        second.send("{\"steps\":112,\"seq\":5,\"boot\":\"A\"}\n")        // a resend: duplicate
        second.send("{\"steps\":121,\"seq\":6,\"boot\":\"A\"}\n")        // +9 since the last stored reading
        second.send("{\"steps\":124,\"seq\":7,\"boot\":\"A\"}\n")        // +3
        #expect(await run2.wait(until: lineSeen("{\"steps\":124,\"seq\":7,\"boot\":\"A\"}")))
        second.unplug()
        #expect(await run2.finish() == 0)
        #expect(try storedSteps(db) == 24)
        #expect(!run2.all.contains { $0["kind"] as? String == "baseline" })
    }

    /// A clean stop leaves every sample in the main file: a copy of it alone (no -wal) holds
    /// the whole total (docs/store.md, "Checkpoint on shutdown").
    @Test(.enabled(if: WatchCommandTests.binary != nil))
    func aCleanStopLeavesEverySampleInTheMainFile() async throws {
        let db = tempDB()
        let pty = try PtyPeer()
        defer { withExtendedLifetime(pty) {} }
        let run = try Watch([pty.path, "--db", db, "--id", "CK"])
        #expect(await run.waitForOpened())
        for (i, c) in [100, 110, 125, 130].enumerated() { pty.send("{\"steps\":\(c),\"seq\":\(i + 1),\"boot\":\"A\"}\n") }
        #expect(await run.wait(until: lineSeen("{\"steps\":130,\"seq\":4,\"boot\":\"A\"}")))
        // A reader stays connected across the stop (as `watch` would), so the writer's close is
        // not the last one and SQLite's own checkpoint-at-last-close does not happen.
        let reader = try HealthStore(path: db, mode: .readOnly)
        _ = try reader.count(SampleQuery())
        run.process.terminate()
        #expect(await run.finish() == 0)
        let copy = db + ".copy"
        try FileManager.default.copyItem(atPath: db, toPath: copy)   // the main file only
        #expect(try storedSteps(copy) == 30)
        withExtendedLifetime(reader) {}
    }

    @Test(.enabled(if: WatchCommandTests.binary != nil))
    func aHugeTrustedDeviceTimeIsRefusedNotFatal() async throws {
        // Issue #17 items 6 and 9: `t = 1e300` with --device-time trust crashed the command
        // (Int(_:) on the long-gap seconds) and would have stored a sample ending in year 506713.
        let db = tempDB()
        let pty = try PtyPeer()
        defer { withExtendedLifetime(pty) {} }  // the master must outlive the reads
        let watch = try Watch([pty.path, "--db", db, "--id", "W3", "--device-time", "trust"])
        #expect(await watch.waitForOpened())
        let t = Int(Date().timeIntervalSince1970)
        let last = "{\"steps\":160,\"seq\":3,\"t\":\(t + 20)}"
        let lines = "{\"steps\":100,\"seq\":1,\"t\":\(t)}\n"
            + "{\"steps\":150,\"seq\":2,\"t\":1e300}\n"       // refused: bad-time
            + last + "\n"                                           // +60 since the baseline
        pty.send(lines)
        // As in the reopen test below: under the one-thread pass, lines written right after
        // `opened` were once not read at all (a CI run of fb12c2e; cause not found). Only when
        // not one line or reject has arrived after 10 s are they sent again, so the totals and
        // the single reject below still catch a loss or a double count.
        let anything: @Sendable ([[String: Any]]) -> Bool = { events in
            events.contains { ["line", "reject"].contains($0["event"] as? String ?? "") }
        }
        if !(await watch.wait(seconds: 10, until: anything)) { pty.send(lines) }
        #expect(await watch.wait(until: lineSeen(last)))
        pty.unplug()
        #expect(await watch.finish() == 0)
        #expect(try storedSteps(db) == 60)
        let rejects = watch.all.filter { $0["event"] as? String == "reject" }
        #expect(rejects.count == 1 && rejects.first?["reason"] as? String == "bad-time")
        let ends = try HealthStore(path: db).samples(SampleQuery(type: .stepCount)).map(\.endDate)
        #expect(ends.allSatisfy { $0 <= Date().addingTimeInterval(86_400) })
    }

    /// A device enters the registry only once its port is open: `serial watch /dev/null` (not a
    /// tty) and a missing path leave no junk device behind (issue 17, item 17).
    @Test(.enabled(if: WatchCommandTests.binary != nil))
    func onlyAnOpenedDeviceIsRegistered() async throws {
        let db = tempDB()
        #expect(await (try Watch(["/dev/null", "--db", db])).finish() == 64)
        #expect(await (try Watch(["/dev/healthgate-missing-tty", "--db", db])).finish() == 69)
        #expect(try HealthStore(path: db).devices().isEmpty)
        let pty = try PtyPeer()
        defer { withExtendedLifetime(pty) {} }
        let watch = try Watch([pty.path, "--db", db, "--id", "W9"])
        #expect(await watch.waitForOpened())
        // The descriptor is open before the port's setup ends (termios, TIOCEXCL): an unplug in
        // that window is a device that vanished while being opened (exit 69, nothing registered;
        // seen in CI under load). Unplug only once the opened port is in the registry.
        #expect(await watch.wait { _ in (try? HealthStore(path: db, mode: .readOnly).devices().isEmpty) == false })
        pty.unplug()
        #expect(await watch.finish() == 0)
        let devices = try HealthStore(path: db).devices()
        #expect(devices.map(\.device.localIdentifier) == ["serial:W9"])
        #expect(devices.first?.kind == .serial && devices.first?.address == pty.path)
    }

    /// `--reopen`: the hot-plug watcher opens the device again when it comes back (here a link
    /// that points at a new pty, as /dev/healthgate/pedometer-SERIAL would), and the count goes on.
    @Test(.enabled(if: WatchCommandTests.binary != nil))
    func reopenPicksTheDeviceUpAgainAndContinuesTheCount() async throws {
        let db = tempDB()
        let link = (db as NSString).deletingLastPathComponent + "/pedometer"
        let first = try PtyPeer()
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: first.path)
        let watch = try Watch([link, "--reopen", "--db", db, "--id", "RE"])
        #expect(await watch.waitForOpened())
        for (i, c) in [50, 54, 60].enumerated() { first.send("{\"steps\":\(c),\"seq\":\(i + 1)}\n") }
        // Lines once went missing here in full runs (seen 2026-11-28 and in CI): another test's
        // `run`, left watching a pty path of a simulator that had stopped, opened this pty when
        // the kernel gave it that number, and read part of the lines. `simulate` now names its
        // ptys by links it removes, and a port is flock'ed (root passes TIOCEXCL); a failure here
        // lists who else holds the pty.
        #expect(await watch.wait(until: lineSeen("{\"steps\":60,\"seq\":3}")),
                "holders: \(processesHolding(first.path)); events: \(watch.all.map { "\($0)" }.joined(separator: " | "))")
        // The link goes before the device, as udev removes /dev/healthgate/pedometer-SERIAL when
        // the adapter is pulled. A link left pointing at the first's /dev/pts/N finds whatever
        // pty the kernel gives that freed number next, here another test's running in parallel:
        // one session more than this test counts (CI saw 3 summaries twice, the second time
        // with the second pty made before the first went, which only kept *this* test off N).
        let second = try PtyPeer()
        defer { withExtendedLifetime(second) {} }
        try FileManager.default.removeItem(atPath: link)
        first.unplug()
        #expect(await watch.wait { events in events.contains { $0["event"] as? String == "unplugged" } })
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: second.path)
        // The new pty's own `opened` (its path), not just a second one.
        let secondPath = second.path
        #expect(await watch.wait { events in events.contains { $0["event"] as? String == "opened" && $0["path"] as? String == secondPath } })
        second.send("{\"steps\":71,\"seq\":4}\n")
        #expect(await watch.wait(until: lineSeen("{\"steps\":71,\"seq\":4}")),
                "holders: \(processesHolding(secondPath)); events: \(watch.all.map { "\($0)" }.joined(separator: " | "))")
        watch.process.terminate()
        #expect(await watch.finish() == 0)
        let stored = try storedSteps(db)
        #expect(stored == 21, "stored \(stored); events: \(watch.all.map { "\($0)" }.joined(separator: " | "))")
        #expect(watch.count("summary") == 2, "events: \(watch.all.map { "\($0)" }.joined(separator: " | "))")
    }

    @Test(.enabled(if: WatchCommandTests.binary != nil))
    func missingDeviceExitsUnavailable() async throws {
        let watch = try Watch(["/dev/healthgate-missing-tty", "--no-store"])
        #expect(await watch.finish() == 69)
    }
}
