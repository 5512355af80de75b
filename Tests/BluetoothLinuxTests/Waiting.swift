import GATT
import HealthGateTesting
import Foundation
import Simulators
import Synchronization
import Locking

/// Collects values from any thread, for tests.
final class Collector<T: Sendable>: Sendable {
    private let items = Lock<[T]>([])
    func append(_ x: T) { items.withLock { $0.append(x) } }
    var all: [T] { items.withLock { $0 } }
}



/// True once the client has enabled Heart Rate Measurement notifications on `strap`'s current
/// connection (its CCCD reads 0x0001; the simulated strap resets it on every new connection).
func subscribed(_ strap: SimulatedPeripheral) async -> Bool {
    await eventually { strap.cccdHandle(of: 0x2A37).flatMap { strap.value(at: $0) } == [0x01, 0x00] }
}
