#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Platform

/// A one-shot "stop now" that blocking Bluetooth loops can `poll` on next to their socket:
/// a pipe whose read end becomes readable once ``trigger()`` is called (from any thread,
/// e.g. a SIGINT handler's dispatch source). Used for Ctrl-C: loops return, sockets close.
package final class StopSignal: Sendable {
    private let pipe = WakePipe()
    private let fired = Atomic<Bool>(false)

    /// Creates an untriggered signal.
    package init() {}

    /// The descriptor to poll for `POLLIN`.
    package var fd: Int32 { pipe.readEnd }

    /// True once ``trigger()`` was called.
    package var isTriggered: Bool { fired.load(ordering: .acquiring) }

    /// Fires the signal; later calls do nothing.
    package func trigger() {
        guard !fired.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pipe.poke()
    }

    /// Sleeps up to `seconds`, returning early (true) when the signal fires.
    @discardableResult
    package func wait(seconds: Double) -> Bool {
        if isTriggered { return true }
        var fds = [pipe.pollEntry]
        _ = SystemCall.poll(&fds, timeout: seconds)
        return isTriggered
    }
}
