import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import SerialPedometer
import Simulators
import Synchronization
import Testing
@testable import Gateway
@testable import Ingest

/// Unplugging a pedometer (the pty's far end closed) finishes its session: a reading the
/// counter held back is settled and stored, and the final state is persisted.
@Suite(.serialized) struct PedometerUnplugTests {
    @Test func unplugFinishesTheSessionAndLosesNothingHeld() async throws {
        let rig = try DaemonRig(path: temporaryStorePath())
        let ped = try SimulatedPedometer()
        let source = PedometerSource(path: ped.path, id: "PED-U", reconnects: false)
        let ended = DispatchSemaphore(value: 0)
        try rig.runner.start(source) { ended.signal() }
        for (seq, steps) in [(1, 100), (2, 110)] { ped.writeLine(pedometerLine(steps, seq: seq)) }
        // The count goes down: a reset or a corrupt number. The counter holds it for the next
        // reading to decide — and the next thing that happens is the unplug.
        ped.writeLine(pedometerLine(5, seq: 3))
        #expect(await eventually { source.stats.lines.load(ordering: .relaxed) == 3 && rig.steps().count == 1 })
        ped.unplug()
        #expect(await offThread { ended.wait(timeout: .now() + 60) == .success }, "the source ended on the hangup")
        #expect(source.stats.finished.load(ordering: .relaxed) == 1)
        #expect(await eventually { rig.steps().count == 2 })
        _ = await offThread { rig.stop() }

        #expect(rig.steps().map(\.quantity.value) == [10, 5], "the held reading was settled as a reset: 5 steps since")
        let state = try #require(rig.counterState("PED-U"))
        #expect(state.suspect == nil && state.baseline?.count == 5 && state.tally.resets == 1)
        #expect(rig.pipeline.attachments.outstandingCount == 0)
    }
}
