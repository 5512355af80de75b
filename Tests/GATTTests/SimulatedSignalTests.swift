import Foundation
import GATT
import HealthModel
import HeartRateProfile
import Ingest
import Simulators
import Testing
@testable import Gateway

// A hang guard, not a latency bound: generous, because in the one-thread pass at a high load
// a test can wait minutes for the single pool thread before it runs at all.
/// The simulated strap end to end: a generated signal over a real socket pair, decoded and
/// mapped to records exactly as the gateway does (the one mapper).
@Suite(.timeLimit(.minutes(5))) struct SimulatedSignalTests {
    @Test func signalIsContinuousAndConsistent() {
        var signal = SimulatedHeartRateSignal(seed: 7)
        var again = SimulatedHeartRateSignal(seed: 7)
        var totalTicks = 0
        for i in 1...120 {
            let m = signal.next()
            #expect(m == again.next())
            #expect((60...90).contains(Int(m.beatsPerMinute)))
            #expect(m.sensorContact == .detected)
            #expect((m.energyExpendedKJ != nil) == (i % 10 == 0))
            totalTicks += m.rrIntervals.reduce(0) { $0 + Int($1) }
        }
        // Every beat is reported once: the RR series covers the 120 s minus at most one beat.
        #expect(Double(totalTicks) / 1024 <= 120 && Double(totalTicks) / 1024 > 118)
    }

    @Test func streamedOverASocketPairBecomesSamples() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let client = GATTClient(bearer: try strap.connectSocketPair())
        defer { client.close() }
        let hrm = try #require(try await client.discover().characteristic(0x2A37))
        let (stream, continuation) = AsyncStream<HeartRateMeasurement>.makeStream()
        try await client.subscribe(to: hrm) { event in
            // The hot path: decode from the borrowed buffer, no copy.
            if let m = try? HeartRateMeasurement.decode(event.value) { continuation.yield(m) }
        }
        var signal = SimulatedHeartRateSignal(seed: 3)
        var sent: [HeartRateMeasurement] = []
        for _ in 0..<30 { let m = signal.next(); sent.append(m); strap.notifyHeartRate(m) }
        let slots = try HeartRateRecordMapper.Slots(table: SlotTable(), source: StrapSource.source, device: Device(name: "sim"))
        var mapper = HeartRateRecordMapper(slots: slots, sensorLocation: .chest)
        mapper.connectionStarted()
        var received: [HeartRateMeasurement] = []
        var records: [SampleRecord] = []
        for await m in stream {
            received.append(m)
            mapper.map(m, at: Date().timeIntervalSince1970) { r, _ in records.append(r) }
            if received.count == sent.count { break }
        }
        #expect(received == sent)
        #expect(records.filter { $0.typeSlot == slots.heartRate }.count == 30)
        #expect(records.filter { $0.typeSlot == slots.energy }.count == 2)  // readings 10 (baseline), 20, 30
        let withRR = records.filter { $0.rrCount > 0 }
        #expect(withRR.first?.flags.contains(.rrPrecededByGap) == true)
        #expect(withRR.dropFirst().allSatisfy { !$0.flags.contains(.rrPrecededByGap) })
    }
}
