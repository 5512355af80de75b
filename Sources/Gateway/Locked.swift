import Synchronization
import Locking

/// A value behind a mutex, shared by reference: what closures handed to sources and taps
/// capture (a `Mutex` itself cannot be copied into them).
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Lock<Value>

    init(_ value: Value) { mutex = Lock(value) }

    /// Runs `body` with the value, under the lock.
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R {
        mutex.withLock { v -> R in body(&v) }
    }
}
