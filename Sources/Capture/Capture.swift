import Foundation
import Glibc
import HealthModel
import Platform

/// What a capture line holds: a BLE notification or a serial line.
public enum CaptureKind: String, Sendable, Hashable, Codable {
    case ble
    case serial
}

/// One received item in a capture file (`healthgate record` writes them, `replay` reads them).
///
/// The JSON object per line is exactly: `t` (receipt time, Unix seconds), `kind`, `device`
/// (the ``Device`` fields that are set), and for BLE `address`, `characteristic` (16-bit UUID
/// as 4 upper-case hex digits, e.g. `2A37`) and `hex` (the payload, lower-case hex); for serial
/// `line` (the raw line without its terminator). See docs/capture-format.md.
public struct CaptureRecord: Sendable, Hashable, Codable {
    /// Receipt time, Unix seconds (fractional).
    public var t: Double
    public var kind: CaptureKind
    public var device: Device
    /// BLE: the peer's address, `AA:BB:CC:DD:EE:FF`.
    public var address: String?
    /// BLE: the characteristic UUID, `2A37`.
    public var characteristic: String?
    /// BLE: the notification payload as lower-case hex.
    public var hex: String?
    /// Serial: the raw line.
    public var line: String?

    /// A BLE notification received at `receivedAt`.
    public static func ble(receivedAt: Date, device: Device, address: String, characteristic: String,
                           payload: some Collection<UInt8>) -> CaptureRecord {
        CaptureRecord(t: receivedAt.timeIntervalSince1970, kind: .ble, device: device, address: address,
                      characteristic: characteristic.uppercased(), hex: Hex.string(payload), line: nil)
    }

    /// A serial line received at `receivedAt`.
    public static func serial(receivedAt: Date, device: Device, line: String) -> CaptureRecord {
        CaptureRecord(t: receivedAt.timeIntervalSince1970, kind: .serial, device: device, address: nil,
                      characteristic: nil, hex: nil, line: line)
    }

    /// The receipt time as a date.
    public var receivedAt: Date { Date(timeIntervalSince1970: t) }

    /// BLE: the payload bytes (nil for serial records).
    public var payload: [UInt8]? { hex.flatMap { Hex.bytes($0) } }

    /// Checks the fields the kind requires.
    /// - Throws: ``CaptureError/invalidRecord(line:reason:)`` (line 0: not from a file).
    public func validate(line number: Int = 0) throws(CaptureError) {
        guard t.isFinite, t >= 0, ISO8601.isInRange(t) else {
            throw .invalidRecord(line: number, reason: "\"t\" must be Unix seconds from 0 to before 10000-01-01 (253402300800)")
        }
        switch kind {
        case .ble:
            guard let a = address, Self.isBluetoothAddress(a) else {
                throw .invalidRecord(line: number, reason: "a ble record needs \"address\" as six hex pairs such as AA:BB:CC:DD:EE:FF")
            }
            guard let c = characteristic, c.count == 4, UInt16(c, radix: 16) != nil else {
                throw .invalidRecord(line: number, reason: "a ble record needs \"characteristic\" as 4 hex digits (e.g. \"2A37\")")
            }
            guard let h = hex, Hex.bytes(h) != nil else {
                throw .invalidRecord(line: number, reason: "a ble record needs \"hex\" with an even number of hex digits")
            }
        case .serial:
            guard line != nil else { throw .invalidRecord(line: number, reason: "a serial record needs \"line\"") }
        }
    }
}

extension CaptureRecord {
    /// `AA:BB:CC:DD:EE:FF`: six pairs of hex digits (either case) separated by colons.
    static func isBluetoothAddress(_ a: String) -> Bool {
        let parts = a.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.utf8.count == 2 && UInt8($0, radix: 16) != nil }
    }
}

/// Why a capture could not be written or read. Each says what, why, and what to do.
public enum CaptureError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file could not be opened, read or written.
    case io(path: String, reason: String)
    /// The first line is not the capture header.
    case notACapture(path: String)
    /// The header names a version this HealthGate does not read.
    case unsupportedVersion(Int)
    /// A line is not valid JSON or misses a required field.
    case invalidRecord(line: Int, reason: String)

    public var description: String {
        switch self {
        case .io(let path, let reason):
            "cannot use capture file \(path): \(reason); check the path and its permissions"
        case .notACapture(let path):
            "\(path) is not a HealthGate capture (the first line must be {\"format\":\"healthgate-capture\",\"version\":1}); record one with healthgate record"
        case .unsupportedVersion(let v):
            "this capture has format version \(v), but this HealthGate reads version \(CaptureFormat.version) only; upgrade HealthGate"
        case .invalidRecord(let line, let reason):
            "capture line \(line) is invalid: \(reason); fix or delete that line"
        }
    }
}

/// The format's constants.
public enum CaptureFormat {
    /// The header's `format` value.
    public static let name = "healthgate-capture"
    /// The version this module writes and reads.
    public static let version = 1
    /// The header line (without newline).
    public static let headerLine = "{\"format\":\"healthgate-capture\",\"version\":1}"
}

