import Foundation
import HealthGateTesting
import Platform
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The system-call helpers every blocking loop uses: a wake-up pipe that wakes a `poll` from
/// another thread, `poll` with a deadline, EINTR retry, descriptor flags.
@Suite struct PlatformTests {
    @Test("a poke makes the wake pipe readable and wakes a poll blocked on it from another thread")
    func pokeWakesAPoll() async throws {
        let pipe = try WakePipe.make()
        var idle = [pipe.pollEntry]
        #expect(SystemCall.poll(&idle, timeout: 0) == 0, "an unpoked pipe must not be readable")
        Thread.detachNewThread {
            usleep(50_000)
            pipe.poke()
        }
        let ready = await offThread { () -> Int32 in
            var fds = [pipe.pollEntry]
            return SystemCall.poll(&fds, timeout: 30)
        }
        #expect(ready == 1)
    }

    @Test("both ends are close-on-exec and non-blocking: many pokes never block")
    func flags() throws {
        let pipe = try WakePipe.make()
        #expect(fcntl(pipe.readEnd, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(pipe.readEnd, F_GETFL) & O_NONBLOCK != 0)
        for _ in 0..<100_000 { pipe.poke() }   // far beyond a pipe's 64 KiB: a blocking write would hang here
        var fds = [pipe.pollEntry]
        #expect(SystemCall.poll(&fds, timeout: 0) == 1)
    }

    @Test("poll with a deadline returns 0 when nothing is ready, no sooner than asked; an empty wait returns at once")
    func pollDeadline() throws {
        let pipe = try WakePipe.make()
        var fds = [pipe.pollEntry]
        let start = SystemCall.monotonicSeconds()
        #expect(SystemCall.poll(&fds, timeout: 0.05) == 0)
        #expect(SystemCall.monotonicSeconds() - start >= 0.049)
        #expect(SystemCall.poll(&fds, timeout: -1) == 0, "a deadline already past polls once without waiting")
    }

    @Test("retrying calls again while the call fails with EINTR, and returns the first other result with its errno")
    func retrying() {
        var calls = 0
        let r = SystemCall.retrying { () -> Int in
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            errno = EAGAIN
            return -1
        }
        #expect(r == -1 && errno == EAGAIN && calls == 3)
        #expect(SystemCall.retrying { 7 } == 7)
    }

    @Test("setNonBlocking returns the old flags, and setFlags puts them back")
    func nonBlocking() throws {
        var fds: [Int32] = [-1, -1]
        #expect(Glibc.pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let old = SystemCall.setNonBlocking(fds[0], true)
        #expect(old & O_NONBLOCK == 0)
        #expect(fcntl(fds[0], F_GETFL) & O_NONBLOCK != 0)
        SystemCall.setFlags(fds[0], old)
        #expect(fcntl(fds[0], F_GETFL) & O_NONBLOCK == 0)
    }
}
