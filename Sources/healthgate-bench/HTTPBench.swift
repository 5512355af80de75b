import ChildProcess
import Foundation
import Platform
import HealthModel
import HealthStore
import Simulators
import Sysexits
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The `http` part of `healthgate-bench` (issue 13): `healthgate run` ingesting 10 simulated
/// straps at 1 Hz and serving its `[http]` API, measured twice in the same run —
///
/// 1. the baseline: a steady stream of `/v1/statistics` requests (20 a second, one keep-alive
///    connection; today's heart rate per minute) and nothing else;
/// 2. the same stream while 200 `/v1/live` clients (Server-Sent Events) follow every commit.
///
/// It prints each phase's request latency (p50, p99) and the daemon's CPU (user + system time
/// per wall second, % of one core: the added CPU is the difference), how many live events each
/// client received, and whether any sample was lost: the pipeline's `dropped` counter (from
/// `/metrics`) and the notifications the simulator sent against the samples the store holds.
extension Bench {
    struct HTTPFigures {
        var baselineP50Ms = 0.0, baselineP99Ms = 0.0, baselineCPU = 0.0, baselineRequests = 0
        var liveP50Ms = 0.0, liveP99Ms = 0.0, liveCPU = 0.0, liveRequests = 0
        var clients = 0, minEvents = 0, maxEvents = 0, committedDuringLive = 0
        var dropped = 0, overflows = 0, sent = 0, stored = 0
    }

    /// Runs both phases, `seconds` each, with `clients` live clients in the second.
    static func http(seconds: Int, clients: Int, path: String, work: String, healthgate: URL,
                     progress: (String) -> Void = { _ in }) throws -> HTTPFigures {
        var f = HTTPFigures()
        let token = try makeBenchToken(healthgate: healthgate, db: path)
        let load = try SimulatedLoad(directory: work + "/http-sim", straps: 10, rate: 1, pedometers: 0)
        defer { load.stop() }
        let config = work + "/http-sim.toml"
        try (load.configuration(flushIntervalMs: 250) + "\n[http]\nlisten = \"127.0.0.1:0\"\n")
            .write(toFile: config, atomically: true, encoding: .utf8)
        let log = work + "/http-run.log"
        let child = try WatchedChild([healthgate.path, "run", "--config", config, "--db", path], removing: ["NOTIFY_SOCKET"], stderr: .file(log))
        defer { child.kill() }
        load.start()
        let ready = ContinuousClock.now + .seconds(120)
        var port: UInt16?
        while load.subscribedStraps < 10 || port == nil {
            guard try child.poll() else { throw CLIFailure("the http part's `healthgate run` exited early (status \(child.exitStatus ?? -1)); its log: \(log).", code: .software) }
            guard ContinuousClock.now < ready else {
                throw CLIFailure("the http part's `healthgate run` did not serve with 10 subscribed straps within 120 s (\(load.subscribedStraps) subscribed); its log: \(log).", code: .tempFail)
            }
            if port == nil, let text = try? String(contentsOfFile: log, encoding: .utf8),
               let r = text.range(of: "serving the HTTP API on http://127.0.0.1:") {
                port = UInt16(text[r.upperBound...].prefix { $0.isNumber })
            }
            usleep(100_000)
        }
        let api = HTTPConnection.Target(port: port!, token: token)
        progress("  (serving on 127.0.0.1:\(port!), 10 straps subscribed; baseline)")

        // 1. Baseline: the request stream alone.
        (f.baselineP50Ms, f.baselineP99Ms, f.baselineCPU, f.baselineRequests) = try requestStream(api, seconds: seconds, child: child)

        // 2. The same with the live clients attached.
        progress("  (attaching \(clients) live clients)")
        let followers = try LiveFollowers(api, count: clients)
        defer { followers.close() }
        guard followers.waitAllStreaming(timeout: 60) else {
            throw CLIFailure("only \(followers.streaming) of \(clients) /v1/live clients got their stream within 60 s.", code: .tempFail)
        }
        progress("  (\(clients) streams open; measuring)")
        followers.resetCounts()
        let before = try heartRateCount(path)
        (f.liveP50Ms, f.liveP99Ms, f.liveCPU, f.liveRequests) = try requestStream(api, seconds: seconds, child: child)
        f.committedDuringLive = try heartRateCount(path) - before
        // The last commits' events reach every client (at most 5 s more).
        let settle = ContinuousClock.now + .seconds(5)
        while followers.eventRange().0 < f.committedDuringLive, ContinuousClock.now < settle { usleep(100_000) }
        (f.minEvents, f.maxEvents) = followers.eventRange()
        f.clients = clients
        let metrics = try HTTPConnection(api).get("/metrics").body
        f.dropped = metric(metrics, "healthgate_ingest_dropped_total")
        f.overflows = metric(metrics, "healthgate_http_live_overflows_total")
        followers.close()

        // Nothing lost: every notification sent is a stored sample once the daemon has stopped.
        load.stop()
        usleep(500_000)
        f.sent = load.totalSent
        child.signal(SIGTERM)
        _ = try child.wait(timeout: 60)
        f.stored = try heartRateCount(path)
        return f
    }

