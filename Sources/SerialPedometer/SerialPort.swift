import Foundation
import Synchronization
import Platform
#if canImport(Glibc)
@preconcurrency import Glibc
import Locking
#endif

/// Hardware or software flow control on the port.
package enum FlowControl: String, Sendable, Hashable, CaseIterable {
    /// No flow control (the default: pedometers do not use it).
    case none
    /// RTS/CTS hardware handshaking.
    case rtscts
    /// XON/XOFF software flow control.
    case xonxoff
}

/// How a serial port is opened.
package struct SerialPortOptions: Sendable, Hashable {
    /// Bits per second; one of the standard termios rates (9600 … 4000000).
    package var baud: Int
    /// Flow control; none unless asked.
    package var flowControl: FlowControl
    /// Take the port with `TIOCEXCL`, so a second open fails (EBUSY) and two readers never split
    /// one stream. (The kernel lets processes with CAP_SYS_ADMIN bypass it.)
    package var exclusive: Bool

    /// 115200 8N1, no flow control, exclusive.
    package init(baud: Int = 115_200, flowControl: FlowControl = .none, exclusive: Bool = true) {
        self.baud = baud
        self.flowControl = flowControl
        self.exclusive = exclusive
    }

    /// The baud rates termios supports, in bits per second.
    package static let supportedBauds: [Int] = [1200, 2400, 4800, 9600, 19200, 38400, 57600, 115_200, 230_400,
                                               460_800, 500_000, 576_000, 921_600, 1_000_000, 1_500_000,
                                               2_000_000, 3_000_000, 4_000_000]

    static func speed(_ baud: Int) -> speed_t? {
        switch baud {
        case 1200: speed_t(B1200)
        case 2400: speed_t(B2400)
        case 4800: speed_t(B4800)
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 115_200: speed_t(B115200)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        case 500_000: speed_t(B500000)
        case 576_000: speed_t(B576000)
        case 921_600: speed_t(B921600)
        case 1_000_000: speed_t(B1000000)
        case 1_500_000: speed_t(B1500000)
        case 2_000_000: speed_t(B2000000)
        case 3_000_000: speed_t(B3000000)
        case 4_000_000: speed_t(B4000000)
        default: nil
        }
    }
}

/// Failures opening or configuring a port. Each says what, why and what to do.
package enum SerialPortError: Error, Sendable, Hashable, CustomStringConvertible {
    case notFound(String)
    case permissionDenied(String)
    case busy(String)
    case notATerminal(String)
    /// The device went away between its opening and the end of its setup (unplugged then).
    case vanished(String)
    case unsupportedBaud(Int)
    case system(String, call: String, errno: Int32)

    package var description: String {
        switch self {
        case .notFound(let p):
            "\(p) does not exist: is the pedometer plugged in? `healthgate serial list` shows the serial devices"
        case .permissionDenied(let p):
            "no permission to open \(p): install udev-rules/70-healthgate.rules and add yourself to the healthgate group (docs/serial-pedometers.md)"
        case .busy(let p):
            "\(p) is in use by another program (it holds the port exclusively, or another HealthGate reads it): stop the other reader and try again"
        case .notATerminal(let p):
            "\(p) is not a serial port (termios refused it): pass a tty device such as /dev/ttyUSB0"
        case .vanished(let p):
            "\(p) went away while it was being opened (unplugged, or its driver hung it up): plug the pedometer in again and rerun"
        case .unsupportedBaud(let b):
            "baud rate \(b) is not supported: use one of \(SerialPortOptions.supportedBauds.map(String.init).joined(separator: ", "))"
        case .system(let p, let call, let e):
            "\(call) failed on \(p): \(String(cString: strerror(e))) (errno \(e))"
        }
    }
}

/// The result of one read.
package enum SerialRead: Sendable, Hashable {
    /// Bytes arrived.
    case data([UInt8])
    /// Nothing to read right now.
    case wouldBlock
    /// The device is gone (unplugged, hung up: EOF, EIO, ENXIO, ENODEV).
    case gone(String)
}

