/// A strict TOML 1.0 reader, written by hand (docs/architecture.md, "Hand-written code and why": the C++ parser
/// behind TOMLKit aborts the process on some malformed files instead of reporting them).
///
/// Its rules follow TOML 1.0 as CPython's `tomllib` reads it — the peer the tests compare it
/// with, document by document: which tables a header or a dotted key may define or extend, the
/// escapes, the number and date grammar, the follow rules (what may come after a value).
/// Every failure is a thrown ``TOMLError``; nesting deeper than ``maximumDepth`` is one too, so
/// no input can exhaust the stack.
struct TOMLParser {
    /// Arrays and inline tables nested deeper than this are refused (a configuration needs two).
    static let maximumDepth = 100

    private let s: [Unicode.Scalar]
    private var i = 0
    private var depth = 0

    init(_ text: String) {
        var scalars = Array(text.unicodeScalars)
        // CRLF is one line end; a lone CR stays, and is refused where it stands.
        var out: [Unicode.Scalar] = []
        out.reserveCapacity(scalars.count)
        var k = 0
        while k < scalars.count {
            if scalars[k] == "\r", k + 1 < scalars.count, scalars[k + 1] == "\n" { k += 1 }
            out.append(scalars[k])
            k += 1
        }
        scalars = out
        s = scalars
    }

    // MARK: The document

    /// A table while the document is read: tables are shared (a header reopens the table an
    /// earlier dotted key or header made), so they are references until the end.
    private final class Box {
        var keys: [String] = []
        var items: [String: Item] = [:]
        /// Defined by a header, or by dotted keys of an earlier section: no header may define it
        /// again, no dotted key may add to it.
        var explicit = false
        /// Made or extended by dotted keys in the current section; explicit from the next header on.
        var pending = false

        func set(_ key: String, _ item: Item) {
            if items.updateValue(item, forKey: key) == nil { keys.append(key) }
        }

        /// The table a path goes through at `part`: made when missing, the last of an array of
        /// tables; nil when `part` holds a value (inline tables and arrays are never added to).
        func descend(_ part: String) -> Box? {
            switch items[part] {
            case nil:
                let b = Box()
                set(part, .table(b))
                return b
            case .table(let b): return b
            case .tables(let a): return a.tables[a.tables.count - 1]
            case .value: return nil
            }
        }

        func table() -> TOMLTable {
            var t = TOMLTable()
            for k in keys { t.append(k, items[k]!.value()) }
            return t
        }
    }

    private final class TableArray {
        var tables: [Box]
        init(_ first: Box) { tables = [first] }
    }

    private enum Item {
        case table(Box)
        case tables(TableArray)
        /// A finished value: inline tables and arrays can never be added to.
        case value(TOMLValue)

        func value() -> TOMLValue {
            switch self {
            case .table(let b): .table(b.table())
            case .tables(let a): .array(a.tables.map { .table($0.table()) })
            case .value(let v): v
            }
        }
    }

    mutating func document() throws(TOMLError) -> TOMLTable {
        let root = Box()
        var section = root
        var pending: [Box] = []
        while true {
            skipWhitespace()
            guard let c = peek() else { break }
            if c == "\n" { i += 1; continue }
            if isBareKey(c) || c == "\"" || c == "'" {
                try keyValue(into: section, pending: &pending)
            } else if c == "[" {
                for b in pending { b.explicit = true; b.pending = false }
                pending.removeAll()
                section = try header(root)
            } else if c != "#" {
                throw fail("expected a key, a [table] header or a comment, found \(describe(c))")
            }
            skipWhitespace()
            try skipComment()
            guard let end = peek() else { break }
            guard end == "\n" else { throw fail("expected the end of the line after a key = value or a header, found \(describe(end))") }
            i += 1
        }
        return root.table()
    }

