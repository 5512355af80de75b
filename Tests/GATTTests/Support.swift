import GATT
import HealthGateTesting
import Synchronization

/// Which bearer a test runs over: both must behave the same.
enum BearerKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case inMemory, socketPair
    var description: String { rawValue }
}

/// Connects a client to `peripheral` over the chosen bearer.
func connect(_ peripheral: SimulatedPeripheral, over kind: BearerKind,
             timeout: Duration = .seconds(30)) throws -> GATTClient {
    let bearer: any ATTBearer = switch kind {
    case .inMemory: peripheral.connect()
    case .socketPair: try peripheral.connectSocketPair()
    }
    return GATTClient(bearer: bearer, transactionTimeout: timeout)
}

/// Collects copied notification values and lets a test await the first `n` of them.
final class Inbox: Sendable {
    private let stream: AsyncStream<[UInt8]>
    private let continuation: AsyncStream<[UInt8]>.Continuation

    init() { (stream, continuation) = AsyncStream<[UInt8]>.makeStream() }

    /// A handler that copies each value into the inbox.
    var handler: GATTValueHandler {
        let c = continuation
        return { event in c.yield(Array(event.value)) }
    }

    /// The next `n` values, in arrival order.
    func next(_ n: Int) async -> [[UInt8]] {
        var out: [[UInt8]] = []
        for await v in stream {
            out.append(v)
            if out.count == n { break }
        }
        return out
    }
}
