import Foundation

/// Reads a file descriptor in blocks and hands out its numbered lines, never holding more than
/// one block and the line that crosses it (memory is bounded by the block size and the longest
/// line, not by the file). The line rule every HealthGate file reader follows
/// (docs/input-rules.md): lines end at LF; a CR before the LF is dropped (CRLF files), and so is
/// a CR ending the last line; a UTF-8 byte-order mark at the very start is skipped; the last
/// line needs no LF; a file without bytes has no lines.
package struct ByteLines {
    /// A read failed: the errno, for the caller's sentence.
    package struct ReadError: Error {
        package let errno: Int32
    }

    private var buffer: ReadBuffer
    private var start = 0
    private var atFileStart = true
    /// Lines handed out so far (the 1-based number of the last one).
    package private(set) var number = 0
    /// Bytes read from the descriptor so far.
    package var bytesRead: Int { buffer.bytesRead }

    /// Reads `fd` (not closed here) in blocks of `blockSize` bytes.
    package init(fd: Int32, blockSize: Int = 1 << 20) {
        buffer = ReadBuffer(fd: fd, blockSize: blockSize)
    }

    /// Frees the block buffer; the reader is unusable afterwards.
    package mutating func close() { buffer.close() }

    /// The next line's bytes (valid until the next call), or nil at the end of the file.
    /// - Throws: ``ReadError`` when reading fails.
    package mutating func next() throws -> UnsafeBufferPointer<UInt8>? {
        while true {
            let base = buffer.bytes
            if atFileStart {
                while buffer.filled < 3, !buffer.eof { try buffer.fill(keeping: 0) }
                atFileStart = false
                if buffer.filled >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { start = 3 }
            }
            let filled = buffer.filled
            if start < filled, let lf = memchr(base + start, 0x0A, filled - start) {
                let end = lf.assumingMemoryBound(to: UInt8.self) - base
                return line(base, start, end, next: end + 1)
            }
            if buffer.eof {
                guard start < filled else { return nil }
                return line(base, start, filled, next: filled)
            }
            start -= try buffer.fill(keeping: start)
        }
    }

    private mutating func line(_ base: UnsafeMutablePointer<UInt8>, _ from: Int, _ to: Int, next: Int) -> UnsafeBufferPointer<UInt8> {
        var end = to
        if end > from, base[end - 1] == 0x0D { end -= 1 }
        start = next
        number += 1
        return UnsafeBufferPointer(start: base + from, count: end - from)
    }
}

/// UTF-8 checks for lines read as bytes.
package enum LineText {
    /// A line that is not UTF-8; `offset` is the 1-based column (byte) of the first bad byte.
    package struct BadText: Error, CustomStringConvertible {
        package let byte: UInt8
        package let offset: Int
        package init(byte: UInt8, offset: Int) {
            self.byte = byte
            self.offset = offset
        }
        package var description: String {
            "not UTF-8 text (byte 0x\(String(byte, radix: 16, uppercase: true)) at byte \(offset) of the line); save the file as UTF-8"
        }
    }

    /// True when every byte is ASCII (the common case: no further check needed).
    @inline(__always)
    package static func isASCII(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let p = line.baseAddress else { return true }
        let n = line.count
        var i = 0
        let raw = UnsafeRawPointer(p)
        while i + 8 <= n {
            if raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            i += 8
        }
        while i < n {
            if p[i] & 0x80 != 0 { return false }
            i += 1
        }
        return true
    }

    /// The first byte at which `line` stops being valid UTF-8 (RFC 3629: no overlong forms,
    /// no surrogates, nothing above U+10FFFF), or nil when it is valid.
    package static func firstBadByte(_ line: UnsafeBufferPointer<UInt8>) -> BadText? {
        if isASCII(line) { return nil }
        var i = 0
        let n = line.count
        while i < n {
            let b = line[i]
            let length: Int, lowest: UInt8, highest: UInt8
            switch b {
            case 0x00...0x7F: i += 1; continue
            case 0xC2...0xDF: (length, lowest, highest) = (2, 0x80, 0xBF)
            case 0xE0: (length, lowest, highest) = (3, 0xA0, 0xBF)
            case 0xED: (length, lowest, highest) = (3, 0x80, 0x9F)
            case 0xE1...0xEF: (length, lowest, highest) = (3, 0x80, 0xBF)
            case 0xF0: (length, lowest, highest) = (4, 0x90, 0xBF)
            case 0xF4: (length, lowest, highest) = (4, 0x80, 0x8F)
            case 0xF1...0xF3: (length, lowest, highest) = (4, 0x80, 0xBF)
            default: return BadText(byte: b, offset: i + 1)
            }
            for k in 1..<length {
                let j = i + k
                guard j < n else { return BadText(byte: b, offset: i + 1) }
                let c = line[j]
                let ok = k == 1 ? (lowest...highest).contains(c) : (0x80...0xBF).contains(c)
                if !ok { return BadText(byte: b, offset: i + 1) }
            }
            i += length
        }
        return nil
    }
}
