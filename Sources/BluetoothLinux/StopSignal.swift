#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A one-shot "stop now" that blocking Bluetooth loops can `poll` on next to their socket:
/// a pipe whose read end becomes readable once ``trigger()`` is called (from any thread,
/// e.g. a SIGINT handler's dispatch source). Used for Ctrl-C: loops return, sockets close.
public final class StopSignal: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    private let fired = Atomic<Bool>(false)

    /// Creates an untriggered signal.
    public init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) != 0 { fds = [-1, -1] }
        for fd in fds where fd >= 0 {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        if readEnd >= 0 { close(readEnd) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    /// The descriptor to poll for `POLLIN`.
    public var fd: Int32 { readEnd }

    /// True once ``trigger()`` was called.
    public var isTriggered: Bool { fired.load(ordering: .acquiring) }

    /// Fires the signal; later calls do nothing.
    public func trigger() {
        guard !fired.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var b: UInt8 = 1
        _ = write(writeEnd, &b, 1)
    }

    /// Sleeps up to `seconds`, returning early (true) when the signal fires.
    @discardableResult
    public func wait(seconds: Double) -> Bool {
        if isTriggered { return true }
        var p = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, Int32(max(0, seconds) * 1000))
        return isTriggered
    }
}
