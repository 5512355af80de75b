import Platform
import Dispatch
import Synchronization
#if canImport(Glibc)
@preconcurrency import Glibc
import Locking
#endif

/// The one signal trap of every command that runs until stopped (`run`, `live`, `record`,
/// `demo`, `serial watch`, `simulate`, `scan`, `pair`, `reset-energy`): SIGINT and SIGTERM
/// arrive on a dispatch queue (never interrupting an arbitrary thread) and call `handler` with
/// the signal's name; the work then stops the one way everything stops, a `StopSignal` (Platform).
///
/// With `secondSignalExits` (interactive commands) a second signal ends the process at once
/// with status 130, as a second Ctrl-C should; the kernel still closes every socket. The daemon
/// leaves it off: a second SIGTERM must not cut its drain short (systemd's stop timeout does
/// that, with SIGKILL).
///
/// While at least one trap lives the process does not act on SIGINT and SIGTERM itself (they are
/// ignored, or caught by Dispatch's handler, which hands them to the trap). The traps are counted
/// per process: the first one saves each signal's disposition, the last one to be released
/// (``cancel()`` or deinit) puts it back as it was, moments later on the trap's queue —
/// the default action for `healthgate` (it resets SIGTERM at start), whatever a test process or
/// a parent had otherwise. So no trap leaves a signal ignored behind it, and an ignored
/// disposition is inherited through exec only while a trap is active.
package final class SignalTrap: @unchecked Sendable {
    // @unchecked: `sources` is set once in init and only cancelled (once) afterwards.
    private var sources: [any DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "healthgate.signals")
    private let released = Atomic<Bool>(false)

    private let signals: [Int32]

    /// Traps SIGINT and SIGTERM; `handler` runs on the trap's queue for each one.
    package convenience init(secondSignalExits: Bool = false, _ handler: @escaping @Sendable (String) -> Void) {
        self.init(signals: [SIGINT, SIGTERM], secondSignalExits: secondSignalExits, handler)
    }

    /// Traps `signals` (tests use signals of their own, so other suites' traps in the same
    /// process cannot disturb them).
    init(signals: [Int32], secondSignalExits: Bool = false, _ handler: @escaping @Sendable (String) -> Void) {
        self.signals = signals
        let seen = SignalCount()
        SignalDispositions.shared.retain(signals)
        for sig in signals {
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler {
                if seen.next() > 1 && secondSignalExits { _exit(130) }
                handler(sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "signal \(sig)")
            }
            source.resume()
            sources.append(source)
        }
    }

    /// A trap that raises `stop` on the first signal.
    package convenience init(raising stop: StopSignal, secondSignalExits: Bool = true) {
        self.init(secondSignalExits: secondSignalExits) { _ in stop.raise() }
    }

    /// Releases the signals: this trap's handler no longer runs, and when it was the last trap
    /// of the process each signal's disposition is put back as it was before the first — once
    /// Dispatch has let go of the signal (its cancel handlers ran), since registering a signal
    /// source installs Dispatch's own handler, which must not outlive the trap. Idempotent.
    package func cancel() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let left = Countdown(sources.count)
        let signals = self.signals
        for s in sources {
            s.setCancelHandler {
                if left.tick() {
                    SignalDispositions.shared.release(signals)
                }
            }
            s.cancel()
        }
    }

    deinit { cancel() }
}

/// The process's count of live ``SignalTrap``s and the dispositions they replaced.
final class SignalDispositions: Sendable {
    static let shared = SignalDispositions()

    private struct Saved: @unchecked Sendable {
        // @unchecked: a plain C struct, only touched under the mutex.
        var count = 0
        var previous = sigaction()
    }
    private let table = Lock<[Int32: Saved]>([:])

    /// Ignores `signals`, saving each one's disposition on the first retain.
    func retain(_ signals: [Int32]) {
        table.withLock { t in
            for sig in signals {
                var saved = t[sig] ?? Saved()
                if saved.count == 0 {
                    var ignore = sigaction()
                    ignore.__sigaction_handler.sa_handler = SIG_IGN
                    sigemptyset(&ignore.sa_mask)
                    sigaction(sig, &ignore, &saved.previous)
                }
                saved.count += 1
                t[sig] = saved
            }
        }
    }

    /// Undoes one ``retain(_:)``; the last one restores the saved dispositions.
    func release(_ signals: [Int32]) {
        table.withLock { t in
            for sig in signals {
                guard var saved = t[sig], saved.count > 0 else { continue }
                saved.count -= 1
                if saved.count == 0 { sigaction(sig, &saved.previous, nil) }
                t[sig] = saved
            }
        }
    }

    /// Live traps (tests).
    func count(_ sig: Int32) -> Int { table.withLock { $0[sig]?.count ?? 0 } }
}

/// Counts a trap's sources down to their last cancel handler.
private final class Countdown: Sendable {
    private let left: Atomic<Int>
    init(_ n: Int) { left = Atomic(n) }
    /// True for the last tick.
    func tick() -> Bool { left.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 }
}

/// Counts signals (touched only on the trap's serial queue).
private final class SignalCount: @unchecked Sendable {
    private var n = 0
    func next() -> Int { n += 1; return n }
}
