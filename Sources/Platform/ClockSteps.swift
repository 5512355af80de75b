import CTimerFD
import Foundation
import Glibc
import Locking
import Synchronization

/// Steps of the system's wall clock (`CLOCK_REALTIME`): `date -s`, or NTP setting a Raspberry
/// Pi's clock for the first time after it booted with the time of its last shutdown
/// (`fake-hwclock`, no RTC) — often hours, sometimes a year, forward.
///
/// Sample times are the wall clock at receipt, so an interval from one reading to the next
/// (a strap's energy, a pedometer's steps) would span the step: a year long, or ending before
/// it starts. Sources take a ``Cursor`` and ask it, before each reading, how far the clock
/// stepped since the last one; they move the times they hold (a previous reading's receipt
/// time) by that much, so the next interval lasts what really passed.
///
/// ``system`` watches the real clock from its first use: a thread of its own blocks on a
/// `timerfd` armed with `TFD_TIMER_CANCEL_ON_SET`, which the kernel cancels whenever the wall
/// clock is set; the step is the change of wall − `CLOCK_BOOTTIME` (neither NTP's slewing nor
/// a suspend moves that difference; only a set does). Gradual slewing is no step and is not
/// reported. Tests make their own instance and ``record(_:at:)`` steps into it.
package final class ClockSteps: Sendable {
    /// One step of the wall clock.
    package struct Step: Sendable, Hashable {
        /// How far the wall clock moved beyond the time that passed (positive: forward).
        package var seconds: Double
        /// The wall clock just after the step (Unix seconds).
        package var at: Double

        /// A step of `seconds` seen at wall time `at`.
        package init(seconds: Double, at: Double) {
            self.seconds = seconds
            self.at = at
        }
    }

    /// Steps recorded so far (read on every reading by the ``Cursor``s: one atomic load).
    private let generation = Atomic<Int>(0)
    private let armed = Atomic<Bool>(false)
    private let state = Lock(State())

    private struct State {
        /// The sum of every step's seconds.
        var total = 0.0
        /// The steps recorded (the same as ``ClockSteps/generation``).
        var count = 0
        var last: Step?
        var observers: [Int: @Sendable (Step) -> Void] = [:]
        var nextObserver = 0
    }

    /// An instance that sees only the steps ``record(_:at:)`` is given (tests, replays).
    package init() {}

    /// The system's wall clock, watched from the first use of this property. Without timerfd
    /// (never on Linux ≥ 3.0) no step is ever seen, and intervals behave as before.
    package static let system: ClockSteps = {
        let clock = ClockSteps()
        clock.watchSystemClock()
        return clock
    }()

    /// True while the watcher's timer is armed (``system`` only): the kernel will report a set.
    package var isWatching: Bool { armed.load(ordering: .acquiring) }

    /// How many steps were recorded.
    package var count: Int { generation.load(ordering: .acquiring) }

    /// The most recent step, if any.
    package var last: Step? { state.withLock { $0.last } }

    /// Calls `observer` on the watcher's thread after each step (logging, metrics) until the
    /// returned observation is cancelled.
    package func observe(_ observer: @escaping @Sendable (Step) -> Void) -> Observation {
        let id = state.withLock { s -> Int in
            s.nextObserver += 1
            s.observers[s.nextObserver] = observer
            return s.nextObserver
        }
        return Observation(clock: self, id: id)
    }

    /// An ``observe(_:)`` registration.
    package struct Observation: Sendable {
        let clock: ClockSteps
        let id: Int

        /// Stops the calls (one already under way may still finish).
        package func cancel() {
            _ = clock.state.withLock { $0.observers.removeValue(forKey: id) }
        }
    }

    /// Records a step of `seconds` seen at wall time `at`: the watcher's report, or a test's.
    package func record(_ seconds: Double, at: Double) {
        let step = Step(seconds: seconds, at: at)
        let observers = state.withLock { s -> [@Sendable (Step) -> Void] in
            s.total += seconds
            s.count += 1
            s.last = step
            generation.store(s.count, ordering: .releasing)
            return s.observers.sorted { $0.key < $1.key }.map(\.value)
        }
        for o in observers { o(step) }
    }

    /// A reader's position in the steps: one per stream of readings.
    package func cursor() -> Cursor {
        state.withLock { Cursor(clock: self, seen: $0.count, seenTotal: $0.total) }
    }

    /// A stream's position in a clock's steps. A value type owned by the stream's thread.
    package struct Cursor: Sendable {
        let clock: ClockSteps
        var seen: Int
        var seenTotal: Double

        /// Seconds the wall clock stepped since the last call (or since the cursor was made):
        /// 0 almost always, at the cost of one atomic load.
        package mutating func take() -> Double {
            guard clock.generation.load(ordering: .acquiring) != seen else { return 0 }
            let (count, total) = clock.state.withLock { ($0.count, $0.total) }
            defer { seen = count; seenTotal = total }
            return total - seenTotal
        }
    }

    /// Wall-clock seconds minus `CLOCK_BOOTTIME` seconds: constant until the wall clock is set.
    package static func wallMinusBoot() -> Double {
        var wall = timespec(), boot = timespec(), again = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        clock_gettime(CLOCK_BOOTTIME, &boot)
        clock_gettime(CLOCK_REALTIME, &again)
        let w = (seconds(wall) + seconds(again)) / 2
        return w - seconds(boot)
    }

    private static func seconds(_ t: timespec) -> Double { Double(t.tv_sec) + Double(t.tv_nsec) / 1e9 }

    /// Steps smaller than this are the two clock reads' jitter, not a set.
    package static let resolution = 0.001

    /// Before this wall time (2026-01-01T00:00:00Z, before HealthGate's first release) the
    /// system clock has not been set: a board without an RTC that booted at 1970, or with a
    /// stale `fake-hwclock`.
    package static let earliestPlausible: Double = 1_767_225_600

    /// The wall clock now when it reads before ``earliestPlausible``, else nil.
    package static func implausibleNow() -> Date? {
        let now = Date()
        return now.timeIntervalSince1970 < earliestPlausible ? now : nil
    }

    private func watchSystemClock() {
        let fd = timerfd_create(CLOCK_REALTIME, HG_TFD_CLOEXEC)
        guard fd >= 0 else { return }
        let thread = Thread { [self] in
            var before: Double?
            while true {
                // Arm first, then read the offset: a set after the arming cancels the read below;
                // one before it is already in the offset read now.
                var spec = hg_itimerspec()
                spec.value_sec = 253_402_300_799   // 9999-12-31: never expires
                guard timerfd_settime(fd, HG_TFD_TIMER_ABSTIME | HG_TFD_TIMER_CANCEL_ON_SET, &spec, nil) == 0 else {
                    armed.store(false, ordering: .releasing)
                    return
                }
                armed.store(true, ordering: .releasing)
                let offset = Self.wallMinusBoot()
                if let before, abs(offset - before) >= Self.resolution {
                    record(offset - before, at: Date().timeIntervalSince1970)
                }
                before = offset
                var expirations: UInt64 = 0
                // Blocks until the clock is set (ECANCELED); the timer itself never expires.
                while read(fd, &expirations, 8) < 0 && errno == EINTR {}
            }
        }
        thread.name = "healthgate.clock-steps"
        thread.start()
    }
}

extension ClockSteps.Step {
    /// The step in words: "forward by 365 d 0 h 0 min 2 s", "back by 1.5 s".
    package var described: String {
        "\(seconds >= 0 ? "forward" : "back") by \(Self.text(seconds: seconds))"
    }

    /// A span in words, its sign dropped: "365 d 0 h 0 min 2 s", "1.5 s".
    package static func text(seconds: Double) -> String {
        let magnitude = abs(seconds)
        guard magnitude >= 60 else { return "\((magnitude * 1000).rounded() / 1000) s" }
        let s = Int(magnitude.rounded())
        let (d, h, m, sec) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60, s % 60)
        return [(d, "d"), (h, "h"), (m, "min"), (sec, "s")].drop { $0.0 == 0 }.map { "\($0.0) \($0.1)" }.joined(separator: " ")
    }
}
