import Capture
import Foundation
import Ingest
import Logging
import Synchronization

/// `record`'s tap on the strap path: a ``StrapSession`` storing nothing (its pipeline ends in a
/// ``Ingest/NullSink``) whose raw-event tap writes every Heart Rate Measurement notification,
/// raw, with its receipt time and the connection's device record, to a capture file.
package final class StrapRecording: Sendable {
    struct Tally: Sendable {
        var count = 0
        var failure: String?
    }
    private let session: StrapSession
    private let writer: CaptureFileWriter
    private let state: Locked<Tally>
    /// The session, for the tap to stop it when the file fails; cleared after the run (it would
    /// otherwise keep the session alive through its own tap).
    private let stopper: Locked<StrapSession?>

    /// Records the straps' notifications with `writer`; `events` hears everything else (and the
    /// readings too) for the front-end's notes.
    package init(straps: [StrapSession.Strap], writer: CaptureFileWriter, policy: ReconnectPolicy = ReconnectPolicy(),
                maxNotifications: Int? = nil, transactionTimeout: Duration = .seconds(30), logger: Logger,
                events: @escaping @Sendable (StrapSession.Event) -> Void) throws {
        let state = Locked(Tally())
        self.state = state
        self.writer = writer
        let addresses = straps.map { $0.address ?? $0.localIdentifier }
        let stopper = Locked<StrapSession?>(nil)
        self.stopper = stopper
        session = try StrapSession(straps: straps, store: nil, policy: policy, maxNotifications: maxNotifications,
                                   transactionTimeout: transactionTimeout, logger: logger) { event in
            if case .reading(let r) = event {
                do {
                    try writer.write(receivedAt: r.receivedAt, device: r.device, address: addresses[r.strap],
                                     characteristic: 0x2A37, payload: r.payload)
                    state.withLock { $0.count += 1 }
                } catch {
                    state.withLock { $0.failure = $0.failure ?? "\(error)" }
                    stopper.withLock { $0 }?.stop(reason: "the capture cannot be written")
                }
            }
            events(event)
        }
        stopper.withLock { $0 = session }
    }

    /// Stops the recording (any thread).
    package func stop() { session.stop() }

    /// Records until stopped (Ctrl-C, SIGTERM, `duration`, `maxNotifications`), closes the file
    /// and returns how many notifications were written. Blocks (``StrapSession/run(duration:trapsSignals:)``).
    /// - Throws: an error no retry fixes, or ``Capture/CaptureFileError`` when the file cannot be written.
    package func run(duration: Duration? = nil, trapsSignals: Bool = true) throws -> Int {
        let outcome = Result { try session.run(duration: duration, trapsSignals: trapsSignals) }
        stopper.withLock { $0 = nil }
        try? writer.finish()
        let s = state.withLock { $0 }
        if let why = s.failure { throw CaptureFileError.writeFailed(why) }
        _ = try outcome.get()
        return s.count
    }
}
