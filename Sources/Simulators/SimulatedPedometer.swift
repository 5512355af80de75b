import Foundation
import Synchronization
import Platform
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A simulated serial pedometer: a real pseudo-terminal whose far end (``path``, a
/// `/dev/pts/N`) the gateway opens like a USB-serial port, fed with the line shapes real
/// step-counter firmware prints (docs/pedometer-streams.md): JSON lines with a sequence number,
/// `key:value` pairs, and the odd garbage line (boot banners, noise) the parser must count and
/// skip.
///
/// Thread rules: ``start(interval:)`` runs a writer thread; ``stop()`` ends it. Any thread.
package final class SimulatedPedometer: Sendable {
    /// The tty path the gateway opens.
    package let path: String
    private let master: Int32
    private let slaveKeepAlive: Int32
    private let running = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    /// Steps the device has counted so far.
    package var steps: UInt64 { counted.load(ordering: .relaxed) }
    private let counted = Atomic<UInt64>(0)
    /// Lines written (good and garbage).
    package var linesWritten: Int { written.load(ordering: .relaxed) }
    private let written = Atomic<Int>(0)
    private let masterOpen = Atomic<Bool>(true)

    /// Opens a pty pair.
    /// - Throws: `POSIXError` when the kernel has no ptys left.
    package init() throws {
        var m: Int32 = -1
        var s: Int32 = -1
        var name = [CChar](repeating: 0, count: 128)
        guard openpty(&m, &s, &name, nil, nil) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        // Raw mode on the far end so lines pass unchanged (the gateway sets its own termios too).
        var tio = termios()
        tcgetattr(s, &tio)
        cfmakeraw(&tio)
        tcsetattr(s, TCSANOW, &tio)
        SystemCall.setCloseOnExec(m)
        SystemCall.setCloseOnExec(s)
        master = m
        slaveKeepAlive = s
        path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        unplug()
        Glibc.close(slaveKeepAlive)
    }

    /// Closes the far end, as when a USB-serial adapter is pulled: the gateway's port sees a
    /// hangup. Stop the writer thread first. Idempotent; nothing can be written afterwards.
    package func unplug() {
        if masterOpen.exchange(false, ordering: .acquiringAndReleasing) { Glibc.close(master) }
    }

    /// Writes one raw line (a newline is appended).
    @discardableResult
    package func writeLine(_ line: String) -> Bool {
        guard masterOpen.load(ordering: .acquiring) else { return false }
        let bytes = Array((line + "\n").utf8)
        let n = bytes.withUnsafeBytes { Glibc.write(master, $0.baseAddress, $0.count) }
        if n == bytes.count { written.add(1, ordering: .relaxed) }
        return n == bytes.count
    }

    /// Starts printing a reading every `interval`: a walking pace of 1–3 steps per reading,
    /// mostly JSON lines, every fifth as `steps:N,seq:M` pairs, and a garbage line now and then.
    package func start(interval: Duration = .milliseconds(500)) {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            // Like firmware on a UART, the writer never waits for a reader: while nobody drains
            // the pty (no daemon running) lines that do not fit are lost, not queued, and stop()
            // never hangs on a full buffer. The step total stays cumulative, so a later line
            // carries every step.
            let flags = SystemCall.setNonBlocking(master, true)
            defer { SystemCall.setFlags(master, flags) }
            var seq: UInt64 = 0
            var rng = SystemRandomNumberGenerator()
            writeLine("PEDO v1.2 boot ok")   // a banner, as firmware prints after reset
            while running.load(ordering: .acquiring) {
                seq += 1
                let total = counted.add(UInt64.random(in: 1...3, using: &rng), ordering: .relaxed).newValue
                if seq % 5 == 0 {
                    writeLine("steps:\(total),seq:\(seq)")
                } else if seq % 23 == 0 {
                    writeLine("#@!noise")
                } else {
                    writeLine("{\"steps\":\(total),\"seq\":\(seq)}")
                }
                let s = interval.components
                usleep(UInt32(s.seconds * 1_000_000 + s.attoseconds / 1_000_000_000_000))
            }
            done.signal()
        }
        thread.name = "sim-pedometer"
        thread.start()
    }

    /// Stops the writer thread (if started) and waits for it.
    package func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        done.wait()
    }
}