    /// `key = value` in the section `box` (the root, or the table of the last header).
    private mutating func keyValue(into box: Box, pending: inout [Box]) throws(TOMLError) {
        let start = i
        let (key, value) = try keyValuePair()
        var t = box
        for part in key.dropLast() {
            switch t.items[part] {
            case nil:
                let b = Box()
                b.pending = true
                pending.append(b)
                t.set(part, .table(b))
                t = b
            case .table(let b):
                guard !b.explicit else { throw fail("the table '\(part)' is already defined; a dotted key cannot add to it", at: start) }
                if !b.pending { b.pending = true; pending.append(b) }
                t = b
            case .tables:
                throw fail("'\(part)' is an array of tables ([[\(part)]]); a dotted key cannot add to it", at: start)
            case .value(let v):
                throw fail("'\(part)' is already a\(article(v.typeName)) \(v.typeName); a dotted key cannot add to it", at: start)
            }
        }
        let stem = key.last!
        guard t.items[stem] == nil else { throw fail("the key '\(stem)' is defined twice", at: start) }
        t.set(stem, .value(value))
    }

    /// `[a.b]` or `[[a.b]]`: returns the table the following keys go into.
    private mutating func header(_ root: Box) throws(TOMLError) -> Box {
        let start = i
        let isArray = i + 1 < s.count && s[i + 1] == "["
        i += isArray ? 2 : 1
        skipWhitespace()
        let key = try self.key()
        if isArray {
            guard peek() == "]", i + 1 < s.count, s[i + 1] == "]" else { throw fail("expected ']]' to close the array-of-tables header") }
            i += 2
        } else {
            guard peek() == "]" else { throw fail("expected ']' to close the table header") }
            i += 1
        }
        var t = root
        for part in key.dropLast() {
            guard let next = t.descend(part) else {
                let v = t.items[part]!.value()
                throw fail("'\(part)' is already a\(article(v.typeName)) \(v.typeName); a header cannot add a table to it", at: start)
            }
            t = next
        }
        let last = key.last!
        let name = key.joined(separator: ".")
        let fresh = Box()
        fresh.explicit = true
        switch (t.items[last], isArray) {
        case (nil, false):
            t.set(last, .table(fresh))
            return fresh
        case (nil, true):
            t.set(last, .tables(TableArray(fresh)))
            return fresh
        case (.table(let b), false):
            guard !b.explicit else { throw fail("the table [\(name)] is defined twice", at: start) }
            b.explicit = true
            return b
        case (.tables(let a), true):
            a.tables.append(fresh)
            return fresh
        case (.table, true):
            throw fail("[[\(name)]] names a table, not an array of tables", at: start)
        case (.tables, false):
            throw fail("[\(name)] names an array of tables; write [[\(name)]] to add one", at: start)
        case (.value(let v), _):
            throw fail("'\(name)' is already a\(article(v.typeName)) \(v.typeName); a header cannot redefine it", at: start)
        }
    }

    // MARK: Keys

    private mutating func keyValuePair() throws(TOMLError) -> ([String], TOMLValue) {
        let key = try self.key()
        guard peek() == "=" else {
            throw fail("expected '=' after the key '\(key.joined(separator: "."))', found \(describe(peek()))")
        }
        i += 1
        skipWhitespace()
        return (key, try value())
    }

    /// A dotted key; the whitespace after it is skipped.
    private mutating func key() throws(TOMLError) -> [String] {
        var parts = [try keyPart()]
        skipWhitespace()
        while peek() == "." {
            i += 1
            skipWhitespace()
            parts.append(try keyPart())
            skipWhitespace()
        }
        return parts
    }

    private mutating func keyPart() throws(TOMLError) -> String {
        guard let c = peek() else { throw fail("expected a key, found the end of the file") }
        if isBareKey(c) {
            let start = i
            while let d = peek(), isBareKey(d) { i += 1 }
            return text(start, i)
        }
        if c == "'" { return try literalString() }
        if c == "\"" { return try basicString() }
        throw fail("expected a key (letters, digits, '_', '-', or a quoted key), found \(describe(c))")
    }

    // MARK: Values

