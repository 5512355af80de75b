#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Synchronization
import Locking

/// The one way everything in HealthGate stops: a one-shot "stop now" raised from any thread (a
/// signal trap, a test, a source's end) and seen three ways — as a flag (``isRaised``) by loops
/// that check between steps, as hooks (``onRaise(_:)``) that close what a blocked call waits on,
/// and as a descriptor (``fd``) that blocking loops `poll` next to their socket, tty or netlink
/// monitor, so a kernel connect or a scan returns at once. The descriptor's pipe is made the first
/// time someone asks for it: a stop nobody polls costs no descriptors.
package final class StopSignal: Sendable {
    private let raised = Atomic<Bool>(false)
    private let hooks = Lock<(next: Int, byID: [Int: @Sendable () -> Void])>((0, [:]))
    private let pipe = Lock<WakePipe?>(nil)

    /// A hook registered with ``onRaise(_:)``. Cancel it when the thing it would stop has ended
    /// on its own (a connection that closed), so a daemon reconnecting for months does not pile
    /// up hooks holding dead connections.
    package struct Hook: Sendable {
        fileprivate let id: Int
        fileprivate let stop: StopSignal

        /// Removes the hook; it will not run. Harmless after stop was raised.
        package func cancel() { _ = stop.hooks.withLock { $0.byID.removeValue(forKey: id) } }
    }

    /// A signal not yet raised.
    package init() {}

    /// Hooks waiting for stop (tests check cancelled ones are gone).
    package var pendingHooks: Int { hooks.withLock { $0.byID.count } }

    /// Whether stop was requested.
    package var isRaised: Bool { raised.load(ordering: .acquiring) }

    /// Requests stop: the descriptor becomes readable, then every hook runs (once). Later calls do nothing.
    package func raise() {
        guard !raised.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pipe.withLock { $0?.poke() }
        let pending = hooks.withLock { h in
            let list = h.byID.sorted { $0.key < $1.key }.map(\.value)
            h.byID = [:]
            return list
        }
        for h in pending { h() }
    }

    /// Runs `hook` when stop is raised (at once if it already was). Cancel the returned
    /// ``Hook`` once `hook` has nothing left to stop.
    @discardableResult
    package func onRaise(_ hook: @escaping @Sendable () -> Void) -> Hook {
        let id = hooks.withLock { h -> Int? in
            if raised.load(ordering: .acquiring) { return nil }
            h.next += 1
            h.byID[h.next] = hook
            return h.next
        }
        guard let id else {
            hook()
            return Hook(id: -1, stop: self)
        }
        return Hook(id: id, stop: self)
    }

    /// The descriptor to poll for `POLLIN`: readable once stop is raised (-1 when the kernel had
    /// no descriptors left; the flag and the hooks still work).
    package var fd: Int32 {
        pipe.withLock { p in
            if let p { return p.readEnd }
            let made = WakePipe()
            p = made
            if raised.load(ordering: .acquiring) { made.poke() }   // raised before anyone asked
            return made.readEnd
        }
    }

    /// Sleeps up to `duration`, returning early (true) if stop is raised meanwhile.
    @discardableResult
    package func sleep(_ duration: Duration) -> Bool {
        if isRaised { return true }
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        let wake = fd
        var fds = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        let end = SystemCall.monotonicSeconds() + seconds
        while !isRaised {
            let left = end - SystemCall.monotonicSeconds()
            if left <= 0 { return false }
            // Without a descriptor (none left in the kernel) the flag is checked every 50 ms.
            if SystemCall.poll(&fds, timeout: wake < 0 ? min(left, 0.05) : left) < 0 { return isRaised }
        }
        return true
    }
}
