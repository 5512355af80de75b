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

/// A daemon restart continues the pedometer's count from the persisted state: the steps walked
/// while it was down are counted by the first reading after it, nothing is stored twice.
@Suite(.serialized) struct PedometerRestartTests {
    @Test func stepsWalkedWhileTheDaemonWasDownAreCounted() async throws {
        let path = temporaryStorePath()
        let ped = try SimulatedPedometer()   // the pty stays (its far end is held) across the restart
        let source = PedometerSource(path: ped.path, id: "PED-R")

        let first = try DaemonRig(path: path)
        try first.runner.start(source)
        for (seq, steps) in [(1, 100), (2, 110), (3, 130)] { ped.writeLine(pedometerLine(steps, seq: seq)) }
        #expect(await eventually { first.steps().count == 2 })
        _ = await offThread { first.stop() }

        // Down: the device keeps counting; its lines wait in the tty.
        ped.writeLine(pedometerLine(150, seq: 4))
        ped.writeLine(pedometerLine(170, seq: 5))

        // A new "process": a new store connection, pipeline and source on the same database.
        let second = try DaemonRig(path: path)
        try second.runner.start(source)
        #expect(await eventually { second.steps().count == 4 })
        ped.writeLine(pedometerLine(180, seq: 6))
        #expect(await eventually { second.steps().count == 5 })
        let final = await offThread { second.stop() }
        #expect(final.committed == 3)

        let samples = second.steps()
        #expect(samples.map(\.quantity.value) == [10, 20, 20, 20, 10])
        #expect(second.total() == 80, "every step from the first reading (100) to the last (180)")
        let ids = samples.compactMap(\.metadata.syncIdentifier)
        #expect(ids.count == 5 && Set(ids).count == 5)
        let state = try #require(second.counterState("PED-R"))
        #expect(state.segment == 1, "no new baseline after the restart")
        #expect(state.baseline?.count == 180 && state.tally.steps == 80)
    }

    /// An idle pedometer repeating its count does not commit its state once per flush window:
    /// only the first reading's state (a new baseline) goes at once, the rest at most every
    /// `idleStateInterval` and at the end — and steps still move it at once.
    @Test func anIdlePedometersStateIsNotRewrittenForEveryLine() async throws {
        let path = temporaryStorePath()
        let ped = try SimulatedPedometer()
        let source = PedometerSource(path: ped.path, id: "PED-I")
        let rig = try DaemonRig(path: path)
        try rig.runner.start(source)
        for seq in 1...40 { ped.writeLine(pedometerLine(700, seq: seq)) }
        #expect(await eventually { source.stats.lines.load(ordering: .relaxed) == 40 })
        try await Task.sleep(for: .milliseconds(300))   // several flush windows (50 ms each)
        #expect(rig.counterState("PED-I")?.baseline?.seq == 1, "the idle readings rewrote the persisted state")
        ped.writeLine(pedometerLine(705, seq: 41))       // steps: persisted with their sample
        #expect(await eventually { rig.steps().count == 1 })
        #expect(rig.counterState("PED-I")?.baseline?.seq == 41)
        ped.writeLine(pedometerLine(705, seq: 42))       // idle again: deferred…
        #expect(await eventually { source.stats.lines.load(ordering: .relaxed) == 42 })
        _ = await offThread { rig.stop() }
        #expect(rig.counterState("PED-I")?.baseline?.seq == 42, "…and persisted at the end")
    }

    /// A daemon that saw only the first reading (a baseline, no sample yet) persists it when
    /// stopped, so the next run counts from it too.
    @Test func aBaselineWithoutSamplesSurvivesTheRestart() async throws {
        let path = temporaryStorePath()
        let ped = try SimulatedPedometer()
        let source = PedometerSource(path: ped.path, id: "PED-B")

        let first = try DaemonRig(path: path)
        try first.runner.start(source)
        ped.writeLine(pedometerLine(500, seq: 1))
        #expect(await eventually { source.stats.lines.load(ordering: .relaxed) == 1 })
        _ = await offThread { first.stop() }
        #expect(first.steps().isEmpty)
        #expect(first.counterState("PED-B")?.baseline?.count == 500)

        ped.writeLine(pedometerLine(520, seq: 2))
        let second = try DaemonRig(path: path)
        try second.runner.start(source)
        #expect(await eventually { second.steps().count == 1 })
        _ = await offThread { second.stop() }
        #expect(second.steps().map(\.quantity.value) == [20])
    }

    /// `serial watch` and `run` share the state key: what one stored, the other continues.
    @Test func runContinuesWhatSerialWatchStored() async throws {
        let path = temporaryStorePath()
        let store = try HealthStore(path: path)
        // An earlier serial watch stored a sample and the state after it, in one transaction.
        var counter = StepCounter(configuration: try CounterConfiguration(deviceID: "PED-W"))
        let now = Date()
        _ = counter.process(PedometerReading(steps: 1_000, seq: 1), receivedAt: now.addingTimeInterval(-60))
        let out = counter.process(PedometerReading(steps: 1_040, seq: 2), receivedAt: now.addingTimeInterval(-30))
        try store.save(try out.samples.map { try $0.quantitySample(source: PedometerSource.source, device: nil) },
                       state: [PedometerSource.stateKey(deviceID: "PED-W"): try JSONEncoder().encode(counter.state)])

        let ped = try SimulatedPedometer()
        let rig = try DaemonRig(path: path)
        try rig.runner.start(PedometerSource(path: ped.path, id: "PED-W"))
        ped.writeLine(pedometerLine(1_050, seq: 3))
        #expect(await eventually { rig.steps().count == 2 })
        _ = await offThread { rig.stop() }
        #expect(rig.steps().map(\.quantity.value) == [40, 10])
        #expect(rig.counterState("PED-W")?.baseline?.count == 1_050)
    }
}