    private mutating func value() throws(TOMLError) -> TOMLValue {
        guard let c = peek() else { throw fail("expected a value, found the end of the file") }
        switch c {
        case "\"":
            return .string(try starts("\"\"\"") ? multiLineBasicString() : basicString())
        case "'":
            return .string(try starts("'''") ? multiLineLiteralString() : literalString())
        case "t" where starts("true"):
            i += 4
            return .boolean(true)
        case "f" where starts("false"):
            i += 5
            return .boolean(false)
        case "[":
            return try nested { (p: inout TOMLParser) throws(TOMLError) in try p.array() }
        case "{":
            return try nested { (p: inout TOMLParser) throws(TOMLError) in try p.inlineTable() }
        default:
            if let v = try dateTime() { return v }
            if let v = try number() { return v }
            for word in ["inf", "nan", "+inf", "-inf", "+nan", "-nan"] where starts(word) {
                i += word.unicodeScalars.count
                let magnitude: Double = word.hasSuffix("inf") ? .infinity : .nan
                return .float(word.hasPrefix("-") ? -magnitude : magnitude)
            }
            throw fail("expected a value (a quoted string, a number, true, false, a date, [an array] or {an inline table}), found \(describe(c))")
        }
    }

    private mutating func nested(_ body: (inout TOMLParser) throws(TOMLError) -> TOMLValue) throws(TOMLError) -> TOMLValue {
        guard depth < Self.maximumDepth else {
            throw fail("arrays and inline tables are nested more than \(Self.maximumDepth) deep")
        }
        depth += 1
        defer { depth -= 1 }
        return try body(&self)
    }

    private mutating func array() throws(TOMLError) -> TOMLValue {
        i += 1
        var elements: [TOMLValue] = []
        try skipArraySpace()
        if peek() == "]" { i += 1; return .array(elements) }
        while true {
            elements.append(try value())
            try skipArraySpace()
            guard let c = peek() else { throw fail("the array is not closed: expected ',' or ']', found the end of the file") }
            if c == "]" { i += 1; return .array(elements) }
            guard c == "," else { throw fail("expected ',' or ']' after an array element, found \(describe(c))") }
            i += 1
            try skipArraySpace()
            if peek() == "]" { i += 1; return .array(elements) }
        }
    }

    /// `{ a = 1, b.c = 2 }`: one line, no trailing comma (TOML 1.0).
    private mutating func inlineTable() throws(TOMLError) -> TOMLValue {
        i += 1
        let box = Box()
        skipWhitespace()
        if peek() == "}" { i += 1; return .table(box.table()) }
        while true {
            let start = i
            let (key, value) = try keyValuePair()
            var t = box
            for part in key.dropLast() {
                guard let next = t.descend(part) else {
                    throw fail("'\(part)' already has a value in this inline table; a dotted key cannot add to it", at: start)
                }
                t = next
            }
            guard t.items[key.last!] == nil else { throw fail("the key '\(key.last!)' is defined twice in an inline table", at: start) }
            t.set(key.last!, .value(value))
            skipWhitespace()
            guard let c = peek() else { throw fail("the inline table is not closed: expected ',' or '}', found the end of the file") }
            if c == "}" { i += 1; return .table(box.table()) }
            guard c == "," else { throw fail("expected ',' or '}' in an inline table (which must stay on one line), found \(describe(c))") }
            i += 1
            skipWhitespace()
        }
    }

    // MARK: Strings

    /// `"…"`: escapes, no line ends, no control characters but tab.
    private mutating func basicString() throws(TOMLError) -> String {
        i += 1
        var out = String.UnicodeScalarView()
        while true {
            guard let c = peek() else { throw fail("the string is not closed: expected '\"' before the end of the file") }
            switch c {
            case "\"":
                i += 1
                return String(out)
            case "\\":
                try escape(into: &out, multiLine: false)
            default:
                guard !isControl(c) || c == "\t" else {
                    throw fail(c == "\n" ? "the string is not closed on its line (use \"\"\"…\"\"\" for a multi-line string)" : "\(describe(c)) is not allowed in a string; write it as an escape such as \\u\(hex4(c))")
                }
                out.append(c)
                i += 1
            }
        }
    }

