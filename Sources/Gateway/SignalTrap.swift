import Dispatch
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The one signal trap of every command that runs until stopped (`run`, `live`, `record`,
/// `demo`, `scan`, `pair`, `reset-energy`): SIGINT and SIGTERM arrive on a dispatch queue (never
/// interrupting an arbitrary thread) and call `handler` with the signal's name; the work then
/// stops the one way everything stops, an ``IngestStop``.
///
/// With `secondSignalExits` (interactive commands) a second signal ends the process at once
/// with status 130, as a second Ctrl-C should; the kernel still closes every socket. The daemon
/// leaves it off: a second SIGTERM must not cut its drain short (systemd's stop timeout does
/// that, with SIGKILL).
///
/// The signals are ignored by the process while the trap lives; an interactive trap restores
/// their default action when it is released (``cancel()`` or deinit), so a Ctrl-C afterwards
/// ends the command as usual. (The daemon's stays ignored: several runtimes may share a test
/// process.)
public final class SignalTrap: @unchecked Sendable {
    // @unchecked: `sources` is set once in init and only cancelled afterwards.
    private var sources: [any DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "healthgate.signals")
    private let restoresDefaults: Bool

    /// Traps SIGINT and SIGTERM; `handler` runs on the trap's queue for each one.
    public init(secondSignalExits: Bool = false, _ handler: @escaping @Sendable (String) -> Void) {
        restoresDefaults = secondSignalExits
        let seen = SignalCount()
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler {
                if seen.next() > 1 && secondSignalExits { _exit(130) }
                handler(sig == SIGTERM ? "SIGTERM" : "SIGINT")
            }
            source.resume()
            sources.append(source)
        }
    }

    /// A trap that raises `stop` on the first signal.
    public convenience init(raising stop: IngestStop, secondSignalExits: Bool = true) {
        self.init(secondSignalExits: secondSignalExits) { _ in stop.raise() }
    }

    /// Releases the signals (default actions again). Idempotent.
    public func cancel() {
        guard !sources.isEmpty else { return }
        for s in sources { s.cancel() }
        sources = []
        if restoresDefaults {
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
        }
    }

    deinit { cancel() }
}

/// Counts signals (touched only on the trap's serial queue).
private final class SignalCount: @unchecked Sendable {
    private var n = 0
    func next() -> Int { n += 1; return n }
}
