import Foundation
import HealthGateTesting
import Platform
import Synchronization
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
import Locking
#endif

/// The one stop mechanism: hooks run once at stop and cancelled ones never; the descriptor wakes
/// a poll (also when it is first asked for after the stop); a sleep returns early at stop.
@Suite struct StopSignalTests {
    @Test func hooksRunOnceAtStopAndCancelledOnesNever() {
        let stop = StopSignal()
        let ran = Lock<[Int]>([])
        let first = stop.onRaise { ran.withLock { $0.append(1) } }
        let second = stop.onRaise { ran.withLock { $0.append(2) } }
        for _ in 0..<1_000 { stop.onRaise { ran.withLock { $0.append(-1) } }.cancel() }
        second.cancel()
        #expect(stop.pendingHooks == 1)
        stop.raise()
        stop.raise()
        #expect(ran.withLock { $0 } == [1])
        first.cancel()   // harmless after the fact
        stop.onRaise { ran.withLock { $0.append(3) } }   // after stop: runs at once
        #expect(ran.withLock { $0 } == [1, 3])
        #expect(stop.pendingHooks == 0)
    }

    @Test func stopWakesAPoll() {
        let stop = StopSignal()
        #expect(!stop.isRaised)
        #expect(!stop.sleep(.zero))
        var idle = pollfd(fd: stop.fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&idle, 1, 0) == 0, "an unraised stop's descriptor must not be readable")
        stop.raise()
        stop.raise()
        #expect(stop.isRaised)
        var p = pollfd(fd: stop.fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&p, 1, 0) == 1)
        #expect(stop.sleep(.seconds(5)))
    }

    @Test("a descriptor first asked for after the stop is readable at once")
    func descriptorMadeAfterStopIsReadable() {
        let stop = StopSignal()
        stop.raise()
        var p = pollfd(fd: stop.fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&p, 1, 0) == 1)
    }

    @Test("a sleep blocked on another thread returns early when the stop is raised")
    func sleepReturnsEarlyAtStop() async {
        let stop = StopSignal()
        Thread.detachNewThread {
            usleep(50_000)
            stop.raise()
        }
        let (early, took) = await offThread { () -> (Bool, Double) in
            let t0 = SystemCall.monotonicSeconds()
            let early = stop.sleep(.seconds(60))
            return (early, SystemCall.monotonicSeconds() - t0)
        }
        #expect(early)
        #expect(took < 30, "the sleep ran \(took) s after the stop")
    }
}
