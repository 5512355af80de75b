import Foundation
import Synchronization
import Platform
#if canImport(Glibc)
@preconcurrency import Glibc
import Locking
#endif

/// What a ``SerialReader`` delivers.
package enum SerialReaderEvent: Sendable, Hashable {
    /// Bytes read in one `read(2)`, with the gateway time they arrived.
    case chunk([UInt8], receivedAt: Date)
    /// The device went away (unplug, hangup). The reader has stopped; this is the last event.
    case gone(reason: String)
    /// ``SerialReader/stop()`` was called (bytes already buffered were delivered first). The reader
    /// has stopped; this is the last event.
    case stopped
}

/// Reads a ``SerialPort`` on its own thread so the rest of the gateway never waits on it.
///
/// Why a dedicated thread: a pedometer produces a few lines a second, and a thread blocked in
/// `poll(2)` costs nothing while idle, wakes within microseconds when bytes arrive, and never
/// occupies a Swift concurrency thread (which must not block). The thread polls the port and an
/// pipe used to stop it; `POLLHUP`/`POLLERR` or a read that returns EOF/EIO/ENXIO ends the
/// loop with one ``SerialReaderEvent/gone(reason:)`` (after draining any bytes still buffered),
/// so an unplug is a clean event, never a crash or a busy loop.
package final class SerialReader: @unchecked Sendable {
    private let port: SerialPort
    private let wake = WakePipe()
    private let handler: @Sendable (SerialReaderEvent) -> Void
    private let finished = Lock(false)
    private let done = DispatchSemaphore(value: 0)

    /// Starts reading `port` at once; every event goes to `handler`, on the reader's thread, in order.
    package init(port: SerialPort, handler: @escaping @Sendable (SerialReaderEvent) -> Void) {
        self.port = port
        self.handler = handler
        let thread = Thread { [self] in self.loop() }
        thread.name = "serial-reader \(port.path)"
        thread.start()
    }

    /// Asks the reader to stop and waits until its thread has delivered its last event.
    package func stop() {
        wake.poke()
        wait()
    }

    /// Waits until the reader has stopped (after ``SerialReaderEvent/gone(reason:)`` or ``stop()``).
    package func wait() {
        done.wait()
        done.signal()
    }

    private func loop() {
        defer { done.signal() }
        var fds = [pollfd(fd: port.fd, events: Int16(POLLIN), revents: 0), wake.pollEntry]
        while true {
            if SystemCall.poll(&fds) < 0 {
                handler(.gone(reason: "poll: \(String(cString: strerror(errno)))"))
                return
            }
            if fds[1].revents != 0 {
                // Read what is already buffered before stopping: nothing received is dropped.
                while case .data(let bytes) = port.read() { handler(.chunk(bytes, receivedAt: Date())) }
                handler(.stopped)
                return
            }
            let hup = fds[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
            // Drain everything available; a hangup still delivers the bytes before it.
            drain: while true {
                switch port.read() {
                case .data(let bytes):
                    handler(.chunk(bytes, receivedAt: Date()))
                case .wouldBlock:
                    break drain
                case .gone(let why):
                    handler(.gone(reason: why))
                    return
                }
            }
            if hup {
                handler(.gone(reason: fds[0].revents & Int16(POLLNVAL) != 0 ? "descriptor closed" : "hangup"))
                return
            }
        }
    }
}
