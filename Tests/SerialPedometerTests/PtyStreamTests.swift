import Foundation
import Testing
@testable import SerialPedometer
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Real line streams through a real pty, read by the termios port and the poll-thread reader.
@Suite(.serialized) struct PtyStreamTests {
    @Test func everyLineShapeAndEndingThroughAPty() throws {
        let pty = try PtyPeer()
        defer { withExtendedLifetime(pty) {} }  // the master must outlive the reads
        let rig = try PtyRig(path: pty.path, session: makeSession())
        defer { rig.stop() }
        let padded = "steps:130" + String(repeating: " ", count: 21) + "\r\n"  // micro:bit, 32 bytes
        let stream: [String] = [
            "BMA456 Step Counter\r\n",                               // banner: rejected
            "{\"steps\":100,\"t\":1700000001.25,\"seq\":7,\"boot\":\"b3\"}\n",
            "steps:110,seq:8,boot:b3\r\n",
            "steps=120\tseq=9\tboot=b3\r",
            padded,
            "140\n",
            "150.00\r\n",
            "Step: 9999\n",                                          // vendor text: rejected
        ]
        for part in stream { pty.send(part) }
        #expect(rig.wait { $0.readings.count == 6 && $0.rejections.count == 2 })
        #expect(rig.readings.map(\.steps) == [100, 110, 120, 130, 140, 150])
        #expect(rig.readings[0] == PedometerReading(steps: 100, deviceTime: 1_700_000_001.25, seq: 7, boot: "b3"))
        #expect(rig.samples.reduce(0) { $0 + $1.steps } == 50)
        #expect(rig.session.rejects["not-pedometer"] == 2)
    }

    @Test func oversizedAndInvalidUTF8LinesAreCountedNotFatal() throws {
        let pty = try PtyPeer()
        defer { withExtendedLifetime(pty) {} }  // the master must outlive the reads
        let rig = try PtyRig(path: pty.path, session: makeSession())
        defer { rig.stop() }
        pty.send("10\n")
        pty.send([UInt8](repeating: UInt8(ascii: "8"), count: 1000) + [0x0A])
        pty.send([0x31, 0xFF, 0x32, 0x0D, 0x0A])
        pty.send("13\n")
        #expect(rig.wait { $0.readings.count == 2 && $0.rejections.count == 2 })
        #expect(rig.rejections == [.tooLong(bytes: 1000), .invalidUTF8])
        #expect(rig.session.rejects == ["too-long": 1, "invalid-utf8": 1])
        #expect(rig.samples.map(\.steps) == [3])
    }

    @Test func portIsRawExclusiveAndNonBlocking() throws {
        let pty = try PtyPeer()
        defer { withExtendedLifetime(pty) {} }  // the master must outlive the reads
        let port = try SerialPort(path: pty.path, options: SerialPortOptions(baud: 9600))
        defer { port.close() }
        #expect(port.isExclusive)
        #expect(fcntl(port.fd, F_GETFL) & O_NONBLOCK != 0)
        #expect(port.read() == .wouldBlock)
        var tio = termios()
        #expect(tcgetattr(port.fd, &tio) == 0)
        #expect(tio.c_lflag & tcflag_t(ICANON | ECHO) == 0)
        #expect(tio.c_cflag & tcflag_t(CSIZE) == tcflag_t(CS8))
        #expect(tio.c_cflag & tcflag_t(PARENB | CSTOPB) == 0)
        #expect(tio.c_cflag & tcflag_t(CRTSCTS) == 0)
        #expect(cfgetispeed(&tio) == speed_t(B9600))
        // A second reader is refused — as root too, where TIOCEXCL alone does not stop the
        // open (the port's flock does): two readers would each get part of every line.
        #expect(throws: SerialPortError.busy(pty.path)) { try SerialPort(path: pty.path) }
        if geteuid() == 0 {  // root opens past TIOCEXCL: the refusal above was the lock's
            let shared = try SerialPort(path: pty.path, options: SerialPortOptions(exclusive: false))
            shared.close()
        }
    }

    /// Once the reader closes the port, the next one opens it (the lock goes with the last
    /// descriptor of the open file: a child another test spawns in that moment shares it until
    /// it execs, so the open is tried again for a while, as `run` tries at every scan).
    @Test func theLockGoesWithTheClose() throws {
        let pty = try PtyPeer()
        defer { withExtendedLifetime(pty) {} }
        let first = try SerialPort(path: pty.path)
        first.close()
        var second: SerialPort?
        let deadline = ContinuousClock.now + .seconds(30)
        while second == nil {
            do { second = try SerialPort(path: pty.path) } catch SerialPortError.busy(_) where ContinuousClock.now < deadline { usleep(50_000) }
        }
        #expect(second?.isExclusive == true)
        second?.close()
    }

    @Test func openErrorsSayWhatToDo() throws {
        #expect(throws: SerialPortError.notFound("/dev/healthgate-no-such-tty")) {
            try SerialPort(path: "/dev/healthgate-no-such-tty")
        }
        #expect(throws: SerialPortError.notATerminal("/dev/null")) { try SerialPort(path: "/dev/null") }
        #expect(throws: SerialPortError.unsupportedBaud(12345)) {
            try SerialPort(path: "/dev/null", options: SerialPortOptions(baud: 12345))
        }
    }
}
