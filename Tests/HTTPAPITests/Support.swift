import Foundation
import HealthGateTesting
import HealthModel
import HealthStore

/// A fresh temporary directory holding a store file, removed when the value is dropped.
final class TempStore: @unchecked Sendable {
    let dir: URL
    let path: String

    init() {
        dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("httpapi-tests-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        path = dir.appendingPathComponent("health.sqlite").path
    }

    /// Opens (another connection to) the store, creating it when missing.
    func open() throws -> HealthStore { try HealthStore(path: path) }

    deinit { try? FileManager.default.removeItem(at: dir) }
}

/// Runs the built `healthgate` binary as a child, waiting off the cooperative pool.
enum CLI {
    static func run(_ args: [String], stdin: Data? = nil) async throws -> HealthGateExecutable.Result {
        try await offThread { try HealthGateExecutable.run(args, stdin: stdin) }
    }
}

/// Parses one JSON value printed on stdout.
func json(_ text: String) -> Any? { try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) }

/// 2026-11-02T00:00:00Z plus `seconds`.
func at(_ seconds: Double) -> Date { Date(timeIntervalSince1970: 1_793_577_600 + seconds) }

let watchSource = Source(name: "Watch", identifier: "com.example.watch")

/// A heart-rate reading at `seconds` past the test epoch.
func heartRate(_ bpm: Double, at seconds: Double) throws -> QuantitySample {
    try QuantitySample(uuid: UUID.timeOrdered(), type: .heartRate, quantity: Quantity(bpm, .countPerMinute),
                       start: at(seconds), end: at(seconds), source: watchSource)
}

/// Steps over one minute from `seconds`.
func steps(_ n: Double, at seconds: Double) throws -> QuantitySample {
    try QuantitySample(uuid: UUID.timeOrdered(), type: .stepCount, quantity: Quantity(n, .count),
                       start: at(seconds), end: at(seconds + 60), source: watchSource)
}

