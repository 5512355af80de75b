import Foundation
import HealthGateTesting
import Synchronization
#if canImport(Glibc)
@preconcurrency import Glibc
import Locking
#endif

/// The built `healthgate` executable (HealthGateTesting finds it beside the test bundle).
func healthgateBinary() -> String {
    HealthGateExecutable.url?.path ?? "healthgate-not-built"
}

/// A `healthgate` child process with its stdout and stderr collected as they arrive.
final class Child: @unchecked Sendable {
    let process = Process()
    private let out = Buffer()
    private let err = Buffer()

    final class Buffer: Sendable {
        let data = Lock(Data())
        func append(_ d: Data) { data.withLock { $0.append(d) } }
        var text: String { String(decoding: data.withLock { $0 }, as: UTF8.self) }
    }

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: healthgateBinary())
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "HEALTHGATE_DB")
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let o = Pipe(), e = Pipe()
        process.standardOutput = o
        process.standardError = e
        try process.run()
        for (pipe, buffer) in [(o, out), (e, err)] {
            readToEndOnThread(pipe.fileHandleForReading) { buffer.append($0) }
        }
    }

    var stdout: String { out.text }
    var stderr: String { err.text }

    func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

    /// Waits for exit and returns the status (128+signal when killed by one). A child still
    /// running after `seconds` (a hang: nothing here takes that long) is killed with SIGKILL and
    /// the status says so (137), so a broken test fails instead of hanging CI. Polls: Foundation's
    /// `waitUntilExit` spins a core off the main thread.
    func wait(seconds: Double = 120) -> Int32 {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while process.isRunning && ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning {
            err.append(Data("\n[test: still running after \(seconds) s; killed with SIGKILL]\n".utf8))
            kill(process.processIdentifier, SIGKILL)
            while process.isRunning { usleep(20_000) }
        }
        usleep(100_000)   // let the pipes' last bytes arrive
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }
}

/// Rows and integrity of a database file, read through the sqlite3 CLI-free store API.
func tempDBPath(_ tag: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("hg-\(tag)-\(UUID().uuidString)/health.sqlite").path
}
