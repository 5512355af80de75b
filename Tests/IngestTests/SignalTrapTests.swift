import Foundation
import HealthGateTesting
import Testing
@testable import Gateway
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The one signal trap: traps are counted per process, a signal is ignored (seen only by the
/// traps' dispatch sources) while any trap lives, and the last trap to go puts each signal's
/// disposition back as it was — never leaving it ignored behind it, never forcing the default
/// on a process that had chosen otherwise. SIGUSR1/SIGUSR2 stand in for SIGINT/SIGTERM so that
/// the traps of other suites running in this process cannot disturb the counts. (Delivery to the
/// handler is tested with real `healthgate` children: ShutdownTests, InheritedSignalTests, the
/// serial watch tests.)
@Suite(.serialized) struct SignalTrapTests {
    /// The handler `sig` has now, as its address (SIG_DFL is 0, SIG_IGN 1).
    func disposition(_ sig: Int32) -> Int {
        var current = sigaction()
        sigaction(sig, nil, &current)
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self)
    }

    func isIgnored(_ sig: Int32) -> Bool { disposition(sig) == unsafeBitCast(SIG_IGN, to: Int.self) }
    func isDefault(_ sig: Int32) -> Bool { disposition(sig) == unsafeBitCast(SIG_DFL, to: Int.self) }

    /// Waits (bounded) until `sig` has no live trap and its disposition is `expected`; the last
    /// release restores it on the trap's queue, moments after ``SignalTrap/cancel()``.
    func restored(_ sig: Int32, to expected: sighandler_t?) async -> Bool {
        await eventually(seconds: 5) {
            SignalDispositions.shared.count(sig) == 0 && disposition(sig) == unsafeBitCast(expected, to: Int.self)
        }
    }

    @Test("two overlapping traps: the signal is not acted on until the last is released, then is back at its default")
    func referenceCounted() async {
        signal(SIGUSR1, SIG_DFL)
        let first = SignalTrap(signals: [SIGUSR1]) { _ in }
        #expect(!isDefault(SIGUSR1))
        let second = SignalTrap(signals: [SIGUSR1]) { _ in }
        first.cancel()
        first.cancel()   // idempotent: does not release the second trap's hold
        #expect(await eventually(seconds: 5) { SignalDispositions.shared.count(SIGUSR1) == 1 })
        #expect(!isDefault(SIGUSR1), "the first trap's release ended the second one's")
        second.cancel()
        #expect(await restored(SIGUSR1, to: SIG_DFL), "the last trap left the signal ignored (or caught)")
    }

    @Test("a signal the process already ignored stays ignored after an interactive trap released by deinit")
    func restoresWhatWasThere() async {
        signal(SIGUSR2, SIG_IGN)   // as a parent's `trap '' …` passes it on through exec
        do {
            let trap = SignalTrap(signals: [SIGUSR2], secondSignalExits: true) { _ in }
            withExtendedLifetime(trap) { #expect(!isDefault(SIGUSR2)) }
        }
        #expect(await restored(SIGUSR2, to: SIG_IGN), "the trap put another action in place of the ignored disposition it found")
        signal(SIGUSR2, SIG_DFL)
    }
}
