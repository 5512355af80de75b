/// Why a line was rejected before or during parsing. Every reject is counted and logged, never fatal.
package enum LineRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line ran past ``LineFramer/maxLineBytes`` before its terminator; the whole line was
    /// discarded (up to and including its terminator). Carries the number of bytes discarded.
    case tooLong(bytes: Int)
    /// The line is not valid UTF-8; it is discarded whole, never repaired.
    case invalidUTF8
    /// The line is text, but not a pedometer line in the selected format.
    case notPedometer(String)
    /// A device time (`field` is `t`, `t0` or `t1`) outside ``DeviceTimeRule``'s range.
    case implausibleTime(field: String, value: Double)

    /// A short machine-readable code (`too-long`, `invalid-utf8`, `not-pedometer`, `bad-time`).
    package var code: String {
        switch self {
        case .tooLong: "too-long"
        case .invalidUTF8: "invalid-utf8"
        case .notPedometer: "not-pedometer"
        case .implausibleTime: "bad-time"
        }
    }

    package var description: String {
        switch self {
        case .tooLong(let n): "line longer than \(LineFramer.defaultMaxLineBytes) bytes (\(n) bytes discarded)"
        case .invalidUTF8: "line is not valid UTF-8"
        case .notPedometer(let why): why
        case .implausibleTime(let field, let v):
            "\(field) \(v) is not a plausible device time (Unix seconds from 2000-01-01 to one day past the gateway clock): set the device clock, or leave \(field) out"
        }
    }
}

/// One framed unit of input: a trimmed text line, or a rejected one.
package enum FramedLine: Sendable, Hashable {
    /// A complete line, whitespace-trimmed, not empty, valid UTF-8, within the length cap.
    case line(String)
    /// A line that cannot be used, with the reason.
    case rejected(LineRejection)
}

/// Splits a serial byte stream into lines.
///
/// Rules (see docs/serial-pedometers.md):
/// - A line ends at `\n`, `\r\n` or `\r`. A `\n` right after a `\r` (even in the next chunk)
///   belongs to the same terminator, so `\r\n` never yields an empty extra line.
/// - Leading and trailing whitespace is trimmed: spaces, tabs and NUL bytes (micro:bit pads
///   lines with spaces to 32 bytes). Lines that are empty after trimming are skipped silently
///   (they are counted in ``emptyLines``).
/// - A line whose raw length (terminator excluded) exceeds ``maxLineBytes`` is discarded whole
///   and reported once as ``LineRejection/tooLong(bytes:)`` when its terminator arrives.
/// - A line that is not valid UTF-8 is discarded whole and reported as
///   ``LineRejection/invalidUTF8``.
/// - Bytes after the last terminator wait for the next chunk; ``finish()`` flushes them
///   (for example when the device is unplugged mid-line).
///
/// The framer is a value type with no I/O: feed it chunks in order.
package struct LineFramer: Sendable {
    /// The default cap on a line's raw length in bytes.
    package static let defaultMaxLineBytes = 256

    /// The cap on a line's raw length in bytes (terminator excluded).
    package let maxLineBytes: Int
    /// Lines that were empty after trimming (not rejects: blank lines are normal).
    package private(set) var emptyLines = 0

    private var buffer: [UInt8] = []
    private var overflowBytes = 0  // > 0 while discarding an oversized line
    private var lastWasCR = false

    /// Creates a framer with a line cap of `maxLineBytes` bytes.
    package init(maxLineBytes: Int = LineFramer.defaultMaxLineBytes) {
        precondition(maxLineBytes > 0, "maxLineBytes must be positive")
        self.maxLineBytes = maxLineBytes
        buffer.reserveCapacity(maxLineBytes)
    }

    /// Feeds the next chunk of bytes and returns the lines it completed, in order.
    package mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> [FramedLine] where Bytes.Element == UInt8 {
        var out: [FramedLine] = []
        for byte in bytes {
            if byte == 0x0A, lastWasCR {  // the \n of a \r\n
                lastWasCR = false
                continue
            }
            lastWasCR = false
            if byte == 0x0A || byte == 0x0D {
                lastWasCR = byte == 0x0D
                if let line = completeLine() { out.append(line) }
                continue
            }
            if overflowBytes > 0 {
                overflowBytes += 1
            } else if buffer.count == maxLineBytes {
                overflowBytes = buffer.count + 1
                buffer.removeAll(keepingCapacity: true)
            } else {
                buffer.append(byte)
            }
        }
        return out
    }

    /// Flushes a final unterminated line (end of stream or unplug). Returns nil when nothing was pending.
    package mutating func finish() -> FramedLine? {
        lastWasCR = false
        return completeLine()
    }

    private mutating func completeLine() -> FramedLine? {
        defer { buffer.removeAll(keepingCapacity: true) }
        if overflowBytes > 0 {
            let n = overflowBytes
            overflowBytes = 0
            return .rejected(.tooLong(bytes: n))
        }
        guard let text = String(validating: buffer, as: UTF8.self) else {
            return .rejected(.invalidUTF8)
        }
        let trimmed = LineFramer.trim(text)
        if trimmed.isEmpty {
            if !buffer.isEmpty { emptyLines += 1 }
            return nil
        }
        return .line(trimmed)
    }

    /// Trims spaces, tabs, NULs and other whitespace from both ends.
    static func trim(_ s: String) -> String {
        func isPad(_ c: Character) -> Bool { c.isWhitespace || c == "\u{0}" }
        guard let first = s.firstIndex(where: { !isPad($0) }), let last = s.lastIndex(where: { !isPad($0) }) else { return "" }
        return String(s[first...last])
    }
}
