import GATT
import Simulators
import Testing

// A hang guard, not a latency bound: generous, because in the one-thread pass at a high load
// a test can wait minutes for the single pool thread before it runs at all.
/// Several straps at once, each with its own client, layout and notification stream.
@Suite(.timeLimit(.minutes(5))) struct MultipleStrapsTests {
    @Test func twoStrapsStreamIndependently() async throws {
        var polar = SimulatedStrapConfiguration()
        polar.layout = .polarH7
        polar.name = "Polar H7 0001"
        let straps = [SimulatedPeripheral.heartRateStrap(), SimulatedPeripheral.heartRateStrap(polar)]
        let clients = try [connect(straps[0], over: .inMemory), connect(straps[1], over: .socketPair)]
        defer { clients.forEach { $0.close() } }
        let inboxes = [Inbox(), Inbox()]
        for i in 0..<2 {
            try await clients[i].exchangeMTU()
            let hrm = try #require(try await clients[i].discover().characteristic(0x2A37))
            try await clients[i].subscribe(to: hrm, handler: inboxes[i].handler)
        }
        #expect(straps[0].valueHandle(of: 0x2A37) != straps[1].valueHandle(of: 0x2A37))
        for k in 0..<20 {
            straps[0].notifyHeartRate([0x00, UInt8(100 + k)])
            straps[1].notifyHeartRate([0x00, UInt8(50 + k)])
        }
        async let a = inboxes[0].next(20)
        async let b = inboxes[1].next(20)
        #expect(await a == (0..<20).map { [0x00, UInt8(100 + $0)] })
        #expect(await b == (0..<20).map { [0x00, UInt8(50 + $0)] })
    }

    /// Many tasks issuing requests at once on one client: ATT allows one outstanding request,
    /// so they queue, and every one gets its own answer.
    @Test func concurrentRequestsAreSerialised() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let client = try connect(strap, over: .socketPair)
        defer { client.close() }
        let db = try await client.discover()
        let location = try #require(db.characteristic(0x2A38))
        let battery = try #require(db.characteristic(0x2A19))
        let results = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            for i in 0..<40 {
                group.addTask { (i, try await client.read(i.isMultiple(of: 2) ? location : battery)) }
            }
            var out: [Int: [UInt8]] = [:]
            for try await (i, v) in group { out[i] = v }
            return out
        }
        for i in 0..<40 { #expect(results[i] == (i.isMultiple(of: 2) ? [1] : [87])) }
        // Never two requests in flight: every request is followed by its answer.
        var outstanding = 0
        for e in strap.transcript where e.bytes.first != 0x1B {
            outstanding += e.direction == .clientToServer ? 1 : -1
            #expect((0...1).contains(outstanding))
        }
    }
}
