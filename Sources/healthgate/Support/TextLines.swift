/// Splits a file's bytes into numbered text lines the way every HealthGate file reader must
/// (docs/input-rules.md): lines end at LF; a CR before the LF is dropped (CRLF files); a UTF-8
/// byte-order mark at the very start is dropped; a line that is not valid UTF-8 is reported as
/// bad with its number instead of refusing the whole file.
struct TextLines: Sequence {
    /// One line: its 1-based number and its text, or why it is not text.
    struct Line {
        let number: Int
        let text: Result<String, BadText>
    }

    /// A line that is not UTF-8; `offset` is the 1-based column (byte) of the first bad byte.
    struct BadText: Error, CustomStringConvertible {
        let byte: UInt8
        let offset: Int
        var description: String {
            "not UTF-8 text (byte 0x\(String(byte, radix: 16, uppercase: true)) at byte \(offset) of the line); save the file as UTF-8"
        }
    }

    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func makeIterator() -> AnyIterator<Line> {
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var number = 0
        let bytes = self.bytes
        return AnyIterator {
            guard start < bytes.count else { return nil }
            number += 1
            var end = start
            while end < bytes.count, bytes[end] != 0x0A { end += 1 }
            let next = end + 1
            if end > start, bytes[end - 1] == 0x0D { end -= 1 }
            let slice = bytes[start..<end]
            start = next
            if let s = String(validating: slice, as: UTF8.self) { return Line(number: number, text: .success(s)) }
            return Line(number: number, text: .failure(Self.firstBadByte(slice)))
        }
    }

    /// The first byte at which `slice` stops being valid UTF-8 (RFC 3629: no overlong forms,
    /// no surrogates, nothing above U+10FFFF).
    static func firstBadByte(_ slice: ArraySlice<UInt8>) -> BadText {
        var i = slice.startIndex
        while i < slice.endIndex {
            let b = slice[i]
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
            default: return BadText(byte: b, offset: i - slice.startIndex + 1)
            }
            for k in 1..<length {
                let j = i + k
                guard j < slice.endIndex else { return BadText(byte: b, offset: i - slice.startIndex + 1) }
                let c = slice[j]
                let ok = k == 1 ? (lowest...highest).contains(c) : (0x80...0xBF).contains(c)
                if !ok { return BadText(byte: b, offset: i - slice.startIndex + 1) }
            }
            i += length
        }
        return BadText(byte: slice.last ?? 0, offset: slice.count)
    }
}
