import Capture
import Foundation
import HealthModel
import Synchronization

/// Writes BLE notifications as a capture (module `Capture`, docs/capture-format.md): the header,
/// then one JSON line per notification with its receipt time, the device record, the address,
/// the characteristic (`"2A37"`) and the payload as hex — each line written as it arrives, so an
/// interrupted recording keeps every line before the interruption.
///
/// Adds to `Capture`'s writer what `record` needs: no silent overwrite of an existing file, and
/// thread safety (notifications arrive on GATT reader threads).
public final class CaptureFileWriter: @unchecked Sendable {
    // @unchecked: `writer` is only touched with `lock` held.
    private let writer: CaptureWriter
    private let lock = Mutex(())
    /// The header line every capture starts with.
    public static let header = CaptureFormat.headerLine

    /// Creates `path` and writes the header.
    /// - Parameter overwrite: replace an existing file; otherwise an existing file is an error.
    /// - Throws: ``CaptureFileError``.
    public init(path: String, overwrite: Bool = false) throws {
        if !overwrite && FileManager.default.fileExists(atPath: path) { throw CaptureFileError.exists(path) }
        let dir = (path as NSString).deletingLastPathComponent
        if !dir.isEmpty && !FileManager.default.fileExists(atPath: dir) {
            throw CaptureFileError.cannotCreate(path, "its directory does not exist")
        }
        do { writer = try CaptureWriter(path: path) } catch {
            throw CaptureFileError.cannotCreate(path, "\(error)")
        }
    }

    /// Appends one notification.
    public func write(receivedAt: Date, device: Device?, address: BluetoothAddress, characteristic: UInt16,
                      payload: [UInt8]) throws {
        let record = CaptureRecord.ble(receivedAt: receivedAt, device: device ?? Device(localIdentifier: address.description),
                                       address: address.description, characteristic: String(format: "%04X", characteristic),
                                       payload: payload)
        try lock.withLock { _ in
            do { try writer.write(record) } catch { throw CaptureFileError.writeFailed("\(error)") }
        }
    }

    /// Flushes to the disk and closes the file.
    public func finish() throws {
        try lock.withLock { _ in
            do { try writer.close() } catch { throw CaptureFileError.writeFailed("\(error)") }
        }
    }
}

/// Why a capture file could not be written.
public enum CaptureFileError: Error, Sendable, CustomStringConvertible {
    case exists(String)
    case cannotCreate(String, String)
    case writeFailed(String)

    public var description: String {
        switch self {
        case .exists(let p): return "\(p) already exists: choose another file for --out, or pass --overwrite to replace it."
        case .cannotCreate(let p, let why): return "Cannot create \(p) (\(why)): check the directory exists and is writable."
        case .writeFailed(let why): return "Writing the capture failed (\(why)): free disk space and record again; the lines already written are complete."
        }
    }
}

/// `record`'s engine: keeps the straps connected (``StrapRunner``, reconnecting) and writes
/// every Heart Rate Measurement notification, raw, with its receipt time.
public final class CaptureRecorder: Sendable {
    private let targets: [StrapTarget]
    private let connector: StrapConnector
    private let policy: ReconnectPolicy
    private let stop: StopSignal
    private let writer: CaptureFileWriter
    private let maxNotifications: Int?
    private let transactionTimeout: Duration
    private let events: @Sendable (StrapEvent) -> Void
    private let state = Mutex<(count: Int, devices: [BluetoothAddress: Device], failure: String?)>((0, [:], nil))

    public init(targets: [StrapTarget], connector: @escaping StrapConnector, policy: ReconnectPolicy = ReconnectPolicy(),
                stop: StopSignal, writer: CaptureFileWriter, maxNotifications: Int? = nil,
                transactionTimeout: Duration = .seconds(30), events: @escaping @Sendable (StrapEvent) -> Void) {
        self.targets = targets
        self.connector = connector
        self.policy = policy
        self.stop = stop
        self.writer = writer
        self.maxNotifications = maxNotifications
        self.transactionTimeout = transactionTimeout
        self.events = events
    }

    /// Records until stopped; returns how many notifications were written.
    /// - Throws: an error no retry fixes, or ``CaptureFileError`` when the file cannot be written.
    public func run() async throws -> Int {
        var failure: (any Error)?
        await withTaskGroup(of: (any Error)?.self) { group in
            for target in targets {
                group.addTask { [self] in
                    let runner = StrapRunner(target: target, connector: connector, policy: policy, stop: stop,
                                             transactionTimeout: transactionTimeout) { [self] e in handle(e) }
                    do { try await runner.run(); return nil } catch { stop.trigger(); return error }
                }
            }
            for await r in group { if failure == nil, let r { failure = r } }
        }
        try? writer.finish()
        let s = state.withLock { $0 }
        if let why = s.failure { throw CaptureFileError.writeFailed(why) }
        if let failure { throw failure }
        return s.count
    }

    private func handle(_ e: StrapEvent) {
        switch e {
        case .connected(let t, let info, _):
            state.withLock { $0.devices[t.address] = info.device(for: t) }
        case .heartRate(let t, let payload, let at, _, _):
            let device = state.withLock { $0.devices[t.address] }
            do {
                try writer.write(receivedAt: at, device: device, address: t.address, characteristic: 0x2A37, payload: payload)
            } catch {
                state.withLock { $0.failure = $0.failure ?? "\(error)" }
                stop.trigger()
                return
            }
            let n = state.withLock { s -> Int in s.count += 1; return s.count }
            if let maxNotifications, n >= maxNotifications { stop.trigger() }
        default:
            break
        }
        events(e)
    }
}
