import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

/// A fresh temporary directory holding a store file, removed when the value is dropped.
final class TempDB {
    let dir: URL
    let path: String

    init() {
        dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("changefeed-tests-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        path = dir.appendingPathComponent("health.sqlite").path
    }

    /// Opens (another connection to) the store.
    func open() throws -> HealthStore { try HealthStore(path: path) }

    deinit { try? FileManager.default.removeItem(at: dir) }
}

/// 2026-11-02T00:00:00Z plus `seconds`.
func at(_ seconds: Double) -> Date { Date(timeIntervalSince1970: 1_793_577_600 + seconds) }

let watchSource = Source(name: "Watch", identifier: "com.example.watch")

/// A heart-rate sample at `seconds` past the test epoch.
func heartRate(_ bpm: Double, at seconds: Double, metadata: Metadata = Metadata(),
               uuid: UUID = UUID.timeOrdered()) throws -> QuantitySample {
    try QuantitySample(uuid: uuid, type: .heartRate, quantity: Quantity(bpm, .countPerMinute),
                       start: at(seconds), end: at(seconds), source: watchSource, metadata: metadata)
}

/// A step-count sample over one minute starting at `seconds`.
func steps(_ n: Double, at seconds: Double, uuid: UUID = UUID.timeOrdered()) throws -> QuantitySample {
    try QuantitySample(uuid: uuid, type: .stepCount, quantity: Quantity(n, .count),
                       start: at(seconds), end: at(seconds + 60), source: watchSource)
}

/// A client's copy of the store, kept up to date by applying change sets in order.
struct Replica {
    var samples: [UUID: QuantitySample] = [:]
    var anchor: ChangeAnchor?

    mutating func apply(_ c: ChangeSet) {
        for d in c.deleted { samples[d.uuid] = nil }
        for s in c.samples { samples[s.uuid] = s }
        anchor = c.anchor
    }
}

/// Runs the built `healthgate` binary (next to the test bundle) as a child process.
enum CLI {
    static var binary: URL { HealthGateExecutable.url ?? URL(fileURLWithPath: "/nonexistent/healthgate") }

    typealias Result = HealthGateExecutable.Result

    /// Runs `healthgate args…` to completion, waiting on a plain thread (never on one of the
    /// cooperative pool's two threads, which every suite shares).
    static func run(_ args: [String], stdin: Data? = nil) async throws -> Result {
        try await offThread { try HealthGateExecutable.run(args, stdin: stdin) }
    }
}

/// A long-running child (`healthgate watch …`) whose output is collected line by line.
final class Child: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var outBuffer = Data()
    private var errBuffer = Data()
    private var lines: [String] = []
    private var readers: [Thread] = []

    /// Starts `executable` (the built `healthgate` unless given) with `args`.
    init(_ args: [String], executable: URL = CLI.binary) throws {
        process.executableURL = executable
        process.arguments = args
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        readers = [readToEndOnThread(out.fileHandleForReading) { [self] in received($0, isOut: true) },
                   readToEndOnThread(err.fileHandleForReading) { [self] in received($0, isOut: false) }]
    }

    private func received(_ d: Data, isOut: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if isOut {
            outBuffer.append(d)
            while let nl = outBuffer.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: outBuffer[outBuffer.startIndex..<nl], as: UTF8.self))
                outBuffer.removeSubrange(outBuffer.startIndex...nl)
            }
        } else {
            errBuffer.append(d)
        }
    }

    /// Complete stdout lines so far.
    var outputLines: [String] { lock.lock(); defer { lock.unlock() }; return lines }
    /// Stderr so far.
    var stderr: String { lock.lock(); defer { lock.unlock() }; return String(decoding: errBuffer, as: UTF8.self) }

    /// Polls `condition` every 20 ms until it holds or `seconds` pass (a generous deadline
    /// for "eventually", never a latency assertion). Returns whether it held. Sleeps with
    /// `Task.sleep`, so no thread is held while waiting.
    @discardableResult
    func waitUntil(seconds: Double = 60, _ condition: ([String]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(outputLines) { return true }
            if !process.isRunning { return condition(outputLines) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(outputLines)
    }

    /// Waits (generously) until stderr contains `text`.
    @discardableResult
    func waitForStderr(_ text: String, seconds: Double = 60) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if stderr.contains(text) { return true }
            if !process.isRunning { return stderr.contains(text) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        // Looked at once more: a task resumed only after the deadline (a starved pool on a
        // loaded machine) must not miss what arrived while it slept.
        return stderr.contains(text)
    }

    /// Stops the child (SIGTERM) and waits for it on a plain thread, with a bound: a child still
    /// running 20 s after SIGTERM is killed (SIGKILL) and the test fails, instead of hanging.
    func stop() async {
        let p = process
        let ignoredTerm = await offThread { () -> Bool in
            if p.isRunning { p.terminate() }
            let deadline = Date().addingTimeInterval(20)
            while p.isRunning && Date() < deadline { usleep(20_000) }
            guard p.isRunning else { return false }
            kill(p.processIdentifier, SIGKILL)
            while p.isRunning { usleep(20_000) }
            return true
        }
        if ignoredTerm { Issue.record("healthgate \(p.arguments ?? []) did not stop within 20 s of SIGTERM") }
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// Parses one JSON line into an object.
func jsonObject(_ line: String) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
}