/// Writes a capture: the header, then one JSON line per record, each written to the file at
/// once (an interrupted recording keeps every record written before the interruption).
///
/// Thread rule: one writer per file, used from one task or thread at a time.
public final class CaptureWriter {
    private var fd: Int32
    private let encoder: JSONEncoder
    /// The file being written.
    public let path: String
    /// Records written so far.
    public private(set) var count = 0

    /// Creates (or truncates) `path` and writes the header.
    /// - Throws: ``CaptureError/io(path:reason:)``.
    public init(path: String) throws(CaptureError) {
        self.path = path
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(path: path, reason: "it cannot be created (\(Self.reason(errno)))") }
        try writeAll(Data((CaptureFormat.headerLine + "\n").utf8))
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// strerror's text for `code`, lower-cased to sit inside a sentence (never a Foundation error's text).
    static func reason(_ code: Int32) -> String {
        let s = String(cString: strerror(code))
        return s.prefix(1).lowercased() + s.dropFirst()
    }

    private func writeAll(_ data: Data) throws(CaptureError) {
        guard fd >= 0 else { throw .io(path: path, reason: "it is already closed") }
        var done = 0
        while done < data.count {
            let n = SystemCall.retrying { data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) } }
            if n < 0 {
                throw .io(path: path, reason: "writing failed (\(Self.reason(errno)))")
            }
            done += n
        }
    }

    /// Appends one record (validated first).
    /// - Throws: ``CaptureError``.
    public func write(_ record: CaptureRecord) throws(CaptureError) {
        try record.validate()
        var data: Data
        do { data = try encoder.encode(record) } catch { throw .invalidRecord(line: count + 2, reason: "it cannot be encoded as JSON") }
        data.append(0x0A)
        try writeAll(data)
        count += 1
    }

    /// Flushes to stable storage and closes the file.
    /// - Throws: ``CaptureError/io(path:reason:)``.
    public func close() throws(CaptureError) {
        guard fd >= 0 else { return }
        let synced = fsync(fd) == 0 ? 0 : errno
        let closed = Glibc.close(fd) == 0 ? 0 : errno
        fd = -1
        if synced != 0 || closed != 0 { throw .io(path: path, reason: "saving it failed (\(Self.reason(synced != 0 ? synced : closed)))") }
    }
}

/// Reads a capture file: checks the header, then yields records in file order.
///
/// A final line without a newline that does not parse (a recording killed mid-write) is not
/// an error: it is skipped and counted in ``truncatedTail``. Any other bad line is an error
/// naming its line number. Unknown keys are ignored (later versions may add some).
public struct CaptureReader: Sendable {
    /// The records, in file order.
    public let records: [CaptureRecord]
    /// 1 when the last line was cut short and skipped, else 0.
    public let truncatedTail: Int

    /// Reads and validates `path` completely.
    /// - Throws: ``CaptureError``.
    public init(path: String) throws(CaptureError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .io(path: path, reason: "it is a directory (give a .capture.jsonl file inside it)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .io(path: path, reason: FileManager.default.fileExists(atPath: path) ? "it cannot be read" : "it does not exist")
        }
        try self.init(data: data, path: path)
    }

    /// Reads a capture from memory (`path` names it in errors).
    /// - Throws: ``CaptureError``.
    public init(data: Data, path: String = "(capture)") throws(CaptureError) {
        let endsWithNewline = data.last == 0x0A
        var lines = data.split(separator: 0x0A, omittingEmptySubsequences: false)
        if endsWithNewline { lines.removeLast() }
        guard let header = lines.first,
              let h = try? JSONSerialization.jsonObject(with: Data(header)) as? [String: Any],
              h["format"] as? String == CaptureFormat.name else {
            throw .notACapture(path: path)
        }
        guard let v = h["version"] as? Int else { throw .notACapture(path: path) }
        guard v == CaptureFormat.version else { throw .unsupportedVersion(v) }
        let decoder = JSONDecoder()
        var out: [CaptureRecord] = []
        var tail = 0
        for (i, raw) in lines.enumerated().dropFirst() {
            let number = i + 1
            if raw.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            do {
                let r = try decoder.decode(CaptureRecord.self, from: Data(raw))
                try r.validate(line: number)
                out.append(r)
            } catch {
                if i == lines.count - 1 && !endsWithNewline { tail = 1; continue }
                if let e = error as? CaptureError { throw e }
                throw .invalidRecord(line: number, reason: "not a capture record (\(Self.describe(error)))")
            }
        }
        records = out
        truncatedTail = tail
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "missing \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c):
            "wrong type at \"\(c.codingPath.map(\.stringValue).joined(separator: "."))\""
        case DecodingError.dataCorrupted(let c):
            c.codingPath.isEmpty ? "not valid JSON" : "bad value at \"\(c.codingPath.map(\.stringValue).joined(separator: "."))\""
        default: "\(error)"
        }
    }
}
