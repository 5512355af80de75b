import GATT
import Foundation
import Simulators
import Synchronization

/// Collects values from any thread, for tests.
final class Collector<T: Sendable>: Sendable {
    private let items = Mutex<[T]>([])
    func append(_ x: T) { items.withLock { $0.append(x) } }
    var all: [T] { items.withLock { $0 } }
}

/// Waits (polling) until `condition` holds or `seconds` pass; returns whether it held. The bound
/// only keeps a broken test from hanging: no test asserts how long anything took.
func eventually(_ seconds: Double = 60, _ condition: () -> Bool) async -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}


/// True once the client has enabled Heart Rate Measurement notifications on `strap`'s current
/// connection (its CCCD reads 0x0001; the simulated strap resets it on every new connection).
func subscribed(_ strap: SimulatedPeripheral) async -> Bool {
    await eventually { strap.cccdHandle(of: 0x2A37).flatMap { strap.value(at: $0) } == [0x01, 0x00] }
}
