import Foundation

/// Reads a JSON array (`[ {…}, {…}, … ]`, what `healthgate samples --json` prints) from a file
/// descriptor in blocks and hands out its elements' bytes one at a time, so memory is bounded by
/// the block size and the largest element, never by the file. It checks only the array's own
/// structure (the brackets, the commas between elements, where each element ends); what is
/// inside an element is the record parser's business, so a bad element is skipped like a bad
/// line. A UTF-8 byte-order mark at the start is skipped; JSON white space (LF included) may
/// surround everything. Elements are numbered from 1, with the line each starts on.
package struct ArrayElements {
    /// Why the file is not a JSON array, at which element; nothing after it is read.
    package struct StructureError: Error, CustomStringConvertible {
        /// The element number the problem is at (1-based; the count read so far + 1).
        package let element: Int
        /// The line of the problem.
        package let line: Int
        /// What is wrong, in one phrase.
        package let reason: String
        package var description: String { reason }
    }

    /// One element: its 1-based number, the line it starts on, its bytes (valid until the next
    /// call).
    package struct Element {
        package let number: Int
        package let line: Int
        package let bytes: UnsafeBufferPointer<UInt8>
    }

    private var buffer: ReadBuffer
    private var pos = 0
    private var filled: Int { buffer.filled }
    private var eof: Bool { buffer.eof }
    private enum State { case start, first, afterElement, done }
    private var state = State.start
    /// Lines before `pos` (the line of `pos` is `line`).
    private var line = 1
    /// Elements handed out so far.
    package private(set) var number = 0
    /// Bytes read from the descriptor so far.
    package var bytesRead: Int { buffer.bytesRead }

    /// Reads `fd` (not closed here) in blocks of `blockSize` bytes.
    package init(fd: Int32, blockSize: Int = 1 << 20) {
        buffer = ReadBuffer(fd: fd, blockSize: blockSize)
    }

    /// Frees the block buffer; the reader is unusable afterwards.
    package mutating func close() { buffer.close() }

    private var bytes: UnsafeMutablePointer<UInt8> { buffer.bytes }

    /// The next element, or nil after the closing `]` (and nothing but white space after it).
    /// - Throws: ``StructureError`` when the text is not a JSON array; ``ByteLines/ReadError``
    ///   when reading fails.
    package mutating func next() throws -> Element? {
        switch state {
        case .done:
            return nil
        case .start:
            while filled < 3, !eof { try fill(keeping: pos) }
            if filled >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { pos = 3 }
            guard try skipSpace() else { throw failure("the file is empty, not a JSON array of samples") }
            guard bytes[pos] == 0x5B else {
                throw failure("the file does not start with '[' (a JSON array of samples, as 'healthgate samples --json' prints); for one sample per line use --jsonl")
            }
            pos += 1
            state = .first
            guard try skipSpace() else { throw failure("the array is not closed: the file ends after '['") }
            if bytes[pos] == 0x5D { pos += 1; return try finish() }
        case .first:
            break
        case .afterElement:
            guard try skipSpace() else { throw failure("the array is not closed: the file ends after element \(number)") }
            if bytes[pos] == 0x5D { pos += 1; return try finish() }
            guard bytes[pos] == 0x2C else {
                throw failure("expected ',' or ']' after element \(number), found '\(Self.shown(bytes[pos]))'")
            }
            pos += 1
            guard try skipSpace() else { throw failure("the array is not closed: the file ends after a ','") }
        }
        // An element starts at pos.
        let first = bytes[pos]
        guard first != 0x5D, first != 0x2C else { throw failure("expected an element, found '\(Self.shown(first))'") }
        let startLine = line
        var end = pos
        while true {
            if let e = scanElement(from: pos) { end = e; break }
            guard !eof else { throw failure("the array is not closed: the file ends inside element \(number + 1)") }
            try fill(keeping: pos)
        }
        number += 1
        let element = Element(number: number, line: startLine, bytes: UnsafeBufferPointer(start: bytes + pos, count: end - pos))
        countLines(pos, end)
        pos = end
        state = .afterElement
        return element
    }

    /// After the closing `]`: only white space may follow.
    private mutating func finish() throws -> Element? {
        if try skipSpace() {
            throw failure("text after the array's closing ']': '\(Self.shown(bytes[pos]))'")
        }
        state = .done
        return nil
    }

    /// The end of the element starting at `from`, or nil when the buffer ends before it does.
    private func scanElement(from: Int) -> Int? {
        var i = from
        var depth = 0
        var inString = false
        while i < filled {
            let b = bytes[i]
            if inString {
                if b == 0x5C { i += 2; continue }
                if b == 0x22 { inString = false; if depth == 0 { return i + 1 } }
            } else {
                switch b {
                case 0x22: inString = true
                case 0x7B, 0x5B: depth += 1
                case 0x7D, 0x5D:
                    if depth == 0 { return i }   // a scalar element ends before the array's ']'
                    depth -= 1
                    if depth == 0 { return i + 1 }
                case 0x2C, 0x20, 0x09, 0x0A, 0x0D:
                    if depth == 0 { return i }
                default: break
                }
            }
            i += 1
        }
        // A scalar running to the end of the file ends there; anything else is cut short.
        return eof && depth == 0 && !inString && i > from ? filled : nil
    }

    /// Skips JSON white space, reading more as needed; false at the end of the file.
    private mutating func skipSpace() throws -> Bool {
        while true {
            while pos < filled {
                switch bytes[pos] {
                case 0x0A: line += 1; pos += 1
                case 0x20, 0x09, 0x0D: pos += 1
                default: return true
                }
            }
            if eof { return false }
            try fill(keeping: pos)
        }
    }

    private mutating func countLines(_ from: Int, _ to: Int) {
        var i = from
        while i < to, let lf = memchr(bytes + i, 0x0A, to - i) {
            line += 1
            i = lf.assumingMemoryBound(to: UInt8.self) - bytes + 1
        }
    }

    /// Reads more, keeping the bytes from `keep` on (``ReadBuffer/fill(keeping:)``).
    private mutating func fill(keeping keep: Int) throws {
        pos -= try buffer.fill(keeping: keep)
    }

    private func failure(_ reason: String) -> StructureError {
        StructureError(element: number + 1, line: line, reason: reason)
    }

    /// A byte for a message: printable ASCII as itself, anything else as \xNN.
    private static func shown(_ b: UInt8) -> String {
        (0x21...0x7E).contains(b) ? String(UnicodeScalar(b)) : "\\x" + String(b, radix: 16, uppercase: true)
    }
}
