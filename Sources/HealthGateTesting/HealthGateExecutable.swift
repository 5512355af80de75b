import Foundation
import Synchronization
#if canImport(Glibc)
@preconcurrency import Glibc
import Locking
#endif

/// The built `healthgate` executable (or another of the package's executables, such as
/// `healthgate-bench`), for tests that run the real command line as a child process, and a way
/// to run it to completion.
package enum HealthGateExecutable {
    /// The `healthgate` built beside the running test bundle (`.build/<triple>/debug/`), else
    /// `.build/debug/healthgate` in this package; nil when neither exists (build it first).
    package static var url: URL? { url(named: "healthgate") }

    /// The package's executable `name`, found as ``url`` finds `healthgate`.
    package static func url(named name: String) -> URL? {
        let candidates = [
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
                .appendingPathComponent(name),
            Bundle.main.bundleURL.appendingPathComponent(name),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(".build/debug/" + name),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// What a finished run left behind.
    package struct Result: Sendable {
        /// The exit status (for a child killed by a signal: the signal number, as `Process` reports it).
        package var status: Int32
        /// Everything written to stdout.
        package var stdout: String
        /// Everything written to stderr.
        package var stderr: String
    }

    /// The executable is missing.
    package struct NotBuilt: Error, CustomStringConvertible {
        /// The executable's name.
        package var name = "healthgate"
        package var description: String { "the \(name) executable is not built: run `swift build` first" }
    }

    /// Runs `healthgate arguments…` (or the package's executable `executable`) to completion: stdin from `stdin` (or /dev/null, never a
    /// terminal), the environment of this process with `environment` added and `removing`
    /// removed, both output pipes read at once so a chatty child never blocks on a full pipe.
    /// Blocks the calling thread; from async tests call it off the cooperative pool. A child
    /// still running after `timeout` is killed with SIGKILL (status 9, and stderr says so), so a
    /// hanging command fails its test instead of hanging the run.
    /// `launcher` runs another program instead, with `arguments` (a wrapper such as `setpriv … healthgate`).
    package static func run(_ arguments: [String], environment: [String: String] = [:], removing: [String] = [],
                           stdin: Data? = nil, timeout: Duration = .seconds(300),
                           executable: String = "healthgate", launcher: URL? = nil) throws -> Result {
        guard let url = launcher ?? url(named: executable) else { throw NotBuilt(name: executable) }
        let p = Process()
        p.executableURL = url
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for k in removing { env.removeValue(forKey: k) }
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        let input = stdin.map { _ in Pipe() }
        p.standardInput = input ?? FileHandle.nullDevice
        try p.run()
        if let input, let stdin {
            input.fileHandleForWriting.write(stdin)
            try input.fileHandleForWriting.close()
        }
        let pid = p.processIdentifier
        let killedForTime = KillSwitch()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(timeout / .milliseconds(1)))) {
            killedForTime.fire(pid)
        }
        let errData = ErrBox()
        let reader = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
        reader.start()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let killed = killedForTime.disarm()   // before the pid can be reused
        let e = errData.wait()
        return Result(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                      stderr: String(decoding: e, as: UTF8.self)
                          + (killed ? "\n[test: still running after \(timeout); killed with SIGKILL]\n" : ""))
    }

    /// Kills the child once, unless the run ended first.
    private final class KillSwitch: Sendable {
        private let state = Lock<(armed: Bool, fired: Bool)>((true, false))
        func fire(_ pid: pid_t) {
            let go = state.withLock { s -> Bool in
                guard s.armed else { return false }
                s.fired = true
                return true
            }
            if go { kill(pid, SIGKILL) }
        }
        /// Stops a later `fire`; returns whether it fired already.
        func disarm() -> Bool { state.withLock { s in s.armed = false; return s.fired } }
    }

    private final class ErrBox: @unchecked Sendable {
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)
        func set(_ d: Data) { data = d; done.signal() }
        func wait() -> Data { done.wait(); return data }
    }
}
