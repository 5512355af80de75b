import Testing
@testable import Uplink

/// The uplink's server deadline (``ServerDeadline/Clock``): it passes on time while the process
/// runs, and time the process could not run (a tick that came seconds late) does not count
/// against the server. A whole test suite once starved the pool for 70 s, and the uplink's 30 s
/// deadline charged that to PostgreSQL.
@Suite struct ServerDeadlineTests {
    static let start = ContinuousClock.now

    /// Ticks every 500 ms from `from` to `to` seconds after `start` (`from` excluded).
    static func ticks(_ clock: inout ServerDeadline.Clock, from: Double, to: Double) -> [Double] {
        var passedAt: [Double] = []
        var t = from + 0.5
        while t <= to + 1e-9 {
            if clock.passed(at: start + .milliseconds(Int((t * 1000).rounded()))) { passedAt.append(t) }
            t += 0.5
        }
        return passedAt
    }

    @Test func passesAtTheDeadlineWhenTicksComeOnTime() {
        var clock = ServerDeadline.Clock(deadline: .seconds(5), now: Self.start)
        #expect(Self.ticks(&clock, from: 0, to: 4.5).isEmpty)
        let passed = clock.passed(at: Self.start + .seconds(5))
        #expect(passed)
    }

    @Test func aTickSecondsLateDoesNotCountAgainstTheServer() {
        var clock = ServerDeadline.Clock(deadline: .seconds(5), now: Self.start)
        #expect(Self.ticks(&clock, from: 0, to: 3).isEmpty)
        // The process could not run for 10 s: the next tick comes at 13.5 s instead of 3.5 s.
        let late = clock.passed(at: Self.start + .milliseconds(13_500))
        #expect(!late)
        // The deadline moved by the lateness (10 s): it now passes at 15 s, not at 5 s.
        #expect(Self.ticks(&clock, from: 13.5, to: 14.5).isEmpty)
        let passed = clock.passed(at: Self.start + .seconds(15))
        #expect(passed)
    }

    @Test func schedulingNoiseIsNotForgiven() {
        var clock = ServerDeadline.Clock(deadline: .seconds(5), now: Self.start)
        // Every tick 1.5 s late (under the 2 s that are forgiven): the deadline stays at 5 s.
        var passed = false
        var t = 0.0
        while !passed && t < 10 {
            t += 2.0
            passed = clock.passed(at: Self.start + .seconds(t))
        }
        #expect(passed && t == 6.0, "passed at \(t) s")
    }
}
