#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Synchronization

/// A pipe whose read end becomes readable once poked: how one thread wakes another that is
/// blocked in `poll(2)` on its own descriptor (a socket, a tty, a netlink monitor). Both ends are
/// close-on-exec and non-blocking, so a poke never blocks (a full pipe is readable already) and
/// no child process inherits them.
package final class WakePipe: Sendable {
    /// The descriptor to poll for `POLLIN`; -1 when the kernel had no descriptors left (``init()``
    /// never fails, so a loop that cannot be woken still runs; ``make()`` says why instead).
    package let readEnd: Int32
    private let writeEnd: Int32

    /// A pipe, or one that never becomes readable when the kernel refuses one.
    package convenience init() {
        self.init(ends: (try? Self.pair()) ?? (-1, -1))
    }

    /// A pipe.
    /// - Throws: the `errno` of `pipe2(2)`.
    package static func make() throws(SystemCallError) -> WakePipe {
        WakePipe(ends: try pair())
    }

    private init(ends: (Int32, Int32)) {
        readEnd = ends.0
        writeEnd = ends.1
    }

    private static func pair() throws(SystemCallError) -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw SystemCallError(call: "pipe", errno: errno) }
        for fd in fds {
            SystemCall.setCloseOnExec(fd)
            SystemCall.setNonBlocking(fd, true)
        }
        return (fds[0], fds[1])
    }

    deinit {
        if readEnd >= 0 { close(readEnd) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    /// Makes the read end readable (from any thread, as often as wanted).
    package func poke() {
        guard writeEnd >= 0 else { return }
        var one: UInt8 = 1
        _ = SystemCall.retrying { write(writeEnd, &one, 1) }
    }

    /// A `pollfd` waiting for the poke.
    package var pollEntry: pollfd { pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0) }
}
