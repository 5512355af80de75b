#if canImport(Glibc)
import Glibc
#endif

/// A pull scanner of XML tags over a byte stream, for the export's flat shape: elements and
/// attributes, no mixed content. It hands out start tags (name and attribute ranges into its
/// buffer, valid until the next call) and end tags, and skips the XML declaration, comments,
/// processing instructions, CDATA, character data and the DOCTYPE with its internal subset
/// (declarations, quoted literals with `>` or `]` inside, comments with quotes inside).
///
/// Nothing depends on line breaks: lines are counted only to name them in messages, and a tag
/// may span lines or share one. The buffer holds at least one whole tag; it starts at 1 MiB and
/// grows only for a longer tag (to ``maxTagBytes``), so memory does not follow the file.
///
/// Not a validating parser: it checks what it needs to read correctly (tags closed, attributes
/// quoted, end tags matching their start tags, the document ending with its root closed) and
/// reports the line when a check fails.
final class XMLScanner {
    /// What ``next()`` found.
    enum Token { case start, end, endOfDocument }

    /// One attribute: byte offsets into the buffer.
    struct Attribute {
        var name: Int, nameCount: Int
        var value: Int, valueCount: Int
        /// The value holds `&`, a tab or a line break: decode it (``string(_:)``) rather than take its bytes.
        var needsDecoding: Bool
    }

    /// A tag longer than this is refused (the export's longest are a few kilobytes).
    static let maxTagBytes = 32 << 20

    private let source: XMLByteStream
    private let path: String
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var position = 0
    private var filled = 0
    private var atEnd = false
    /// Bytes dropped from the buffer's front so far.
    private var dropped: Int64 = 0
    private var lineCount = 1
    /// FNV-1a hashes and lengths of the open elements' names, to match end tags.
    private var open: [(hash: UInt64, count: Int)] = []

    /// The line of the current token's `<`.
    private(set) var line = 1
    /// The current start tag's name (offset, count).
    private(set) var nameStart = 0, nameCount = 0
    /// Whether the current start tag ends with `/>` (an end token follows it).
    private(set) var selfClosing = false
    /// The current start tag's attributes.
    private(set) var attributes: [Attribute] = []
    /// An end token is due: the current start tag closed itself.
    private var pendingEnd = false

    /// Bytes of the XML consumed so far.
    var bytesConsumed: Int64 { dropped + Int64(position) }

    init(source: XMLByteStream, path: String, initialCapacity: Int = 1 << 20) {
        self.source = source
        self.path = path
        capacity = initialCapacity
        buffer = .allocate(capacity: capacity)
        attributes.reserveCapacity(32)
    }

    deinit { buffer.deallocate() }

    private func malformed(_ reason: String, line: Int? = nil) -> AppleHealthExportError {
        .malformedXML(path: path, line: line ?? self.line, reason: reason)
    }

    /// Keeps the bytes from `keep` on, moved to the front, and reads more (growing the buffer
    /// when a tag fills it). Sets ``atEnd`` when the stream has ended.
    private func refill(keeping keep: Int) throws(AppleHealthExportError) {
        let kept = filled - keep
        if keep > 0 {
            if kept > 0 { memmove(buffer, buffer + keep, kept) }
            dropped += Int64(keep)
            position -= keep
            filled = kept
        }
        if filled == capacity {
            guard capacity < Self.maxTagBytes else { throw malformed("a tag longer than \(Self.maxTagBytes >> 20) MiB") }
            let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
            bigger.update(from: buffer, count: filled)
            buffer.deallocate()
            buffer = bigger
            capacity *= 2
        }
        let n = try source.read(into: buffer + filled, count: capacity - filled)
        if n == 0 { atEnd = true } else { filled += n }
    }

    /// The next start or end tag; ``Token/endOfDocument`` after the root element is closed and the input ends.
    func next() throws(AppleHealthExportError) -> Token {
        if pendingEnd {
            // The end half of `<x/>`.
            pendingEnd = false
            open.removeLast()
            return .end
        }
        while true {
            // Character data up to the next '<' (only whitespace in an export), counting lines.
            var p = position
            let limit = filled
            let b = buffer
            while p < limit {
                let c = b[p]
                if c == 0x3C { break }
                if c == 0x0A { lineCount += 1 }
                p += 1
            }
            position = p
            if p == limit {
                if atEnd {
                    if !open.isEmpty {
                        throw malformed("the document ends with \(open.count) element(s) still open", line: lineCount)
                    }
                    return .endOfDocument
                }
                try refill(keeping: position)
                continue
            }
            line = lineCount
            switch try tag(at: p) {
            case .incomplete:
                if atEnd { throw malformed("the document ends inside a tag") }
                try refill(keeping: position)
            case .skipped(let after, let lines):
                position = after
                lineCount += lines
            case .token(let token, let after, let lines):
                position = after
                lineCount += lines
                return token
            }
        }
    }

