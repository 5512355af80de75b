import Foundation
import Synchronization
@testable import SerialPedometer
#if canImport(Glibc)
@preconcurrency import Glibc
import Locking
#endif

/// A pseudo-terminal standing in for a USB-serial pedometer: the test writes to the master
/// side as the firmware would; the code under test opens the slave path as its serial port.
final class PtyPeer: @unchecked Sendable {
    let master: Int32
    let path: String
    private var open = true

    init() throws {
        var m: Int32 = -1, s: Int32 = -1
        guard openpty(&m, &s, nil, nil, nil) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        // Children other tests spawn meanwhile must not inherit the master: one holding a copy
        // would keep the slave from seeing the hangup ``unplug()`` is for.
        _ = fcntl(m, F_SETFD, FD_CLOEXEC)
        master = m
        path = String(cString: ttyname(s))
        close(s)  // the port under test opens the slave by path
    }

    deinit { unplug() }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
            precondition(n > 0, "write to pty master failed: errno \(errno)")
            off += n
        }
    }

    /// Closes the master: the slave sees a hangup, as when a USB-serial adapter is pulled.
    func unplug() {
        if open { close(master); open = false }
    }
}

/// A port + reader + session over a pty, collecting every event for assertions.
final class PtyRig: @unchecked Sendable {
    let port: SerialPort
    private(set) var reader: SerialReader!
    private final class Box: Sendable {
        let m: Lock<(session: PedometerSession, events: [SessionEvent], gone: String?, stopped: Bool, after: Int, bytes: Int)>
        init(_ session: PedometerSession) { m = Lock((session, [], nil, false, 0, 0)) }
    }
    private let box: Box

    init(path: String, session: PedometerSession, options: SerialPortOptions = SerialPortOptions()) throws {
        port = try SerialPort(path: path, options: options)
        let box = Box(session)
        self.box = box
        reader = SerialReader(port: port) { event in
            box.m.withLock { s in
                if s.gone != nil || s.stopped { s.after += 1; return }
                switch event {
                case .chunk(let bytes, let at):
                    s.bytes += bytes.count
                    s.events += s.session.feed(bytes, receivedAt: at)
                case .gone(let why):
                    s.events += s.session.finish(receivedAt: Date())
                    s.gone = why
                case .stopped: s.stopped = true
                }
            }
        }
    }

    var events: [SessionEvent] { box.m.withLock { $0.events } }
    var session: PedometerSession { box.m.withLock { $0.session } }
    var goneReason: String? { box.m.withLock { $0.gone } }
    /// Bytes the reader has delivered so far.
    var bytesReceived: Int { box.m.withLock { $0.bytes } }
    /// Events delivered after the reader said it was gone or stopped (must stay 0).
    var eventsAfterEnd: Int { box.m.withLock { $0.after } }

    var readings: [PedometerReading] {
        events.compactMap { if case .accepted(_, let r) = $0 { r } else { nil } }
    }
    var rejections: [LineRejection] {
        events.compactMap { if case .rejected(_, let r) = $0 { r } else { nil } }
    }
    var samples: [StepInterval] {
        events.compactMap { if case .sample(let s) = $0 { s } else { nil } }
    }

    /// Waits (up to a generous 60 s, so a loaded CI machine is not a failure) until `condition`
    /// holds; returns whether it did. Not a timing assertion: only the outcome is checked.
    func wait(until condition: (PtyRig) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if condition(self) { return true }
            usleep(5000)
        }
        return condition(self)
    }

    func stop() { reader.stop(); port.close() }
}

func makeSession(_ format: LineFormat = .auto, bits: Int? = nil, state: CounterState = CounterState()) -> PedometerSession {
    PedometerSession(format: format, counter: StepCounter(
        configuration: try! CounterConfiguration(deviceID: "PTY", counterBits: bits), state: state))
}
