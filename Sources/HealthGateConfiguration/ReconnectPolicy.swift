/// How a source is reconnected after it ends or fails: the one policy for straps (`run`,
/// `live`, `record`, `demo`), pedometers opened by path and anything else Gateway's
/// `SourceRunner` restarts (`[ingest] reconnect_*` in the configuration file).
///
/// Attempt *starts* are spaced `initialPause`, doubling up to `maximumPause`: an attempt that
/// fails at once waits out the pause, one that already waited is followed at once — except
/// after a failure that leaves something below settling (a kernel LE connect that timed out
/// because the strap was away, still being cancelled), which waits at least `settlePause`. The pauses start over after an attempt
/// that delivered data. The defaults (0.5 s doubling to 2 s) keep a strap that comes back
/// reconnected within seconds — the kernel's LE connect completes as soon as the strap
/// advertises, and the real-stack `daemon` and `link-loss-*` scenarios require notifications
/// again within 5 s of its return — while a device that stays away costs one attempt every 2 s
/// (a failed `connect` or `open`, logged once per streak).
package struct ReconnectPolicy: Sendable, Hashable {
    /// The first pause after a link loss or a failed attempt.
    package var initialPause: Duration
    /// The longest pause: the pause doubles up to this.
    package var maximumPause: Duration
    /// The least pause after a failure that needs settling (a timed-out kernel connect): the
    /// kernel drops a link completed after the cancel about 2 s later, and connecting to the
    /// same strap before that met a kernel bug (docs/bluetooth-linux.md, "Connect timeouts").
    package var settlePause: Duration

    /// The default: 0.5 s doubling to 2 s; 2 s to settle.
    package init(initialPause: Duration = .milliseconds(500), maximumPause: Duration = .seconds(2),
                 settlePause: Duration = .seconds(2)) {
        self.initialPause = initialPause
        self.maximumPause = max(initialPause, maximumPause)
        self.settlePause = settlePause
    }

    /// The pause before the next attempt after `failures` failures in a row (≥ 1).
    package func pause(afterFailures failures: Int) -> Duration {
        guard failures > 1 else { return initialPause }
        var p = initialPause
        for _ in 1..<min(failures, 40) {
            p = p * 2
            if p >= maximumPause { return maximumPause }
        }
        return min(p, maximumPause)
    }
}