    private enum Scan { case incomplete, skipped(Int, Int), token(Token, Int, Int) }

    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x09 || c == 0x0D }

    /// Scans the tag at `start` (its `<`).
    private func tag(at start: Int) throws(AppleHealthExportError) -> Scan {
        let b = buffer, limit = filled
        var p = start + 1
        guard p < limit else { return .incomplete }
        var lines = 0
        switch b[p] {
        case 0x2F:   // '/': an end tag
            p += 1
            let n0 = p
            while p < limit, b[p] != 0x3E, !Self.isSpace(b[p]) { p += 1 }
            let n1 = p
            while p < limit, b[p] != 0x3E { if b[p] == 0x0A { lines += 1 }; p += 1 }
            guard p < limit else { return .incomplete }
            let h = Self.hash(b + n0, n1 - n0)
            guard let top = open.last else { throw malformed("an end tag </\(text(n0, n1 - n0))> with no element open") }
            guard top.hash == h, top.count == n1 - n0 else { throw malformed("the end tag </\(text(n0, n1 - n0))> does not close the element open there") }
            open.removeLast()
            return .token(.end, p + 1, lines)
        case 0x3F:   // '?': a processing instruction or the XML declaration
            while p + 1 < limit, !(b[p] == 0x3F && b[p + 1] == 0x3E) { if b[p] == 0x0A { lines += 1 }; p += 1 }
            guard p + 1 < limit else { return .incomplete }
            return .skipped(p + 2, lines)
        case 0x21:   // '!': a comment, CDATA or a declaration (DOCTYPE)
            return try markup(at: start)
        default:
            break
        }
        // A start tag: its name, then attributes up to '>' or '/>'.
        let n0 = p
        while p < limit, !Self.isSpace(b[p]), b[p] != 0x3E, b[p] != 0x2F { p += 1 }
        guard p < limit else { return .incomplete }
        guard p > n0 else { throw malformed("a '<' that starts no tag") }
        nameStart = n0
        nameCount = p - n0
        attributes.removeAll(keepingCapacity: true)
        while true {
            while p < limit, Self.isSpace(b[p]) { if b[p] == 0x0A { lines += 1 }; p += 1 }
            guard p < limit else { return .incomplete }
            let c = b[p]
            if c == 0x3E { selfClosing = false; p += 1; break }
            if c == 0x2F {
                guard p + 1 < limit else { return .incomplete }
                guard b[p + 1] == 0x3E else { throw malformed("a '/' inside the tag <\(text(n0, nameCount))> not followed by '>'", line: line + lines) }
                selfClosing = true
                p += 2
                break
            }
            // name = "value" (or 'value')
            let a0 = p
            while p < limit, b[p] != 0x3D, !Self.isSpace(b[p]), b[p] != 0x3E, b[p] != 0x2F, b[p] != 0x3C { p += 1 }
            guard p < limit else { return .incomplete }
            let a1 = p
            while p < limit, Self.isSpace(b[p]) { if b[p] == 0x0A { lines += 1 }; p += 1 }
            guard p < limit else { return .incomplete }
            guard b[p] == 0x3D, a1 > a0 else {
                throw malformed("the attribute '\(text(a0, a1 - a0))' of <\(text(n0, nameCount))> has no '=' and value", line: line + lines)
            }
            p += 1
            while p < limit, Self.isSpace(b[p]) { if b[p] == 0x0A { lines += 1 }; p += 1 }
            guard p < limit else { return .incomplete }
            let quote = b[p]
            guard quote == 0x22 || quote == 0x27 else {
                throw malformed("the value of attribute '\(text(a0, a1 - a0))' of <\(text(n0, nameCount))> is not in quotes", line: line + lines)
            }
            p += 1
            let v0 = p
            var decode = false
            while p < limit, b[p] != quote {
                let v = b[p]
                if v == 0x26 || v == 0x09 || v == 0x0D { decode = true } else if v == 0x0A { decode = true; lines += 1 }
                else if v == 0x3C { throw malformed("a '<' inside the value of attribute '\(text(a0, a1 - a0))'", line: line + lines) }
                p += 1
            }
            guard p < limit else { return .incomplete }
            attributes.append(Attribute(name: a0, nameCount: a1 - a0, value: v0, valueCount: p - v0, needsDecoding: decode))
            p += 1
            guard p < limit else { return .incomplete }
            guard Self.isSpace(b[p]) || b[p] == 0x3E || b[p] == 0x2F else {
                throw malformed("no space after the value of attribute '\(text(a0, a1 - a0))' of <\(text(n0, nameCount))>", line: line + lines)
            }
        }
        open.append((Self.hash(b + n0, nameCount), nameCount))
        pendingEnd = selfClosing
        return .token(.start, p, lines)
    }

    /// `<!-- … -->`, `<![CDATA[ … ]]>` or `<!DOCTYPE …>` (internal subset included) at `start`: skipped.
    private func markup(at start: Int) throws(AppleHealthExportError) -> Scan {
        let b = buffer, limit = filled
        func has(_ s: StaticString, at i: Int) -> Bool? {
            let n = s.utf8CodeUnitCount
            guard i + n <= limit else { return nil }
            return memcmp(b + i, s.utf8Start, n) == 0
        }
        func skip(to terminator: StaticString, from i: Int) -> Scan {
            let n = terminator.utf8CodeUnitCount
            let t = terminator.utf8Start
            var p = i, lines = 0
            while p + n <= limit {
                if b[p] == t[0], memcmp(b + p, t, n) == 0 { return .skipped(p + n, lines) }
                if b[p] == 0x0A { lines += 1 }
                p += 1
            }
            return .incomplete
        }
        guard let comment = has("<!--", at: start) else { return .incomplete }
        if comment { return skip(to: "-->", from: start + 4) }
        guard let cdata = has("<![CDATA[", at: start) else { return .incomplete }
        if cdata { return skip(to: "]]>", from: start + 9) }
        // A declaration: up to its '>' outside quotes and outside an internal subset [ … ], whose
        // own declarations, quoted literals and comments may hold '>' ']' and quotes.
        var p = start + 2, lines = 0
        var subset = false
        while p < limit {
            let c = b[p]
            switch c {
            case 0x0A:
                lines += 1
            case 0x22, 0x27:
                p += 1
                while p < limit, b[p] != c { if b[p] == 0x0A { lines += 1 }; p += 1 }
                guard p < limit else { return .incomplete }
            case 0x5B:
                subset = true
            case 0x5D:
                subset = false
            case 0x3C where subset:
                guard let isComment = has("<!--", at: p) else { return .incomplete }
                if isComment {
                    guard case .skipped(let after, let n) = skip(to: "-->", from: p + 4) else { return .incomplete }
                    p = after
                    lines += n
                    continue
                }
            case 0x3E where !subset:
                return .skipped(p + 1, lines)
            default:
                break
            }
            p += 1
        }
        return .incomplete
    }

    // MARK: Reading the current tag

    /// Whether the current start tag is named `s`.
    func nameIs(_ s: StaticString) -> Bool {
        nameCount == s.utf8CodeUnitCount && memcmp(buffer + nameStart, s.utf8Start, nameCount) == 0
    }

    /// Whether attribute `a`'s name is `s`.
    func name(of a: Attribute, is s: StaticString) -> Bool {
        a.nameCount == s.utf8CodeUnitCount && memcmp(buffer + a.name, s.utf8Start, a.nameCount) == 0
    }

    /// The current start tag's name.
    var name: String { text(nameStart, nameCount) }

    /// Attribute `a`'s name.
    func nameString(_ a: Attribute) -> String { text(a.name, a.nameCount) }

    /// The raw bytes of attribute `a`'s value (entities not decoded).
    func rawValue(_ a: Attribute) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: buffer + a.value, count: a.valueCount)
    }

    /// The first attribute named `s` of the current start tag.
    func attribute(_ s: StaticString) -> Attribute? {
        attributes.first { name(of: $0, is: s) }
    }

    /// Attribute `a`'s value, its entity and character references decoded and its tabs and line
    /// breaks made spaces (XML's attribute-value normalization). An unknown entity stays as written.
    func string(_ a: Attribute) -> String {
        let raw = rawValue(a)
        guard a.needsDecoding else { return String(decoding: raw, as: UTF8.self) }
        return String(decoding: Self.decode(raw), as: UTF8.self)
    }

    /// `raw` with `&amp; &lt; &gt; &quot; &apos; &#NN; &#xHH;` decoded and tab, CR, LF as spaces.
    static func decode(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            let c = raw[i]
            if c == 0x09 || c == 0x0A || c == 0x0D { out.append(0x20); i += 1; continue }
            guard c == 0x26, let semi = raw[i...].prefix(12).firstIndex(of: 0x3B) else { out.append(c); i += 1; continue }
            let body = Array(raw[(i + 1)..<semi])
            var decoded: [UInt8]?
            switch body {
            case Array("amp".utf8): decoded = [0x26]
            case Array("lt".utf8): decoded = [0x3C]
            case Array("gt".utf8): decoded = [0x3E]
            case Array("quot".utf8): decoded = [0x22]
            case Array("apos".utf8): decoded = [0x27]
            default:
                if body.first == 0x23 {
                    let hex = body.count > 1 && (body[1] == 0x78 || body[1] == 0x58)
                    let digits = String(decoding: body.dropFirst(hex ? 2 : 1), as: UTF8.self)
                    if let v = UInt32(digits, radix: hex ? 16 : 10), let scalar = Unicode.Scalar(v), v != 0 {
                        decoded = Array(String(Character(scalar)).utf8)
                    }
                }
            }
            if let decoded {
                out += decoded
                i = semi + 1
            } else {
                out.append(c)
                i += 1
            }
        }
        return out
    }

    private func text(_ start: Int, _ count: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: buffer + start, count: count), as: UTF8.self)
    }

    private static func hash(_ p: UnsafePointer<UInt8>, _ n: Int) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for i in 0..<n { h = (h ^ UInt64(p[i])) &* 0x100_0000_01b3 }
        return h
    }
}