    private static func makeBenchToken(healthgate: URL, db: String) throws -> String {
        let p = Process()
        p.executableURL = healthgate
        p.arguments = ["token", "create", "--db", db, "--name", "bench", "--read", "all", "--admin"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice   // its "keep the line above secret" notice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw CLIFailure("`healthgate token create` failed (status \(p.terminationStatus)).", code: .software) }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func heartRateCount(_ path: String) throws -> Int {
        try HealthStore(path: path, mode: .readOnly).count(SampleQuery(type: .heartRate))
    }

    private static func metric(_ text: String, _ name: String) -> Int {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Int(Double(line.split(separator: " ").last ?? "") ?? -1)
        }
        return -1
    }

    /// 20 statistics requests a second for `seconds` on one keep-alive connection: latency
    /// percentiles (ms), the daemon's CPU (% of one core) over the phase, and the request count.
    private static func requestStream(_ api: HTTPConnection.Target, seconds: Int, child: WatchedChild) throws -> (Double, Double, Double, Int) {
        let connection = try HTTPConnection(api)
        var latencies: [Double] = []
        let c0 = child.cpuSeconds() ?? 0
        let t0 = ContinuousClock.now
        let end = t0 + .seconds(seconds)
        var next = t0
        while ContinuousClock.now < end {
            let from = ISO8601.string(Date().addingTimeInterval(-3_600))
            let start = ContinuousClock.now
            let reply = try connection.get("/v1/statistics?type=heartRate&interval=1min&from=\(from)")
            latencies.append(Bench.seconds(start.duration(to: .now)) * 1_000)
            guard reply.status == 200 else { throw CLIFailure("/v1/statistics answered \(reply.status): \(reply.body.prefix(300))", code: .software) }
            next = next + .milliseconds(50)
            let wait = ContinuousClock.now.duration(to: next)
            if wait > .zero { usleep(UInt32(Bench.seconds(wait) * 1e6)) }
        }
        let cpu = ((child.cpuSeconds() ?? c0) - c0) / Bench.seconds(t0.duration(to: .now)) * 100
        let sorted = latencies.sorted()
        return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 99 / 100)], cpu, sorted.count)
    }
}

/// A plain HTTP/1.1 client on one keep-alive TCP connection (loopback): enough for the bench's
/// requests, without a client library's own costs in the figures.
final class HTTPConnection {
    struct Target { var port: UInt16; var token: String }
    struct Reply { var status: Int; var body: String }
    let fd: Int32
    let target: Target

    init(_ target: Target) throws {
        self.target = target
        fd = try Self.connect(port: target.port)
        var limit = timeval(tv_sec: 30, tv_usec: 0)   // an answer slower than 30 s fails the part, saying what had arrived
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    static func connect(port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CLIFailure("socket(): \(String(cString: strerror(errno)))", code: .software) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        let r = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard r == 0 else {
            close(fd)
            throw CLIFailure("connecting to 127.0.0.1:\(port): \(String(cString: strerror(errno)))", code: .unavailable)
        }
        return fd
    }

    func send(_ text: String) throws {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw CLIFailure("sending a request: \(String(cString: strerror(errno)))", code: .ioError) }
            bytes = bytes.dropFirst(n)
        }
    }

    static func request(_ path: String, token: String, extra: String = "") -> String {
        "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\(extra)\r\n"
    }

    /// One GET, its whole answer read (Content-Length or chunked).
    func get(_ path: String) throws -> Reply {
        try send(Self.request(path, token: target.token))
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        func fill() throws {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else {
                let what = n == 0 ? "the server closed the connection" : "no answer within 30 s"
                throw CLIFailure("GET \(path): \(what) after \(data.count) bytes: \(String(decoding: data.prefix(300), as: UTF8.self))", code: .ioError)
            }
            data += buffer[0..<n]
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            try fill()
            headerEnd = data.firstRange(of: separator)?.upperBound
        }
        let head = String(decoding: data[..<headerEnd!], as: UTF8.self).lowercased()
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        var body = Array(data[headerEnd!...])
        if let r = head.range(of: "content-length: ") {
            let length = Int(head[r.upperBound...].prefix { $0.isNumber }) ?? 0
            while body.count < length {
                try fill()
                body = Array(data[headerEnd!...])
            }
            return Reply(status: status, body: String(decoding: body.prefix(length), as: UTF8.self))
        }
        // chunked: until the last chunk "0\r\n\r\n"
        while !body.suffix(5).elementsEqual([48, 13, 10, 13, 10]) {
            try fill()
            body = Array(data[headerEnd!...])
        }
        return Reply(status: status, body: String(decoding: body, as: UTF8.self))
    }
}