    /// `"""…"""`: a line end right after the opening quotes is dropped; `\` at a line's end joins lines.
    private mutating func multiLineBasicString() throws(TOMLError) -> String {
        i += 3
        if peek() == "\n" { i += 1 }
        var out = String.UnicodeScalarView()
        while true {
            guard let c = peek() else { throw fail("the multi-line string is not closed: expected '\"\"\"' before the end of the file") }
            switch c {
            case "\"" where starts("\"\"\""):
                i += 3
                // Up to two quotes may end the string right before its closing three.
                for _ in 0..<2 where peek() == "\"" { out.append("\""); i += 1 }
                return String(out)
            case "\\":
                try escape(into: &out, multiLine: true)
            default:
                guard !isControl(c) || c == "\t" || c == "\n" else {
                    throw fail("\(describe(c)) is not allowed in a string; write it as an escape such as \\u\(hex4(c))")
                }
                out.append(c)
                i += 1
            }
        }
    }

    private mutating func escape(into out: inout String.UnicodeScalarView, multiLine: Bool) throws(TOMLError) {
        let next = i + 1 < s.count ? s[i + 1] : nil
        i += 2
        switch next {
        case "b": out.append("\u{08}")
        case "t": out.append("\t")
        case "n": out.append("\n")
        case "f": out.append("\u{0C}")
        case "r": out.append("\r")
        case "\"": out.append("\"")
        case "\\": out.append("\\")
        case "u": out.append(try hexEscape(digits: 4))
        case "U": out.append(try hexEscape(digits: 8))
        case " ", "\t", "\n":
            // A line-ending backslash: drop it, the line end and the whitespace that follows.
            guard multiLine else { throw fail("a backslash is not an escape here: write \\\\ for one backslash", at: i - 2) }
            if next != "\n" {
                skipWhitespace()
                guard let c = peek() else { return }
                guard c == "\n" else { throw fail("a backslash followed by spaces must end its line (a line-ending backslash)", at: i) }
                i += 1
            }
            while let c = peek(), c == " " || c == "\t" || c == "\n" { i += 1 }
        default:
            throw fail("\\\(next.map { String($0) } ?? "") is not an escape TOML knows (\\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX)", at: i - 2)
        }
    }

    private mutating func hexEscape(digits: Int) throws(TOMLError) -> Unicode.Scalar {
        guard i + digits <= s.count else { throw fail("\\\(digits == 4 ? "u" : "U") needs \(digits) hexadecimal digits") }
        var value: UInt32 = 0
        for k in i..<(i + digits) {
            guard let d = hexDigit(s[k]) else { throw fail("\\\(digits == 4 ? "u" : "U") needs \(digits) hexadecimal digits") }
            value = value << 4 | d
        }
        guard let scalar = Unicode.Scalar(value) else {
            throw fail("\\\(digits == 4 ? "u" : "U")\(hex(value, digits)) is not a Unicode scalar value (a surrogate, or past U+10FFFF)")
        }
        i += digits
        return scalar
    }

    /// `'…'`: no escapes, no line ends.
    private mutating func literalString() throws(TOMLError) -> String {
        i += 1
        let start = i
        while true {
            guard let c = peek() else { throw fail("the string is not closed: expected \"'\" before the end of the file") }
            if c == "'" { i += 1; return text(start, i - 1) }
            guard !isControl(c) || c == "\t" else {
                throw fail(c == "\n" ? "the string is not closed on its line (use '''…''' for a multi-line string)" : "\(describe(c)) is not allowed in a literal string")
            }
            i += 1
        }
    }

    /// `'''…'''`.
    private mutating func multiLineLiteralString() throws(TOMLError) -> String {
        i += 3
        if peek() == "\n" { i += 1 }
        let start = i
        while !starts("'''") {
            guard let c = peek() else { throw fail("the multi-line string is not closed: expected \"'''\" before the end of the file") }
            guard !isControl(c) || c == "\t" || c == "\n" else { throw fail("\(describe(c)) is not allowed in a literal string") }
            i += 1
        }
        var out = text(start, i)
        i += 3
        for _ in 0..<2 where peek() == "'" { out.append("'"); i += 1 }
        return out
    }

    // MARK: Numbers, dates and times

