import GATT
import HealthGateTesting
import Glibc
import Simulators
import Synchronization

/// Which bearer a test runs over: both must behave the same.
enum BearerKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case inMemory, socketPair
    /// A Unix-domain `SOCK_SEQPACKET` socket in the file system, as `run` reaches a strap
    /// configured with `socket = …` (``SocketATTBearer/connect(unixSocket:)``).
    case unixSocket
    var description: String { rawValue }
}

/// Connects a client to `peripheral` over the chosen bearer.
func connect(_ peripheral: SimulatedPeripheral, over kind: BearerKind,
             timeout: Duration = .seconds(30)) throws -> GATTClient {
    let bearer: any ATTBearer = switch kind {
    case .inMemory: peripheral.connect()
    case .socketPair: try peripheral.connectSocketPair()
    case .unixSocket: try connectOverUnixSocket(peripheral)
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

/// Serves `peripheral` on a fresh Unix socket, connects to it, and once the peripheral has
/// accepted the connection removes the listener (the link stays up).
func connectOverUnixSocket(_ peripheral: SimulatedPeripheral) throws -> SocketATTBearer {
    let path = "/tmp/hg-att-\(UInt32.random(in: 0...UInt32.max)).sock"
    let before = peripheral.connectionCount
    let listener = try peripheral.listen(onUnixSocket: path)
    defer { listener.close() }
    let bearer = try SocketATTBearer.connect(unixSocket: path)
    // Closing the listener before the peripheral accepted would reset the pending connection.
    let deadline = ContinuousClock.now + .seconds(60)
    while peripheral.connectionCount == before && ContinuousClock.now < deadline { usleep(1_000) }
    return bearer
}
