import GATT
import Simulators
import Synchronization
import Testing

// A hang guard, not a latency bound: generous, because in the one-thread pass at a high load
// a test can wait minutes for the single pool thread before it runs at all.
/// Notifications and indications: delivered only after subscribing, CCCD written per connection.
@Suite(.timeLimit(.minutes(5))) struct NotificationTests {
    @Test(arguments: BearerKind.allCases)
    func notificationsBeforeTheCCCDWriteAreCountedNotDelivered(kind: BearerKind) async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let client = try connect(strap, over: kind)
        defer { client.close() }
        let db = try await client.discover()
        let hrm = try #require(db.characteristic(0x2A37))
        #expect(strap.forceNotify(0x2A37, value: [0x00, 0x40]))
        #expect(strap.forceNotify(0x2A37, value: [0x00, 0x41]))
        // A round trip after them: by the time it returns, the reader has handled both.
        _ = try await client.read(try #require(db.characteristic(0x2A38)))
        #expect(client.unsolicitedNotificationCount == 2)
        #expect(!strap.notifyHeartRate([0x00, 0x42]))  // CCCD still 0: a polite strap stays silent

        let inbox = Inbox()
        try await client.subscribe(to: hrm, handler: inbox.handler)
        #expect(strap.notificationsEnabled(0x2A37))
        #expect(strap.value(at: try #require(hrm.cccdHandle)) == [0x01, 0x00])
        for bpm in UInt8(60)..<UInt8(65) { strap.notifyHeartRate([0x00, bpm]) }
        #expect(await inbox.next(5) == (UInt8(60)..<UInt8(65)).map { [0x00, $0] })
        #expect(client.deliveredNotificationCount == 5)
    }

    @Test func cccdIsWrittenAgainOnEveryConnection() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        for round in 1...2 {
            let client = try connect(strap, over: .socketPair)
            let hrm = try #require(try await client.discover().characteristic(0x2A37))
            #expect(!strap.notificationsEnabled(0x2A37))  // a non-bonded peer forgot it
            let inbox = Inbox()
            try await client.subscribe(to: hrm, handler: inbox.handler)
            strap.notifyHeartRate([0x00, UInt8(70 + round)])
            #expect(await inbox.next(1) == [[0x00, UInt8(70 + round)]])
            client.close()
        }
        #expect(strap.connectionCount == 2)
    }

    @Test func indicationsAreConfirmed() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let client = try connect(strap, over: .inMemory)
        defer { client.close() }
        let battery = try #require(try await client.discover().characteristic(0x2A19))
        let inbox = Inbox()
        try await client.subscribe(to: battery, indications: true, handler: inbox.handler)
        #expect(strap.value(at: try #require(battery.cccdHandle)) == [0x02, 0x00])
        strap.indicate(0x2A19, value: [55])
        #expect(await inbox.next(1) == [[55]])
        // The confirmation follows; a round trip orders it before our check.
        _ = try await client.read(battery)
        #expect(strap.transcript.contains { $0.direction == .clientToServer && $0.bytes == [0x1E] })
    }

    @Test func unsubscribeWritesZeroAndStopsDelivery() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let client = try connect(strap, over: .inMemory)
        defer { client.close() }
        let hrm = try #require(try await client.discover().characteristic(0x2A37))
        try await client.subscribe(to: hrm) { _ in }
        try await client.unsubscribe(from: hrm)
        #expect(!strap.notificationsEnabled(0x2A37))
        strap.forceNotify(0x2A37, value: [0x00, 0x50])
        _ = try await client.read(handle: try #require(strap.valueHandle(of: 0x2A38)))
        #expect(client.unsolicitedNotificationCount == 1)
    }

    /// Requests the peer sends to us get an answer, so the peer never times out.
    @Test func peerRequestsAreAnswered() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let client = try connect(strap, over: .inMemory)
        defer { client.close() }
        strap.sendRaw([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
        strap.sendRaw([0x02, 0x00, 0x02])
        _ = try await client.discoverPrimaryServices()
        // The answers were sent before the discovery response was read; one more round trip
        // makes sure the server has read them too.
        _ = try await client.discoverPrimaryServices()
        let sent = strap.transcript.filter { $0.direction == .clientToServer }.map(\.bytes)
        #expect(sent.contains([0x01, 0x10, 0x01, 0x00, 0x06]))
        #expect(sent.contains([0x03, 0xF7, 0x00]))
    }
}
