import Foundation
import HealthModel
import Synchronization
import Locking

/// Writes a capture file as `record` needs it: the header, then one JSON line per notification
/// with its receipt time, the device record, the address, the characteristic and the payload as
/// hex — each line written as it arrives, so an interrupted recording keeps every line before
/// the interruption.
///
/// Adds to ``CaptureWriter`` what `record` needs: no silent overwrite of an existing file, and
/// thread safety (notifications arrive on GATT reader threads).
public final class CaptureFileWriter: @unchecked Sendable {
    // @unchecked: `writer` is only touched with `lock` held.
    private let writer: CaptureWriter
    private let lock = Lock(())
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

    /// Appends one BLE notification from the strap at `address` (`AA:BB:…`).
    public func write(receivedAt: Date, device: Device?, address: String, characteristic: UInt16, payload: [UInt8]) throws {
        let record = CaptureRecord.ble(receivedAt: receivedAt, device: device ?? Device(localIdentifier: address),
                                       address: address, characteristic: String(format: "%04X", characteristic),
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
