import Foundation
import GATT
import HealthGateTesting
import Simulators
import Testing

// A hang guard, not a latency bound: generous, because in the one-thread pass at a high load
// a test can wait minutes for the single pool thread before it runs at all.
/// Error Responses become named ``GATTError/attribute(_:request:handle:)`` errors.
@Suite(.timeLimit(.minutes(5))) struct ErrorResponseTests {
    @Test(arguments: BearerKind.allCases)
    func injectedErrorDuringDiscoveryIsReported(kind: BearerKind) async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        strap.inject(.error(.insufficientEncryption, opcode: .readByTypeRequest))
        let client = try connect(strap, over: kind)
        defer { client.close() }
        await #expect(throws: GATTError.attribute(.insufficientEncryption, request: .readByTypeRequest, handle: 1)) {
            _ = try await client.discover()
        }
        #expect("\(GATTError.attribute(.insufficientEncryption, request: .readByTypeRequest, handle: 1))".contains("--bond"))
        // The link is still usable: the next discovery succeeds.
        #expect(try await client.discover().characteristic(0x2A37) != nil)
    }

    @Test func controlPointRejectsUnknownOpcodesWith0x80() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let client = try connect(strap, over: .inMemory)
        defer { client.close() }
        let cp = try #require(try await client.discover().characteristic(0x2A39))
        try await client.write([0x01], to: cp)
        #expect(strap.value(at: cp.valueHandle) == [0x01])
        await #expect(throws: GATTError.attribute(.heartRateControlPointNotSupported, request: .writeRequest, handle: cp.valueHandle)) {
            try await client.write([0x02], to: cp)
        }
    }

    @Test func readingAWriteOnlyValueIsRefused() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let client = try connect(strap, over: .inMemory)
        defer { client.close() }
        let cp = try #require(try await client.discover().characteristic(0x2A39))
        await #expect(throws: GATTError.attribute(.readNotPermitted, request: .readRequest, handle: cp.valueHandle)) {
            _ = try await client.read(cp)
        }
        await #expect(throws: GATTError.attribute(.invalidHandle, request: .readRequest, handle: 0x0999)) {
            _ = try await client.read(handle: 0x0999)
        }
    }

    @Test func subscribingWithoutCCCDIsAClearError() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let client = try connect(strap, over: .inMemory)
        defer { client.close() }
        let location = try #require(try await client.discover().characteristic(0x2A38))
        await #expect(throws: GATTError.noCCCD(characteristic: 0x2A38)) {
            try await client.subscribe(to: location) { _ in }
        }
    }

    /// A response with the wrong opcode is a protocol violation, not a silent success.
    @Test func mismatchedResponseIsAProtocolViolation() async throws {
        let (clientEnd, serverEnd) = InMemoryATTBearer.makePair()
        let client = GATTClient(bearer: clientEnd)
        defer { client.close() }
        // The peer blocks in receive: on a thread of its own, never on a cooperative thread the
        // client's read may need (CI machines have two).
        let served = DispatchSemaphore(value: 0)
        Thread {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 600, alignment: 8)
            defer { buffer.deallocate(); served.signal() }
            _ = try? serverEnd.receive(into: buffer)
            try? serverEnd.send([0x13])  // a Write Response to a Read Request
        }.start()
        await #expect(throws: GATTError.protocolViolation("a Read Request was answered with a Write Response")) {
            _ = try await client.read(handle: 3)
        }
        #expect(await offThread { served.wait(timeout: .now() + 30) } == .success)
    }
}