/// An open serial port in raw 8N1 mode, non-blocking.
///
/// Thread rules: the descriptor is used by one reader at a time (``SerialReader`` owns it while it
/// runs); ``close()`` is idempotent and may be called from any thread once reading has stopped.
package final class SerialPort: @unchecked Sendable {
    /// The path the port was opened by.
    package let path: String
    /// The file descriptor (non-blocking).
    package let fd: Int32
    private let closed = Lock(false)

    /// Opens `path` with `O_NOCTTY | O_NONBLOCK`, takes it exclusively (unless told not to), and
    /// sets raw mode, the baud rate, 8 data bits, no parity, one stop bit, `CLOCAL | CREAD`, and
    /// the flow control asked for. Input already pending is kept.
    package init(path: String, options: SerialPortOptions = SerialPortOptions()) throws {
        guard let speed = SerialPortOptions.speed(options.baud) else { throw SerialPortError.unsupportedBaud(options.baud) }
        let fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let e = errno
            switch e {
            case ENOENT, ENXIO, ENODEV: throw SerialPortError.notFound(path)
            case EACCES, EPERM: throw SerialPortError.permissionDenied(path)
            case EBUSY: throw SerialPortError.busy(path)
            case EIO: throw SerialPortError.vanished(path)
            default: throw SerialPortError.system(path, call: "open", errno: e)
            }
        }
        func fail(_ call: String) -> any Error {
            let e = errno
            Glibc.close(fd)
            if e == ENOTTY || e == EINVAL { return SerialPortError.notATerminal(path) }
            // A tty hung up (unplugged) after open(2) answers every ioctl with EIO.
            if e == EIO || e == ENXIO || e == ENODEV { return SerialPortError.vanished(path) }
            return SerialPortError.system(path, call: call, errno: e)
        }
        var tio = termios()
        guard tcgetattr(fd, &tio) == 0 else { throw fail("tcgetattr") }
        if options.exclusive {
            guard ioctl(fd, UInt(TIOCEXCL)) == 0 else { throw fail("ioctl(TIOCEXCL)") }
            // TIOCEXCL does not stop root (CAP_SYS_ADMIN opens anyway), and a gateway often
            // runs as root: two readers of one tty would each get part of every line. An
            // exclusive flock(2) on the device holds for root too, between every HealthGate
            // process (`run`, `serial watch`) and tools that lock the same way (picocom does).
            if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                if errno == EWOULDBLOCK {
                    Glibc.close(fd)
                    throw SerialPortError.busy(path)
                }
                throw fail("flock")
            }
        }
        cfmakeraw(&tio)
        tio.c_cflag &= ~(tcflag_t(CSIZE | PARENB | CSTOPB) | tcflag_t(CRTSCTS))
        tio.c_cflag |= tcflag_t(CS8 | CLOCAL | CREAD)
        tio.c_iflag &= ~tcflag_t(IXON | IXOFF | IXANY)
        switch options.flowControl {
        case .none: break
        case .rtscts: tio.c_cflag |= tcflag_t(CRTSCTS)
        case .xonxoff: tio.c_iflag |= tcflag_t(IXON | IXOFF)
        }
        withUnsafeMutableBytes(of: &tio.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard cfsetispeed(&tio, speed) == 0, cfsetospeed(&tio, speed) == 0 else { throw fail("cfsetspeed") }
        guard tcsetattr(fd, TCSANOW, &tio) == 0 else { throw fail("tcsetattr") }
        // Input that arrived before the open is kept, not flushed: it may be real readings
        // (a partial first line is rejected or caught by the counter's rate cap).
        self.path = path
        self.fd = fd
    }

    deinit { close() }

    /// True when the port is held with `TIOCEXCL` (read back with `TIOCGEXCL`).
    package var isExclusive: Bool {
        var v: Int32 = 0
        // TIOCGEXCL = _IOR('T', 0x40, int); Glibc's module does not export it.
        return ioctl(fd, UInt(0x8004_5440), &v) == 0 && v != 0
    }

    /// Reads what is available (at most `max` bytes), never blocking.
    package func read(max: Int = 4096) -> SerialRead {
        var buf = [UInt8](repeating: 0, count: max)
        let n = SystemCall.retrying { buf.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, max) } }
        if n > 0 { return .data(Array(buf[0..<n])) }
        if n == 0 { return .gone("end of file") }
        let e = errno
        return e == EAGAIN ? .wouldBlock : .gone(String(cString: strerror(e)))
    }

    /// Writes all of `bytes` (used by tests and for commands to firmware); returns false when the
    /// device is gone.
    @discardableResult
    package func write(_ bytes: [UInt8]) -> Bool {
        var off = 0
        while off < bytes.count {
            let n = SystemCall.retrying { bytes[off...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }
            if n > 0 { off += n; continue }
            if n < 0, errno == EAGAIN {
                var fds = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)]
                _ = SystemCall.poll(&fds, timeout: 0.1)
                continue
            }
            return false
        }
        return true
    }

    /// Closes the descriptor (idempotent).
    package func close() {
        let wasClosed = closed.withLock { c in
            defer { c = true }
            return c
        }
        if !wasClosed {
            // Release TIOCEXCL first: the flag lives on the tty, not the descriptor, and outlives
            // this close while anything else keeps the tty open (a pty's far end, another
            // holder), which would refuse the next open (a daemon restart) with EBUSY.
            _ = ioctl(fd, UInt(TIOCNXCL))
            Glibc.close(fd)
        }
    }
}