/// `count` `/v1/live` clients on raw sockets, read by one thread with poll(2): it counts each
/// client's `event: sample` blocks and never stops reading (a client that cannot keep up would be
/// cut off by the server, which the overflow counter would show).
final class LiveFollowers: @unchecked Sendable {
    private var fds: [Int32] = []
    private let lock = NSLock()
    private var events: [Int]
    private var started: [Bool]
    private var carry: [[UInt8]]
    private var stop = false
    private var thread: Thread?

    init(_ target: HTTPConnection.Target, count: Int) throws {
        events = Array(repeating: 0, count: count)
        started = Array(repeating: false, count: count)
        carry = Array(repeating: [], count: count)
        for _ in 0..<count {
            let fd = try HTTPConnection.connect(port: target.port)
            let request = Array(HTTPConnection.request("/v1/live?type=heartRate", token: target.token).utf8)
            guard request.withUnsafeBytes({ Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
                throw CLIFailure("could not send a /v1/live request", code: .ioError)
            }
            fds.append(fd)
        }
        let t = Thread { [self] in read() }
        thread = t
        t.start()
    }

    private func read() {
        var polls = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let marker = Array("event: sample".utf8)
        while !(lock.withLock { stop }) {
            guard SystemCall.poll(&polls, timeout: 0.2) > 0 else { continue }
            for i in polls.indices where polls[i].revents != 0 {
                let n = buffer.withUnsafeMutableBytes { recv(polls[i].fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 { polls[i].fd = -1; continue }
                let chunk = carry[i] + buffer[0..<n]
                var found = 0
                var from = chunk.startIndex
                while let r = chunk[from...].firstRange(of: marker) { found += 1; from = r.upperBound }
                carry[i] = Array(chunk.suffix(marker.count - 1))
                lock.withLock {
                    events[i] += found
                    if !started[i], chunk.firstRange(of: Array("retry:".utf8)) != nil { started[i] = true }
                }
            }
        }
    }

    var streaming: Int { lock.withLock { started.filter { $0 }.count } }

    func waitAllStreaming(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if streaming == events.count { return true }
            usleep(100_000)
        }
        return false
    }

    func resetCounts() { lock.withLock { for i in events.indices { events[i] = 0 } } }

    func eventRange() -> (Int, Int) { lock.withLock { (events.min() ?? 0, events.max() ?? 0) } }

    func close() {
        let wasRunning = lock.withLock { () -> Bool in
            defer { stop = true }
            return !stop
        }
        guard wasRunning else { return }
        while thread?.isFinished == false { usleep(10_000) }
        for fd in fds { Glibc.close(fd) }
    }
}

extension HealthGateBench {
    /// The `http` part: ``Bench/http(seconds:clients:path:work:healthgate:)`` printed.
    func httpPart(into out: inout [String: Any], dir: String, say: (String) -> Void) throws {
        let daemon = try healthgateExecutable()
        let seconds = 20, clients = 200
        say("== http (healthgate run: 10 simulated straps at 1 Hz over Unix sockets, [http] on loopback; 20 /v1/statistics a second, \(seconds) s without and \(seconds) s with \(clients) /v1/live clients)")
        let f = try Bench.http(seconds: seconds, clients: clients, path: dir + "/http.sqlite", work: dir, healthgate: daemon, progress: say)
        say(String(format: "  statistics requests alone        p50 %.1f ms, p99 %.1f ms (%d requests), daemon CPU %.1f%% of one core",
                   f.baselineP50Ms, f.baselineP99Ms, f.baselineRequests, f.baselineCPU))
        say(String(format: "  with %d live clients            p50 %.1f ms, p99 %.1f ms (%d requests), daemon CPU %.1f%% of one core",
                   f.clients, f.liveP50Ms, f.liveP99Ms, f.liveRequests, f.liveCPU))
        say(String(format: "  ratio p99 %.2fx; CPU added by the live clients %.1f points", f.liveP99Ms / max(f.baselineP99Ms, 0.001), f.liveCPU - f.baselineCPU))
        say("  live events per client           \(f.minEvents)…\(f.maxEvents) (heart-rate samples committed meanwhile: \(f.committedDuringLive)); streams cut off: \(f.overflows)")
        say("  samples dropped                  \(f.dropped) (pipeline counter); notifications sent \(f.sent), heart-rate samples stored \(f.stored)")
        out["httpBaselineP99Ms"] = f.baselineP99Ms
        out["httpLiveP99Ms"] = f.liveP99Ms
        out["httpBaselineCPUPercent"] = f.baselineCPU
        out["httpLiveCPUPercent"] = f.liveCPU
        out["httpLiveClients"] = f.clients
        out["httpLiveMinEvents"] = f.minEvents
        out["httpDropped"] = f.dropped
        out["httpSent"] = f.sent
        out["httpStored"] = f.stored
    }
}
