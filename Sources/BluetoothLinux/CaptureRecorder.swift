import Foundation
import HealthModel
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Writes BLE notifications in HealthGate's capture format (docs/capture-format.md): JSON
/// lines, first `{"format":"healthgate-capture","version":1}`, then one object per
/// notification: `t` (receipt, Unix seconds), `kind` `"ble"`, `device` (Device fields),
/// `address`, `characteristic` (`"2A37"`), `hex` (the payload).
///
/// Each line is written with one `write(2)` as it arrives, so a crash or SIGKILL loses at most
/// the line being written. Thread-safe.
public final class CaptureFileWriter: Sendable {
    private let fd: Int32
    private let lock = Mutex(())
    /// The header line every capture starts with.
    public static let header = #"{"format":"healthgate-capture","version":1}"#

    /// Creates `path` (mode 0644) and writes the header.
    /// - Parameter overwrite: replace an existing file; otherwise an existing file is an error.
    /// - Throws: ``CaptureFileError``.
    public init(path: String, overwrite: Bool = false) throws {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL)
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else {
            let e = errno
            if e == EEXIST { throw CaptureFileError.exists(path) }
            throw CaptureFileError.cannotCreate(path, BluetoothError.errnoText(e))
        }
        self.fd = fd
        try writeLine(Self.header)
    }

    deinit { close(fd) }

    /// Appends one notification.
    public func write(receivedAt: Date, device: Device?, address: BluetoothAddress, characteristic: UInt16,
                      payload: [UInt8]) throws {
        try writeLine(Self.line(receivedAt: receivedAt, device: device, address: address,
                                characteristic: characteristic, payload: payload))
    }

    /// Flushes to the disk (fsync).
    public func sync() { _ = fsync(fd) }

    /// One capture line (no newline).
    public static func line(receivedAt: Date, device: Device?, address: BluetoothAddress, characteristic: UInt16,
                            payload: [UInt8]) -> String {
        var o: [String: Any] = [
            "t": receivedAt.timeIntervalSince1970,
            "kind": "ble",
            "address": address.description,
            "characteristic": String(format: "%04X", characteristic),
            "hex": payload.map { String(format: "%02x", $0) }.joined(),
        ]
        if let device, let data = try? JSONEncoder().encode(device),
           let obj = try? JSONSerialization.jsonObject(with: data) {
            o["device"] = obj
        } else {
            o["device"] = [String: Any]()
        }
        let data = (try? JSONSerialization.data(withJSONObject: o, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    private func writeLine(_ s: String) throws {
        let bytes = Array((s + "\n").utf8)
        try lock.withLock { _ in
            var off = 0
            while off < bytes.count {
                let n = bytes[off...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw CaptureFileError.writeFailed(BluetoothError.errnoText(errno))
                }
                off += n
            }
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
        writer.sync()
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
