import BluetoothLinux
import Foundation
import HealthGateConfiguration
import SerialPedometer
import HealthModel
import HeartRateProfile
import Sysexits
import Udev

// The human shapes of the strap commands' events (`live`, `record`), beside their JSON shapes
// (EventJSON.swift and PedometerWatchSession's), so that every front-end says the same thing.
// An ``EventText`` is a note or an error (stderr) or a line (stdout); the front-end prints it.

/// One event said for people: a note for stderr, or a line of output.
package enum EventText: Equatable {
    /// Progress or a problem (stderr).
    case note(String)
    /// A reading (stdout).
    case line(String)
    /// A failure the command goes on after (stderr, with the program's name).
    case error(String)
}

extension StrapSession.Event {
    /// How `live` says this event; `straps` are the session's straps in its order.
    package func text(straps: [StrapTarget]) -> EventText {
        func who(_ k: Int) -> String { straps[k].name ?? straps[k].address.description }
        switch self {
        case .connected(let k, let c):
            let loc = c.sensorLocation.map { ", \($0.name)" } ?? ""
            return .note(c.number == 1 ? "Connected to \(straps[k])\(loc)." : "Reconnected to \(straps[k]) (connection \(c.number)); notifications on again.")
        case .reading(let r):
            let time = EventText.clock(r.receivedAt), strap = TerminalText.column(who(r.strap), 14)
            guard let m = r.measurement else {
                return .line("\(time)  \(strap) rejected payload \(Hex.string(r.payload)): \(r.rejection ?? "")")
            }
            let contact = switch m.sensorContact {
            case .notSupported: "contact n/a"
            case .notDetected: "NO CONTACT"
            case .detected: "contact ok"
            }
            var s = "\(time)  \(strap) \(String(format: "%3d", Int(m.beatsPerMinute))) bpm  \(TerminalText.column(contact, 12))"
            if !m.rrIntervals.isEmpty { s += " " + EventText.rr(m.rrIntervals.array) }
            if let e = m.energyExpendedKJ { s += "  \(e) kJ" }
            if m.truncated { s += "  (truncated)" }
            return .line(s)
        case .battery(let k, let level, _):
            return .note("\(who(k)): battery \(level)%")
        case .disconnected(let k, let reason):
            return .note("\(straps[k]) disconnected (\(reason)); reconnecting…")
        case .connectFailed(let k, let reason, let pause):
            return .note("Could not connect to \(who(k)): \(reason) Retrying in \(TerminalText.seconds(pause)).")
        case .storeFailed(let why):
            return .note("Saving failed (\(why)); the batch is kept and retried.")
        }
    }
}

extension StrapSessionSummary {
    /// `live`'s closing lines: duration, readings, what was stored, bpm; then one line per
    /// strap of `straps` when there were several.
    package func text(straps targets: [StrapTarget], stored: Bool) -> [String] {
        let d = Int(duration.rounded())
        var line = "Summary: \(d / 3600 > 0 ? "\(d / 3600)h " : "")\(d / 60 % 60)m \(d % 60)s, \(notifications) readings"
        line += stored ? ", \(samplesStored) samples stored in \(batches) batches" : " (not stored)"
        if let mn = minBPM, let mx = maxBPM, let avg = averageBPM {
            line += String(format: ", bpm min %d / avg %.1f / max %d", mn, avg, mx)
        }
        var lines = [line + "."]
        if straps.count > 1 {
            for (k, st) in straps.enumerated() {
                var l = "  \(targets[k]): \(st.notifications) readings, \(st.connections) connections"
                if let mn = st.minBPM, let mx = st.maxBPM, let avg = st.averageBPM { l += String(format: ", bpm %d / %.1f / %d", mn, avg, mx) }
                lines.append(l)
            }
        }
        return lines
    }
}

extension EventText {
    /// A time of day in this machine's zone (`14:03:07`).
    package static func clock(_ d: Date) -> String {
        d.formatted(Date.VerbatimFormatStyle(format: "\(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits)",
                                             timeZone: .current, calendar: .current))
    }

    /// RR intervals for a human line, oldest first, in whole milliseconds with the unit
    /// (`RR 812 776 ms`); JSON keeps the exact 1/1024 s ticks.
    package static func rr(_ ticks: [UInt16]) -> String {
        "RR " + ticks.map { String(format: "%.0f", Double($0) * 1000 / 1024) }.joined(separator: " ") + " ms"
    }
}

extension PedometerWatchSession.Event {
    /// How `serial watch` says this event (none, one or two texts), with the same `rules` and
    /// `auto` as ``jsonObjects(rules:auto:)``; `reopen`: it waits for an unplugged port to
    /// return; `storing`: samples are stored (not `--no-store`).
    package func texts(rules: [GatewayConfig.Pedometer], auto: Bool, reopen: Bool, storing: Bool) -> [EventText] {
        switch self {
        case .monitoring(let source):
            let log = switch source {
            case .udev: "udev daemon running: device events from udev"
            case .kernel: "no udev daemon: device events from the kernel, USB ids from sysfs (tag rules cannot match)"
            case nil: "no device events: looking for devices every 2 s"
            }
            return [.note("\(log); waiting for pedometers matching \(rules.map(\.summary).joined(separator: ", "))")]
        case .carriedOver(let path, let old, let id):
            return [.note("counter state of \(path) carried over from its old id \(old) to \(id)")]
        case .opened(let path, let id, let rule):
            return [.note(auto ? "plugged: \(path) as \(id) (matched \(rule.summary))"
                          : "reading \(path) as \(id) (\(rule.format), \(rule.baud) baud)\(storing ? "" : ", not storing")")]
        case .openFailed(let path, _, let error):
            return auto ? [.error("cannot open \(path): \(error)")] : []
        case .session(_, let e):
            let line = switch e {
            case .accepted(let line, _): "line    \(line)"
            case .rejected(let line, let why): "reject  \(line.map { "\"\($0.prefix(60))\"" } ?? "(line)"): \(why)"
            case .counter(let c): "note    \(c)"
            case .sample(let s):
                "sample  +\(s.steps) steps  \(ISO8601.string(s.start)) … \(ISO8601.string(s.end))" + (s.timingUncertain ? "  (timing uncertain)" : "")
            }
            return [.line(line)]
        case .ended(let path, let id, let gone, let t):
            let rejected = t.rejected.isEmpty ? "none" : t.rejected.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            var texts: [EventText] = gone.map { [.line("unplugged  \(id): \($0)")] } ?? []
            texts.append(.note("\(id): \(t.accepted) line(s) accepted, rejected: \(rejected); \(t.samples) sample(s), \(t.steps) step(s)\(storing ? " stored" : " (not stored)")"))
            if reopen, gone != nil { texts.append(.note("waiting for \(path) to come back (Ctrl-C to stop)")) }
            return texts
        case .stored(let id, let n):
            return storing ? [.line("stored  \(n) sample(s) of \(id)")] : []
        case .storeFailed(let reason):
            return [.error("could not store step samples and the counter state: \(reason); they stay pending and are retried")]
        }
    }
}