    /// An integer or float, or nil (nothing consumed) when none starts here. Reads as far as the
    /// grammar allows; what follows is the caller's to check (`1_` is 1 followed by `_`: refused there).
    private mutating func number() throws(TOMLError) -> TOMLValue? {
        let start = i
        if peek() == "0", i + 1 < s.count {
            let radix: (UInt64, (Unicode.Scalar) -> Bool)? = switch s[i + 1] {
            case "x": (16, { hexDigit($0) != nil })
            case "o": (8, { ("0"..."7").contains($0) })
            case "b": (2, { $0 == "0" || $0 == "1" })
            default: nil
            }
            if let (base, isDigit) = radix, let end = digitRun(from: i + 2, isDigit) {
                var value: UInt64 = 0
                for c in s[(i + 2)..<end] where c != "_" {
                    let d = UInt64(hexDigit(c)!)
                    let (m, o1) = value.multipliedReportingOverflow(by: base)
                    let (a, o2) = m.addingReportingOverflow(d)
                    guard !o1, !o2, a <= UInt64(Int64.max) else { throw fail("\(text(start, end)) is too large for a 64-bit integer", at: start) }
                    value = a
                }
                i = end
                return .integer(Int64(value))
            }
        }
        var k = i
        if k < s.count, s[k] == "+" || s[k] == "-" { k += 1 }
        guard k < s.count, isDigit(s[k]) else { return nil }
        k = s[k] == "0" ? k + 1 : digitRun(from: k, isDigit)!
        var isFloat = false
        if k < s.count, s[k] == ".", let end = digitRun(from: k + 1, isDigit) { k = end; isFloat = true }
        if k < s.count, s[k] == "e" || s[k] == "E" {
            var e = k + 1
            if e < s.count, s[e] == "+" || s[e] == "-" { e += 1 }
            if let end = digitRun(from: e, isDigit) { k = end; isFloat = true }
        }
        let literal = String(String.UnicodeScalarView(s[start..<k].filter { $0 != "_" }))
        i = k
        if isFloat {
            guard let d = Double(literal) else { throw fail("\(literal) is not a number", at: start) }
            return .float(d)
        }
        guard let n = Int64(literal) else { throw fail("\(text(start, k)) is too large for a 64-bit integer", at: start) }
        return .integer(n)
    }

    /// The end of `digit (_? digit)*` starting at `from`, or nil when no digit is there.
    private func digitRun(from: Int, _ isDigit: (Unicode.Scalar) -> Bool) -> Int? {
        guard from < s.count, isDigit(s[from]) else { return nil }
        var k = from + 1
        while k < s.count {
            if isDigit(s[k]) { k += 1 } else if s[k] == "_", k + 1 < s.count, isDigit(s[k + 1]) { k += 2 } else { break }
        }
        return k
    }

