#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A system call that failed, with its `errno`.
package struct SystemCallError: Error, CustomStringConvertible, Equatable {
    /// The call (`pipe`, `poll`, …).
    package var call: String
    /// What the kernel said.
    package var errno: Int32

    /// The failure of `call` with `errno`.
    package init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// `call: strerror(errno)`.
    package var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// The few system-call patterns every blocking loop of the transports repeats: retrying a call
/// a signal interrupted, `poll(2)` with a deadline, descriptor flags.
package enum SystemCall {
    /// Calls `call` again while it fails with `EINTR` (a signal arrived before anything was done);
    /// returns its first other result, with `errno` as the call left it.
    package static func retrying<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let r = call()
            if r == -1 && errno == EINTR { continue }
            return r
        }
    }

    /// `poll(2)` on `fds` for up to `timeout` seconds (nil: until one is ready), retried with the
    /// time left when a signal interrupts it. Each `revents` is cleared first.
    /// - Returns: how many descriptors are ready (0: the time is up), or -1 with `errno` set
    ///   (never `EINTR`).
    package static func poll(_ fds: inout [pollfd], timeout: Double? = nil) -> Int32 {
        let deadline = timeout.map { monotonicSeconds() + max(0, $0) }
        for i in fds.indices { fds[i].revents = 0 }
        while true {
            var ms: Int32 = -1
            if let deadline {
                let left = deadline - monotonicSeconds()
                // Rounded up, so a wait never ends a moment before its deadline.
                ms = left <= 0 ? 0 : Int32(min(left * 1000, Double(Int32.max - 1)).rounded(.up))
            }
            let n = Glibc.poll(&fds, nfds_t(fds.count), ms)
            if n < 0 && errno == EINTR { continue }
            return n
        }
    }

    /// Names the calling thread for `ps -L`, `top -H` and debuggers (the kernel keeps 15 bytes).
    /// Foundation's `Thread.name` does not reach the kernel on Linux: a new thread keeps the
    /// name of the thread that made it (often a dispatch worker's, `…root.default-qos`).
    package static func nameThisThread(_ name: String) {
        // pthread_setname_np and prctl are not importable (a GNU extension, a variadic call);
        // the calling thread's comm file is what both write.
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// Marks `fd` close-on-exec: no child process inherits it.
    package static func setCloseOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
    }

    /// Turns `O_NONBLOCK` on or off for `fd`; returns the flags it had, for putting them back.
    @discardableResult
    package static func setNonBlocking(_ fd: Int32, _ on: Bool) -> Int32 {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK)
        return flags
    }

    /// Sets `fd`'s file status flags back to `flags` (from ``setNonBlocking(_:_:)``).
    package static func setFlags(_ fd: Int32, _ flags: Int32) {
        _ = fcntl(fd, F_SETFL, flags)
    }

    /// Seconds on the monotonic clock (deadlines that a wall-clock change cannot move).
    package static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
