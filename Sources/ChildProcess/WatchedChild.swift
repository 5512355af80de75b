import Platform
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A child process started with `posix_spawnp` and watched until it exits: its exit status,
/// its wall time and its peak memory — the most anonymous resident memory (`RssAnon` of
/// `/proc/PID/status`: heap, stacks, SQLite's cache) seen while polling it.
///
/// Why this measure and not the others: wait4's `ru_maxrss` of a posix_spawn child starts at the
/// parent's own peak (the parent's memory is shared until exec, and Linux carries that
/// high-water mark over), so every child of a big parent "peaks" at the parent's size; `VmHWM`
/// counts file pages too, and a debug binary hot in the page cache maps ~100 MB of its own text
/// by fault-around. `RssAnon` is what the child itself allocated.
///
/// One job, shared by the benchmark (`healthgate-bench`, an executable that must not link the
/// test helpers) and the tests. Not thread-safe: one thread starts, polls and waits.
package final class WatchedChild {
    /// Where one of the child's standard streams goes.
    package enum Stream {
        /// `/dev/null`.
        case null
        /// A file, created or truncated (mode 0600).
        case file(String)
        /// A descriptor of this process, duplicated onto the stream.
        case descriptor(Int32)
    }

    /// A child that could not be started or waited for.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// The child's process id.
    package let pid: pid_t
    /// What it was started with (for messages).
    package let arguments: [String]
    private let started: timespec
    /// The largest `RssAnon` seen so far, in bytes.
    package private(set) var peakAnonymousBytes = 0
    /// The exit status once it has exited: its exit code, or 128 + the signal that ended it.
    package private(set) var exitStatus: Int32?
    /// Wall seconds from start to the poll that saw it exit.
    package private(set) var seconds = 0.0

    /// Starts `arguments[0]` (searched in `PATH`) with `arguments`, this process's environment
    /// with `environment` merged over it and the variables in `removing` taken out, and the
    /// given streams.
    /// - Throws: ``Failure`` when it cannot be started.
    package init(_ arguments: [String], environment: [String: String] = [:], removing: [String] = [],
                 stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null) throws {
        precondition(!arguments.isEmpty, "WatchedChild needs a program")
        self.arguments = arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path): posix_spawn_file_actions_addopen(&actions, fd, path, fd == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            case .descriptor(let own): posix_spawn_file_actions_adddup2(&actions, own, fd)
            }
        }
        // Nothing else of this process reaches the child. Descriptors without O_CLOEXEC (the
        // pipes Foundation's Process opens for another child at the same moment, on another
        // thread) would otherwise be inherited: a PostgreSQL server started this way kept a
        // concurrent curl's output pipe open for its whole life, and the test reading that
        // pipe waited for an end of file that never came.
        if let closeFrom = Self.addCloseFrom {
            _ = closeFrom(&actions, 3)
        } else {
            // Without glibc's closefrom action (before 2.34): every descriptor open now.
            if let dir = opendir("/proc/self/fd") {
                var open: [Int32] = []
                while let entry = readdir(dir) {
                    let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                    if let fd = Int32(name), fd > 2, fd != dirfd(dir) { open.append(fd) }
                }
                closedir(dir)
                for fd in open { posix_spawn_file_actions_addclose(&actions, fd) }
            }
        }
        var env: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") { env[String(text[..<eq])] = String(text[text.index(after: eq)...]) }
            p += 1
        }
        env.merge(environment) { $1 }
        for key in removing { env[key] = nil }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        started = now
        // A child starts with every signal at its default action and none blocked: dispositions
        // set to "ignore" and the spawning thread's mask are inherited otherwise, and a test
        // runner that ignores SIGTERM (as `run`'s signal trap does) made its children unstoppable.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let rc = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard rc == 0 else { throw Failure(description: "cannot start \(arguments[0]): \(String(cString: strerror(rc)))") }
        self.pid = pid
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which the Swift
    /// Glibc module does not show: looked up at run time.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32).self)
    }()

    /// Whether it is still running: reads its `RssAnon` into the peak, then reaps it if it
    /// has exited (never blocks).
    @discardableResult
    package func poll() throws -> Bool {
        guard exitStatus == nil else { return false }
        if let anon = Self.anonymousBytes(of: pid) { peakAnonymousBytes = max(peakAnonymousBytes, anon) }
        var status: Int32 = 0
        let r = SystemCall.retrying { waitpid(pid, &status, WNOHANG) }
        if r == pid {
            exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            seconds = Double(now.tv_sec - started.tv_sec) + Double(now.tv_nsec - started.tv_nsec) / 1e9
            return false
        }
        if r < 0 { throw Failure(description: "waiting for \(arguments[0]) failed: \(String(cString: strerror(errno)))") }
        return true
    }

    /// Polls every `interval` milliseconds until it exits; after `timeout` seconds it is killed
    /// (SIGKILL), reaped, and ``Failure`` thrown. Returns its exit status.
    @discardableResult
    package func wait(timeout: Double, interval: Int = 5) throws -> Int32 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let deadline = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 + timeout
        while try poll() {
            clock_gettime(CLOCK_MONOTONIC, &now)
            if Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 > deadline {
                kill()
                throw Failure(description: "\(arguments.joined(separator: " ")) did not end within \(Int(timeout)) s and was killed")
            }
            usleep(UInt32(interval * 1000))
        }
        return exitStatus!
    }

    /// Sends `signal` while it runs (SIGTERM by default).
    package func signal(_ signal: Int32 = SIGTERM) {
        if exitStatus == nil { Glibc.kill(pid, signal) }
    }

    /// Kills it (SIGKILL) and reaps it, if it still runs.
    package func kill() {
        guard exitStatus == nil else { return }
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        exitStatus = 128 + SIGKILL
    }

    /// User + system CPU seconds it has used so far (`/proc/PID/stat`); nil once it is gone.
    package func cpuSeconds() -> Double? {
        guard let text = Self.read("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else { return nil }
        return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    deinit { kill() }

    /// `RssAnon` of a running process in bytes; nil once it has exited (or on a kernel without it).
    package static func anonymousBytes(of pid: pid_t) -> Int? {
        guard let text = read("/proc/\(pid)/status"), let range = text.firstRange(of: "\nRssAnon:") else { return nil }
        let digits = text[range.upperBound...].drop { $0 == " " || $0 == "\t" }.prefix { $0.isNumber }
        return Int(digits).map { $0 * 1024 }
    }

    /// A small /proc file's text (one read; these are under a page).
    private static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 8192)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self)
    }
}

extension WatchedChild {
    /// What ``run(_:environment:timeout:)`` saw.
    package struct Outcome {
        /// Exit code, or 128 + the signal that ended it.
        package var status: Int32
        /// Wall seconds.
        package var seconds: Double
        /// Peak `RssAnon`, bytes.
        package var peakAnonymousBytes: Int
    }

    /// Runs `arguments` to its end (stdin and stdout `/dev/null`, stderr as given), polled for
    /// its peak memory, killed after `timeout` seconds.
    /// - Throws: ``Failure`` when it cannot be started or does not end in time.
    package static func run(_ arguments: [String], environment: [String: String] = [:], stderr: Stream = .null,
                            timeout: Double) throws -> Outcome {
        let child = try WatchedChild(arguments, environment: environment, stderr: stderr)
        let status = try child.wait(timeout: timeout)
        return Outcome(status: status, seconds: child.seconds, peakAnonymousBytes: child.peakAnonymousBytes)
    }
}