    /// A date, a date-time or a time, or nil (nothing consumed) when none starts here.
    private mutating func dateTime() throws(TOMLError) -> TOMLValue? {
        let start = i
        if let afterDate = date(at: i) {
            var k = afterDate
            var hasTime = false, hasOffset = false
            if k < s.count, s[k] == "T" || s[k] == "t" || s[k] == " ", let afterTime = time(at: k + 1) {
                k = afterTime
                hasTime = true
                if k < s.count, s[k] == "Z" || s[k] == "z" {
                    k += 1; hasOffset = true
                } else if k < s.count, s[k] == "+" || s[k] == "-", let h = twoDigits(k + 1), h <= 23,
                          k + 3 < s.count, s[k + 3] == ":", let m = twoDigits(k + 4), m <= 59 {
                    k += 6; hasOffset = true
                }
            }
            let y = fourDigits(start)!, mo = twoDigits(start + 5)!, d = twoDigits(start + 8)!
            let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
            let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1]
            guard d <= days else { throw fail("\(text(start, afterDate)) is not a day of the calendar", at: start) }
            i = k
            let t = text(start, k)
            return hasOffset ? .offsetDateTime(t) : hasTime ? .localDateTime(t) : .localDate(t)
        }
        if let end = time(at: i) {
            i = end
            return .localTime(text(start, end))
        }
        return nil
    }

    /// The end of `YYYY-MM-DD` (month 01–12, day 01–31) at `k`, or nil.
    private func date(at k: Int) -> Int? {
        guard fourDigits(k) != nil, k + 4 < s.count, s[k + 4] == "-", let m = twoDigits(k + 5), (1...12).contains(m),
              k + 7 < s.count, s[k + 7] == "-", let d = twoDigits(k + 8), (1...31).contains(d) else { return nil }
        return k + 10
    }

    /// The end of `HH:MM:SS(.fraction)?` (00–23, 00–59, 00–59) at `k`, or nil.
    private func time(at k: Int) -> Int? {
        guard let h = twoDigits(k), h <= 23, k + 2 < s.count, s[k + 2] == ":", let m = twoDigits(k + 3), m <= 59,
              k + 5 < s.count, s[k + 5] == ":", let sec = twoDigits(k + 6), sec <= 59 else { return nil }
        var end = k + 8
        if end + 1 < s.count, s[end] == ".", isDigit(s[end + 1]) {
            end += 2
            while end < s.count, isDigit(s[end]) { end += 1 }
        }
        return end
    }

    private func twoDigits(_ k: Int) -> Int? {
        guard k + 1 < s.count, isDigit(s[k]), isDigit(s[k + 1]) else { return nil }
        return Int(s[k].value - 48) * 10 + Int(s[k + 1].value - 48)
    }

    private func fourDigits(_ k: Int) -> Int? {
        guard let a = twoDigits(k), let b = twoDigits(k + 2) else { return nil }
        return a * 100 + b
    }

    // MARK: Whitespace and comments

    private mutating func skipWhitespace() {
        while let c = peek(), c == " " || c == "\t" { i += 1 }
    }

    /// A `#` comment up to (not including) the line end; control characters but tab are refused.
    private mutating func skipComment() throws(TOMLError) {
        guard peek() == "#" else { return }
        i += 1
        while let c = peek(), c != "\n" {
            guard !isControl(c) || c == "\t" else { throw fail("\(describe(c)) is not allowed in a comment") }
            i += 1
        }
    }

    /// Whitespace, line ends and comments between an array's elements.
    private mutating func skipArraySpace() throws(TOMLError) {
        while true {
            let before = i
            while let c = peek(), c == " " || c == "\t" || c == "\n" { i += 1 }
            try skipComment()
            if i == before { return }
        }
    }

    // MARK: Helpers

    private func peek() -> Unicode.Scalar? { i < s.count ? s[i] : nil }

    private func starts(_ word: String) -> Bool {
        var k = i
        for c in word.unicodeScalars {
            guard k < s.count, s[k] == c else { return false }
            k += 1
        }
        return true
    }

    private func text(_ from: Int, _ to: Int) -> String { String(String.UnicodeScalarView(s[from..<to])) }

    private func isBareKey(_ c: Unicode.Scalar) -> Bool {
        switch c { case "a"..."z", "A"..."Z", "0"..."9", "_", "-": true; default: false }
    }

    private func isDigit(_ c: Unicode.Scalar) -> Bool { ("0"..."9").contains(c) }

    private func isControl(_ c: Unicode.Scalar) -> Bool { c.value < 0x20 || c.value == 0x7F }

    private func hex4(_ c: Unicode.Scalar) -> String { hex(c.value, 4) }

    private func hex(_ value: UInt32, _ digits: Int) -> String {
        let h = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - h.count)) + h
    }

    private func article(_ word: String) -> String { "aeiou".contains(word.first ?? "x") ? "n" : "" }

    /// A character as a message names it: printable ones quoted, the rest as U+XXXX.
    private func describe(_ c: Unicode.Scalar?) -> String {
        guard let c else { return "the end of the file" }
        if c == "\n" { return "the end of the line" }
        if isControl(c) || c.properties.isWhitespace || !c.properties.isGraphemeBase && c.value > 0x7F {
            return "the character U+\(hex4(c))"
        }
        return "'\(Character(c))'"
    }

    private func fail(_ message: String, at position: Int? = nil) -> TOMLError {
        let p = min(position ?? i, s.count)
        var line = 1, column = 1
        for c in s[..<p] {
            if c == "\n" { line += 1; column = 1 } else { column += 1 }
        }
        return TOMLError(line: line, column: column, message: message)
    }
}

private func hexDigit(_ c: Unicode.Scalar) -> UInt32? {
    switch c {
    case "0"..."9": c.value - 48
    case "a"..."f": c.value - 87
    case "A"..."F": c.value - 55
    default: nil
    }
}
