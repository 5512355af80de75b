import Gateway
import Testing

/// The human text of `serial watch`'s and `live`'s events (Gateway/EventText.swift): what each
/// front-end prints, so the wording and order are checked once here.
@Suite("Event text: serial watch's and live's human lines")
struct EventTextTests {
    struct Failure: Error, CustomStringConvertible { var description: String { "permission denied" } }

    @Test func anUnpluggedPortSaysWhyTalliesAndWaitsWhenReopening() {
        var tally = PedometerTally()
        tally.accepted = 12
        tally.rejected = ["too-long": 1, "garbage": 2]
        tally.samples = 3
        tally.steps = 40
        let event = PedometerWatchSession.Event.ended(path: "/dev/ttyUSB0", id: "A1", gone: "end of file", tally: tally)
        #expect(event.texts(rules: [], auto: false, reopen: true, storing: true) == [
            .line("unplugged  A1: end of file"),
            .note("A1: 12 line(s) accepted, rejected: 2 garbage, 1 too-long; 3 sample(s), 40 step(s) stored"),
            .note("waiting for /dev/ttyUSB0 to come back (Ctrl-C to stop)"),
        ])
        // Stopped (not gone): the tally only, and nothing to wait for.
        let stopped = PedometerWatchSession.Event.ended(path: "/dev/ttyUSB0", id: "A1", gone: nil, tally: PedometerTally())
        #expect(stopped.texts(rules: [], auto: false, reopen: true, storing: false) == [
            .note("A1: 0 line(s) accepted, rejected: none; 0 sample(s), 0 step(s) (not stored)"),
        ])
    }

    @Test func storingAndOpenFailuresDependOnTheMode() {
        #expect(PedometerWatchSession.Event.stored(id: "A1", samples: 2).texts(rules: [], auto: false, reopen: false, storing: true)
                == [.line("stored  2 sample(s) of A1")])
        #expect(PedometerWatchSession.Event.stored(id: "A1", samples: 2).texts(rules: [], auto: false, reopen: false, storing: false).isEmpty)
        // With --auto a port that cannot be opened is reported and watching goes on; a named
        // port's failure ends the command with its own message instead.
        let failed = PedometerWatchSession.Event.openFailed(path: "/dev/ttyACM0", id: "B", Failure())
        #expect(failed.texts(rules: [], auto: true, reopen: false, storing: true) == [.error("cannot open /dev/ttyACM0: permission denied")])
        #expect(failed.texts(rules: [], auto: false, reopen: false, storing: true).isEmpty)
    }

    @Test func rrIntervalsAreWholeMillisecondsFromTicks() {
        // 1/1024 s ticks: 1024 → 1000 ms, 832 → 812.5 → 812 (ties to even), 1 → 0.98 → 1.
        #expect(EventText.rr([1024, 832, 1]) == "RR 1000 812 1 ms")
    }
}