/// A running `healthgate serve` child on a free loopback port, and curl requests to it.
final class ServeProcess: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var errText = ""
    private var reader: Thread?
    /// `http://127.0.0.1:PORT`.
    private(set) var base = ""

    /// Starts `healthgate serve --db path --listen 127.0.0.1:0 extra…` and waits (off the pool)
    /// for its "listening on" line, at most 60 s.
    static func start(db: String, _ extra: [String] = []) async throws -> ServeProcess {
        let s = ServeProcess()
        try s.launch(["serve", "--db", db, "--listen", "127.0.0.1:0"] + extra)
        let ok = await offThread { s.waitForListening(deadline: Date().addingTimeInterval(60)) }
        if !ok {
            s.stop()
            throw ServeFailed(stderr: s.stderr)
        }
        return s
    }

    struct ServeFailed: Error, CustomStringConvertible {
        let stderr: String
        var description: String { "healthgate serve did not start listening: \(stderr)" }
    }

    private func launch(_ args: [String]) throws {
        guard let url = HealthGateExecutable.url else { throw ServeFailed(stderr: "the healthgate executable is not built: run swift build first") }
        process.executableURL = url
        process.arguments = args
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        reader = readToEndOnThread(err.fileHandleForReading) { [self] d in
            lock.lock(); errText += String(decoding: d, as: UTF8.self); lock.unlock()
        }
    }

    var stderr: String { lock.lock(); defer { lock.unlock() }; return errText }

    private func waitForListening(deadline: Date) -> Bool {
        while Date() < deadline, process.isRunning {
            if let r = stderr.range(of: "listening on http://") ?? stderr.range(of: "listening on https://") {
                let rest = stderr[r.lowerBound...].dropFirst("listening on ".count)
                if let end = rest.firstIndex(where: { $0 == " " || $0 == "\n" }) {
                    base = String(rest[..<end])   // http://HOST:PORT or https://HOST:PORT
                    return true
                }
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }

    /// Sends SIGTERM and waits (bounded, 30 s; then SIGKILL) for the exit; returns the status.
    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }

    /// Waits (bounded) until the server has *accepted* a TCP connection that is still open: an
    /// established socket on its port in `/proc/net/tcp{,6}` whose inode is one of the server's
    /// descriptors (a connection still in the listen backlog belongs to no process, and closing
    /// the listener would reset it). For tests that signal the server mid-request.
    func waitForAcceptedConnection(deadline: Date) -> Bool {
        guard let port = base.split(separator: ":").last.flatMap({ Int($0) }) else { return false }
        let pid = process.processIdentifier
        while Date() < deadline, process.isRunning {
            var established = Set<String>()
            for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
                // Read to the end: a procfs file says its size is 0, and more than a page of
                // sockets (a full run's) came back cut short through String(contentsOfFile:).
                guard let data = FileHandle(forReadingAtPath: table).map({ h in defer { try? h.close() }; return h.readDataToEndOfFile() })
                else { continue }
                let text = String(decoding: data, as: UTF8.self)
                for line in text.split(separator: "\n").dropFirst() {
                    let f = line.split(separator: " ")
                    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
                    guard f.count > 9, f[3] == "01", let colon = f[1].lastIndex(of: ":"),
                          Int(f[1][f[1].index(after: colon)...], radix: 16) == port else { continue }
                    established.insert(String(f[9]))
                }
            }
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            for fd in fds {
                if let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                   link.hasPrefix("socket:["), established.contains(String(link.dropFirst(8).dropLast())) { return true }
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }

    /// One HTTP exchange.
    struct Reply: Sendable {
        let status: Int
        let body: String
        var json: Any? { HTTPAPITests.json(body) }
        var object: [String: Any]? { json as? [String: Any] }
        var array: [[String: Any]]? { json as? [[String: Any]] }
        var error: String { object?["error"] as? String ?? "" }
    }

    /// `curl` against the server: `method path` with an optional bearer token and body.
    func request(_ method: String = "GET", _ path: String, token: String? = nil, body: Data? = nil,
                 headers: [String] = [], curlOptions: [String] = []) async throws -> Reply {
        try await offThread { [self] in
            try requestBlocking(method, path, token: token, body: body, headers: headers, curlOptions: curlOptions)
        }
    }

    /// ``request(_:_:token:body:headers:curlOptions:)`` on the calling thread (it blocks until
    /// curl exits): for a test that must know curl was started, whatever the cooperative pool does.
    func requestBlocking(_ method: String = "GET", _ path: String, token: String? = nil, body: Data? = nil,
                         headers: [String] = [], curlOptions: [String] = []) throws -> Reply {
        var args = ["-s", "-S", "-X", method, "-o", "-", "-w", "\n%{http_code}", "--max-time", "60"] + curlOptions
        if let token { args += ["-H", "Authorization: Bearer \(token)"] }
        for h in headers { args += ["-H", h] }
        if body != nil { args += ["-H", "Content-Type: application/json", "--data-binary", "@-"] }
        args.append(base + path)
        let r = try HealthGateExecutable.run(args, stdin: body, timeout: .seconds(90), launcher: URL(fileURLWithPath: "/usr/bin/curl"))
        guard let nl = r.stdout.lastIndex(of: "\n"), let code = Int(r.stdout[r.stdout.index(after: nl)...]) else {
            return Reply(status: -1, body: r.stdout + r.stderr)
        }
        // No answer (curl's 000): what curl said instead.
        return Reply(status: code, body: String(r.stdout[..<nl]) + (code == 0 ? r.stderr : ""))
    }

    func get(_ path: String, token: String?) async throws -> Reply { try await request("GET", path, token: token) }
}

/// Creates a token in the store at `db` through the CLI and returns its secret.
func makeToken(_ db: String, _ args: [String]) async throws -> String {
    let r = try await CLI.run(["token", "create", "--db", db] + args)
    guard r.status == 0 else { throw TokenFailed(stderr: r.stderr) }
    return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}

struct TokenFailed: Error { let stderr: String }
