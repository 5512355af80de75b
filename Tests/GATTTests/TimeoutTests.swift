import GATT
import HealthGateTesting
import Simulators
import Testing

// A hang guard, not a latency bound: generous, because in the one-thread pass at a high load
// a test can wait minutes for the single pool thread before it runs at all.
/// The ATT transaction timeout (30 s in production; injected short here).
@Suite(.timeLimit(.minutes(5))) struct TimeoutTests {
    @Test(arguments: BearerKind.allCases)
    func unansweredRequestTimesOutAndClosesTheLink(kind: BearerKind) async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        strap.inject(.ignore(opcode: .readByGroupTypeRequest))
        let client = try connect(strap, over: kind, timeout: .milliseconds(100))
        await #expect(throws: GATTError.timeout(request: .readByGroupTypeRequest, after: .milliseconds(100))) {
            _ = try await client.discoverPrimaryServices()
        }
        // ATT forbids further requests on a bearer after a timeout.
        await #expect(throws: GATTError.timeout(request: .readByGroupTypeRequest, after: .milliseconds(100))) {
            _ = try await client.read(handle: 1)
        }
        #expect("\(GATTError.timeout(request: .readRequest, after: .seconds(30)))".contains("reconnect"))
    }

    @Test func defaultTimeoutIsThirtySeconds() {
        let (a, _) = InMemoryATTBearer.makePair()
        let client = GATTClient(bearer: a)
        defer { client.close() }
        #expect(client.transactionTimeout == .seconds(30))
    }
}
