import ChildProcess
import Foundation
import HealthGateTesting
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The one child-process watcher the bench and the tests share: exit status, the peak of the
/// child's own anonymous memory, the bound, the environment.
@Suite("WatchedChild: status, peak anonymous memory, timeout, environment")
struct WatchedChildTests {
    @Test("a child gets its three streams and no other descriptor of this process (a pipe without O_CLOEXEC stays here)")
    func noDescriptorLeaks() async throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)   // no O_CLOEXEC, as Foundation's pipes for another child
        defer { close(ends[0]); close(ends[1]) }
        let ours = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(ends[1])")
        let out = NSTemporaryDirectory() + "watched-fds-\(UUID().uuidString).txt"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let status = try await offThread {
            try WatchedChild(["sh", "-c", "for f in /proc/$$/fd/*; do echo \"${f##*/} $(readlink $f)\"; done"], stdout: .file(out)).wait(timeout: 30)
        }
        #expect(status == 0)
        let seen = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(!seen.contains { $0.hasSuffix(ours) }, "the child inherited \(ours): \(seen)")
        #expect(Set(seen.compactMap { $0.split(separator: " ").first.flatMap { Int($0) } }).isSubset(of: [0, 1, 2, 3, 10, 255]), "\(seen)")
    }

    @Test("exit codes and signals come back as sysexits-style statuses")
    func statuses() async throws {
        let statuses = try await offThread { () throws -> [Int32] in
            try [["sh", "-c", "exit 3"], ["sh", "-c", "kill -9 $$"], ["true"]].map { try WatchedChild.run($0, timeout: 30).status }
        }
        #expect(statuses == [3, 128 + 9, 0])
    }

    @Test("the peak is the child's own anonymous memory: a 64 MiB buffer shows, this process's size does not")
    func peakIsTheChilds() async throws {
        // This test process holds a big buffer too: a measure that counted the parent's memory
        // (wait4's ru_maxrss of a posix_spawn child) would report it for the small child.
        let ballast = [UInt8](repeating: 1, count: 96 << 20)
        let (big, small) = try await offThread { () throws -> (WatchedChild.Outcome, WatchedChild.Outcome) in
            let big = try WatchedChild.run(["python3", "-c", "import time; b = bytearray(64 << 20); time.sleep(0.3)"], timeout: 60)
            let small = try WatchedChild.run(["python3", "-c", "import time; time.sleep(0.3)"], timeout: 60)
            return (big, small)
        }
        #expect(ballast.count == 96 << 20)
        #expect(big.status == 0 && small.status == 0)
        #expect(big.peakAnonymousBytes >= 64 << 20, "\(big.peakAnonymousBytes >> 20) MiB")
        #expect(small.peakAnonymousBytes > 0, "no RssAnon was read")
        #expect(small.peakAnonymousBytes < 48 << 20, "\(small.peakAnonymousBytes >> 20) MiB: the parent's memory was counted")
    }

    @Test("a child still running at the bound is killed and reported")
    func timeout() async throws {
        let (threw, status, running) = try await offThread { () throws -> (Bool, Int32, Bool) in
            let child = try WatchedChild(["sleep", "30"])
            var threw = false
            do { try child.wait(timeout: 0.3) } catch is WatchedChild.Failure { threw = true }
            return (threw, child.exitStatus ?? -1, try child.poll())
        }
        #expect(threw)
        #expect(status == 137)
        #expect(!running)
    }

    @Test("a child starts with no signal blocked, whatever the spawning thread blocks (run's signal trap blocks SIGTERM)")
    func signalsAreNotInheritedBlocked() async throws {
        // posix_spawn copies the calling thread's signal mask unless told otherwise: a child of
        // a thread that blocks SIGUSR2 (as `run`'s trap blocks SIGTERM, SIGINT, SIGHUP) would
        // ignore it and outlive every signal but SIGKILL.
        let status = try await offThread { () throws -> Int32 in
            var blocked = sigset_t(), old = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGUSR2)
            pthread_sigmask(SIG_BLOCK, &blocked, &old)
            defer { pthread_sigmask(SIG_SETMASK, &old, nil) }
            let child = try WatchedChild(["sleep", "30"])
            usleep(200_000)   // the child is running sleep(1), not still being set up
            child.signal(SIGUSR2)
            return try child.wait(timeout: 10)
        }
        #expect(status == 128 + SIGUSR2)
    }

    @Test("the environment is this process's with the given variables set and removed")
    func environment() async throws {
        let (set, removed) = try await offThread { () throws -> (Int32, Int32) in
            let set = try WatchedChild.run(["sh", "-c", #"test "$HG_WATCHED" = yes && test -n "$PATH""#],
                                           environment: ["HG_WATCHED": "yes"], timeout: 30).status
            let removed = try WatchedChild(["sh", "-c", #"test -z "${HG_WATCHED+set}""#], environment: ["HG_WATCHED": "yes"],
                                           removing: ["HG_WATCHED"]).wait(timeout: 30)
            return (set, removed)
        }
        #expect(set == 0)
        #expect(removed == 0)
    }
}
