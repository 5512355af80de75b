#if HEALTHGATE_TSAN
#if canImport(Glibc)
import Glibc
#endif
#else
import Synchronization
#endif

/// A value behind a mutual-exclusion lock, shared by reference: every lock in HealthGate.
///
/// It is `Synchronization.Mutex` (a futex) in every normal build. In the ThreadSanitizer build
/// (`scripts/sanitize.sh thread` compiles with `-DHEALTHGATE_TSAN`) it is a `pthread_mutex_t`
/// instead, because TSan cannot see `Mutex` order two critical sections: the contended path of
/// the toolchain's `Mutex` lives in an uninstrumented library, so every `Mutex` looked like a
/// data race to it (docs/fuzzing.md, "Sanitizer passes"). TSan intercepts pthread mutexes, so
/// that build checks HealthGate's own atomics and locks without suppressions.
///
/// A class (not `~Copyable` like `Mutex`): closures, tasks and taps capture it directly.
package final class Lock<Value>: @unchecked Sendable {
    #if HEALTHGATE_TSAN
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A lock holding `value`.
    package init(_ value: sending Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    @inline(__always)
    package func withLock<R, E: Error>(_ body: (inout sending Value) throws(E) -> sending R) throws(E) -> sending R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
    #else
    private let mutex: Mutex<Value>

    /// A lock holding `value`.
    package init(_ value: sending Value) { mutex = Mutex(value) }

    /// Runs `body` with the value, holding the lock.
    @inline(__always)
    package func withLock<R, E: Error>(_ body: (inout sending Value) throws(E) -> sending R) throws(E) -> sending R {
        try mutex.withLock(body)
    }
    #endif
}
