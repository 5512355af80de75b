import Foundation
import GATT
import Simulators
import Testing

// A hang guard, not a latency bound: generous, because in the one-thread pass at a high load
// a test can wait minutes for the single pool thread before it runs at all.
/// Discovery against the simulated strap: exact bytes on the wire, and every handle layout.
@Suite(.timeLimit(.minutes(5))) struct DiscoveryTranscriptTests {
    /// The §6 byte script, plus the continuation requests the Core spec requires (Read By Type
    /// and Find Information go on until Attribute Not Found or the end of the range).
    @Test(arguments: BearerKind.allCases)
    func scriptLayoutTranscriptIsByteExact(kind: BearerKind) async throws {
        var config = SimulatedStrapConfiguration()
        config.layout = .script
        let strap = SimulatedPeripheral.heartRateStrap(config)
        let client = try connect(strap, over: kind)
        defer { client.close() }

        #expect(try await client.exchangeMTU() == 23)
        let db = try await client.discover()
        let hrm = try #require(db.characteristic(0x2A37, in: 0x180D))
        let inbox = Inbox()
        try await client.subscribe(to: hrm, handler: inbox.handler)
        strap.notifyHeartRate([0x16, 0x4D, 0x16, 0x03])
        #expect(await inbox.next(1) == [[0x16, 0x4D, 0x16, 0x03]])

        let expected = """
            C->S 02f700
            S->C 031700
            C->S 100100ffff0028
            S->C 11060c0011000d18
            C->S 101200ffff0028
            S->C 011012000a
            C->S 080c0011000328
            S->C 09070d00100e00372a
            C->S 080e0011000328
            S->C 01080e000a
            C->S 040f001100
            S->C 05010f000229
            C->S 0410001100
            S->C 010410000a
            C->S 120f000100
            S->C 13
            S->C 1b0e00164d1603
            """
        let lines = strap.transcript.map(\.description)
        let want = expected.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines == want)
        #expect(hrm.declarationHandle == 0x0D && hrm.valueHandle == 0x0E && hrm.cccdHandle == 0x0F)
        #expect(db.services.map(\.service) == [GATTService(uuid: 0x180D, startHandle: 0x0C, endHandle: 0x11)])
    }

    /// The same client finds the same characteristics wherever the device puts them.
    @Test(arguments: [SimulatedStrapConfiguration.Layout.compact, .polarH7, .script], BearerKind.allCases)
    func everyLayoutIsDiscovered(layout: SimulatedStrapConfiguration.Layout, kind: BearerKind) async throws {
        var config = SimulatedStrapConfiguration()
        config.layout = layout
        let strap = SimulatedPeripheral.heartRateStrap(config)
        let client = try connect(strap, over: kind)
        defer { client.close() }
        try await client.exchangeMTU()
        let db = try await client.discover()
        let hrm = try #require(db.characteristic(0x2A37))
        #expect(hrm.valueHandle == strap.valueHandle(of: 0x2A37))
        #expect(hrm.cccdHandle == strap.cccdHandle(of: 0x2A37))
        #expect(hrm.properties.contains(.notify))
        if layout == .polarH7 {
            let hrs = try #require(db.service(0x180D)).service
            #expect((hrs.startHandle, hrs.endHandle) == (0x000F, 0x0014))
            #expect(db.services.map(\.service.uuid).prefix(5) == [0x1800, 0x1801, 0x180D, 0x180A, 0x180F])
            #expect(db.services.last?.service.uuid == BluetoothUUID("6217FF4B-FB31-1140-AD5A-A45545D7ECF3"))
            let vendor = try #require(db.services.last?.characteristics.first)
            #expect(vendor.cccdHandle != nil)
        }
        if layout != .script {
            let location = try #require(db.characteristic(0x2A38))
            #expect(try await client.read(location) == [1])
            let manufacturer = try #require(db.characteristic(0x2A29, in: 0x180A))
            #expect(String(decoding: try await client.read(manufacturer), as: UTF8.self) == "HealthGate")
        }
    }

    /// Only wanted services get their characteristics discovered (fewer round trips).
    @Test func discoveryCanBeLimitedToServices() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let client = try connect(strap, over: .inMemory)
        defer { client.close() }
        let db = try await client.discover(services: [0x180D])
        #expect(db.service(0x180D)?.characteristics.count == 3)
        #expect(db.service(0x180A)?.characteristics.isEmpty == true)
        #expect(db.service(0x180A) != nil)
    }

    /// A value longer than MTU − 1 is completed with Read Blob.
    @Test func longValuesAreReadWithReadBlob() async throws {
        var config = SimulatedStrapConfiguration()
        config.manufacturer = "A manufacturer name longer than twenty-two bytes"
        let strap = SimulatedPeripheral.heartRateStrap(config)
        let client = try connect(strap, over: .socketPair)
        defer { client.close() }
        let db = try await client.discover()
        let c = try #require(db.characteristic(0x2A29))
        #expect(String(decoding: try await client.read(c), as: UTF8.self) == config.manufacturer)
        #expect(strap.transcript.contains { $0.bytes.first == ATTOpcode.readBlobRequest.rawValue })
    }

    /// A larger server MTU raises the effective MTU to the smaller of both.
    @Test func mtuExchangeTakesTheMinimum() async throws {
        let strap = SimulatedPeripheral.heartRateStrap(serverMTU: 185)
        let client = try connect(strap, over: .inMemory)
        defer { client.close() }
        #expect(try await client.exchangeMTU() == 185)
        #expect(client.mtu == 185)
    }
}
