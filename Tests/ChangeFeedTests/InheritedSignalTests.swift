import Foundation
import HealthGateTesting
import HealthStore
import Testing

/// A process that traps its signals the way `run` does (SIG_IGN plus a dispatch source) passes
/// an ignored SIGTERM on to every child it starts: the disposition survives exec. `watch` and
/// `stats --follow` end by SIGTERM's default action, so they reset it at start; without that,
/// a test process that had run a daemon in-process could not stop its `watch` children (its
/// suites hung until the watchdog killed them).
@Suite("A stop request stops healthgate even when its parent ignored SIGTERM")
struct InheritedSignalTests {
    @Test("watch started with SIGTERM ignored (sh's trap '' TERM, then exec) ends on SIGTERM")
    func watchEndsOnTerm() async throws {
        let db = TempDB()
        try db.open().save([try heartRate(60, at: 0)])
        let child = try Child(["-c", "trap '' TERM; exec \"$0\" watch --json --db \"$1\"", CLI.binary.path, db.path],
                              executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(await child.waitForStderr("watching"), "watch did not start: \(child.stderr)")
        await child.stop()
        #expect(child.process.terminationReason == .uncaughtSignal)
        #expect(child.process.terminationStatus == SIGTERM, "ended by signal \(child.process.terminationStatus), not SIGTERM")
    }
}
