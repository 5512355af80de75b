import Foundation
import HealthModel

/// The import's hot path: one JSON line's bytes straight to a ``QuantitySample``, without
/// Foundation's per-line object tree (`JSONDecoder` → `[String: Any]` → casts), which cost about
/// 40 µs of the 60 µs a line took (docs/performance.md, "Import").
///
/// **It never decides that a line is bad.** It handles the shape `samples --json` and
/// `export --format jsonl` write — an object of the known keys, strings without escapes, numbers,
/// `null`, the nested `device`, `metadata`, `rrIntervals` and `series` objects, dates of the form
/// `YYYY-MM-DDTHH:MM[:SS[.f]](Z|±HH:MM)` — and returns nil for anything else or anything wrong
/// (an escape, an unknown or repeated key, a value of another type, a sample the model refuses).
/// The caller then parses the line with ``SampleJSON/sample(fromLine:registry:)``, which accepts
/// or refuses it with today's messages. So what is accepted, what is refused and every message
/// stay those of the Foundation path; a differential test (`FastSampleParserTests`) checks that
/// on every line this parser accepts, both give the same sample, on random and hostile lines.
///
/// The parser keeps the last type, unit, source, device and metadata it saw by their bytes, so
/// a file of one strap's samples builds those values once, not once per line.
package struct FastSampleParser {
    let registry: QuantityTypeRegistry

    /// Creates a parser for `registry`'s types.
    package init(registry: QuantityTypeRegistry = .standard) {
        self.registry = registry
    }

    // The last values seen, by the exact bytes they were read from.
    private var lastType = Cached<QuantityType>()
    private var lastUnit = Cached<HealthUnit>()
    private var lastSource = Cached<Source>()
    private var lastDevice = Cached<Device?>()
    private var lastMetadata = Cached<Metadata>()

    /// The sample of one line (its bytes without the line end), or nil when this parser does
    /// not handle the line: parse it with ``SampleJSON/sample(fromLine:registry:)`` then.
    package mutating func sample(_ line: UnsafeBufferPointer<UInt8>) -> QuantitySample? {
        guard let base = line.baseAddress else { return nil }
        var r = Reader(p: base, n: line.count)
        return parse(&r)
    }

    /// The top-level keys, one bit each (a repeated key is not this parser's business).
    private enum Key: UInt16 {
        case uuid = 1, type = 2, value = 4, unit = 8, start = 16, end = 32, source = 64, sourceIdentifier = 128,
             sourceVersion = 256, device = 512, metadata = 1024, rrIntervals = 2048, series = 4096

        var name: StaticString {
            switch self {
            case .uuid: "uuid"
            case .type: "type"
            case .value: "value"
            case .unit: "unit"
            case .start: "start"
            case .end: "end"
            case .source: "source"
            case .sourceIdentifier: "sourceIdentifier"
            case .sourceVersion: "sourceVersion"
            case .device: "device"
            case .metadata: "metadata"
            case .rrIntervals: "rrIntervals"
            case .series: "series"
            }
        }
    }

    private mutating func parse(_ r: inout Reader) -> QuantitySample? {
        r.skipSpace()
        guard r.take(0x7B) else { return nil }   // {
        var seen: UInt16 = 0
        var uuid: UUID?
        var type: QuantityType?
        var value: Double?
        var unit: HealthUnit?
        var start: Date?, end: Date?
        var startText: Range<Int>?
        var sourceName: Range<Int>?, sourceIdentifier: Range<Int>?, sourceVersion: Range<Int>?
        var device: Device?
        var metadata = Metadata()
        var rr: RRIntervals?
        var seriesIndex: Int?
        r.skipSpace()
        if r.peek == 0x7D { return nil }   // {}: no type; the Foundation path says so
        while true {
            guard let keyRange = r.key(), let key = Self.key(r, keyRange) else { return nil }
            guard seen & key.rawValue == 0 else { return nil }
            seen |= key.rawValue
            switch key {
            case .uuid:
                if r.takeNull() { break }
                guard let s = r.string(), let u = Self.uuid(r, s) else { return nil }
                uuid = u
            case .type:
                guard let s = r.string() else { return nil }
                guard let t = lastType.value(r, s, make: { try? registry.type(r.text(s)) }) else { return nil }
                type = t
            case .value:
                guard let v = r.number() else { return nil }
                value = v
            case .unit:
                guard let s = r.string() else { return nil }
                guard let u = lastUnit.value(r, s, make: { try? HealthUnit(r.text(s)) }) else { return nil }
                unit = u
            case .start:
                guard let s = r.string(), let d = FastDate.parse(r, s) else { return nil }
                start = d
                startText = s
            case .end:
                if r.takeNull() { break }
                guard let s = r.string() else { return nil }
                if let st = startText, r.same(st, s) { end = start } else {
                    guard let d = FastDate.parse(r, s) else { return nil }
                    end = d
                }
            case .source:
                guard let s = r.string() else { return nil }   // the object form is left to Foundation
                sourceName = s
            case .sourceIdentifier:
                if r.takeNull() { break }
                guard let s = r.string() else { return nil }
                sourceIdentifier = s
            case .sourceVersion:
                if r.takeNull() { break }
                guard let s = r.string() else { return nil }
                sourceVersion = s
            case .device:
                guard let d = lastDevice.skipping(&r, make: Self.device) else { return nil }
                device = d
            case .metadata:
                guard let m = lastMetadata.skipping(&r, make: Self.metadata) else { return nil }
                metadata = m
            case .rrIntervals:
                if r.takeNull() { break }
                guard let x = Self.rrIntervals(&r) else { return nil }
                rr = x
            case .series:
                if r.takeNull() { break }
                guard let n = Self.seriesIndex(&r) else { return nil }
                seriesIndex = n
            }
            r.skipSpace()
            if r.take(0x2C) { continue }   // ,
            guard r.take(0x7D) else { return nil }   // }
            break
        }
        r.skipSpace()
        guard r.atEnd else { return nil }
        guard let type, let value, let start else { return nil }
        // Without "source" the line's sourceIdentifier/sourceVersion are not read (SampleJSON's rule).
        let source: Source
        if let name = sourceName {
            guard let s = lastSource.value(r, name, sourceIdentifier, sourceVersion, make: {
                Source(name: r.text(name), identifier: sourceIdentifier.map(r.text), version: sourceVersion.map(r.text))
            }) else { return nil }
            source = s
        } else {
            source = SampleJSON.importSource
        }
        let quantity = Quantity(value, unit ?? type.canonicalUnit)
        guard let parsed = try? QuantitySample(uuid: uuid ?? Self.placeholder, type: type, quantity: quantity, start: start,
                                               end: end ?? start, source: source, device: device, metadata: metadata,
                                               rrIntervals: rr) else { return nil }
        if let seriesIndex {
            // A quantity of a quantity series (export's `"series": {"index": n}`): its series'
            // UUID is required, as SampleJSON requires it.
            guard uuid != nil else { return nil }
            return try? parsed.inSeries(index: seriesIndex)
        }
        if uuid != nil { return parsed }
        // Content identity, exactly as SampleJSON does it.
        guard let content = try? SampleJSON.canonicalContent(parsed) else { return nil }
        var rng = SplitMix64(seed: SampleJSON.fnv1a(content))
        return try? QuantitySample(uuid: UUID.timeOrdered(at: start, using: &rng), type: type, quantity: quantity, start: start,
                                   end: end ?? start, source: source, device: device, metadata: metadata, rrIntervals: rr)
    }

    private static let placeholder = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    private static func key(_ r: Reader, _ s: Range<Int>) -> Key? {
        let key: Key
        switch s.count {
        case 3: key = .end
        case 4: key = r.p[s.lowerBound] == 0x75 ? (r.p[s.lowerBound + 1] == 0x75 ? .uuid : .unit) : .type
        case 5: key = r.p[s.lowerBound] == 0x76 ? .value : .start
        case 6: key = r.p[s.lowerBound] == 0x73 ? (r.p[s.lowerBound + 1] == 0x6F ? .source : .series) : .device
        case 8: key = .metadata
        case 11: key = .rrIntervals
        case 13: key = .sourceVersion
        case 16: key = .sourceIdentifier
        default: return nil
        }
        let name = key.name
        return memcmp(r.p + s.lowerBound, name.utf8Start, s.count) == 0 ? key : nil
    }

    /// A UUID in its 36-character form (either case); nil for anything else.
    static func uuid(_ r: Reader, _ s: Range<Int>) -> UUID? {
        guard s.count == 36 else { return nil }
        var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var k = 0, i = s.lowerBound
        while i < s.upperBound {
            let off = i - s.lowerBound
            if off == 8 || off == 13 || off == 18 || off == 23 {
                guard r.p[i] == 0x2D else { return nil }
                i += 1
                continue
            }
            guard let hi = Hex.nibble(r.p[i]), let lo = Hex.nibble(r.p[i + 1]) else { return nil }
            withUnsafeMutableBytes(of: &u) { $0[k] = hi << 4 | lo }
            k += 1
            i += 2
        }
        return UUID(uuid: u)
    }

    private static let deviceKeys = ["name", "manufacturer", "model", "hardwareVersion", "firmwareVersion",
                                     "softwareVersion", "localIdentifier", "udiDeviceIdentifier"]

    /// `device`: null, a name, or an object of the device's string fields (each a string or null).
    /// The outer Optional is "handled"; the inner one is "no device".
    private static func device(_ outer: Reader, _ span: Range<Int>) -> Device?? {
        var r = outer.sub(span)
        if r.takeNull() { return .some(nil) }
        if r.peek == 0x22 {
            guard let s = r.string() else { return nil }
            return .some(Device(name: r.text(s)))
        }
        guard r.take(0x7B) else { return nil }
        var fields = [String?](repeating: nil, count: deviceKeys.count)
        var seen = 0
        r.skipSpace()
        if !r.take(0x7D) {
            while true {
                guard let k = r.key(), let index = deviceKeys.firstIndex(where: { r.equals(k, $0) }) else { return nil }
                guard seen & (1 << index) == 0 else { return nil }
                seen |= 1 << index
                if !r.takeNull() {
                    guard let v = r.string() else { return nil }
                    fields[index] = r.text(v)
                }
                r.skipSpace()
                if r.take(0x2C) { continue }
                guard r.take(0x7D) else { return nil }
                break
            }
        }
        return .some(Device(name: fields[0], manufacturer: fields[1], model: fields[2], hardwareVersion: fields[3],
                            firmwareVersion: fields[4], softwareVersion: fields[5], localIdentifier: fields[6],
                            udiDeviceIdentifier: fields[7]))
    }

    /// `metadata`: null or a flat object; the typed keys by name (or HealthKit's), user keys with
    /// string or number values. Mirrors ``SampleJSON/parseMetadata(_:)`` for what it accepts.
    private static func metadata(_ outer: Reader, _ span: Range<Int>) -> Metadata? {
        var r = outer.sub(span)
        var m = Metadata()
        if r.takeNull() { return m }
        guard r.take(0x7B) else { return nil }
        var seen = 0
        r.skipSpace()
        if r.take(0x7D) { return m }
        while true {
            guard let k = r.key() else { return nil }
            let rawKey = r.text(k)
            let key = SampleJSON.aliases[rawKey] ?? rawKey
            if let bit = typedKeys.firstIndex(of: key) {
                guard seen & (1 << bit) == 0 else { return nil }
                seen |= 1 << bit
                switch key {
                case "heartRateSensorLocation":
                    guard let s = r.string(), let x = enumCase(r, s, HeartRateSensorLocation.allCases, \.name) else { return nil }
                    m.heartRateSensorLocation = x
                case "heartRateMotionContext":
                    guard let s = r.string(), let x = enumCase(r, s, HeartRateMotionContext.allCases, \.name) else { return nil }
                    m.heartRateMotionContext = x
                case "sensorContact":
                    guard let s = r.string(), let x = enumCase(r, s, SensorContact.allCases, \.name) else { return nil }
                    m.sensorContact = x
                case "syncIdentifier":
                    guard let s = r.string() else { return nil }
                    m.syncIdentifier = r.text(s)
                case "syncVersion":
                    guard let n = r.number(), n == n.rounded(), abs(n) < 9e15 else { return nil }
                    m.syncVersion = Int(n)
                default:   // wasUserEntered
                    if r.takeLiteral("true") { m.wasUserEntered = true }
                    else if r.takeLiteral("false") { m.wasUserEntered = false }
                    else { return nil }
                }
            } else {
                guard m.user[key] == nil else { return nil }
                if r.peek == 0x22 {
                    guard let s = r.string() else { return nil }
                    m.user[key] = MetadataValue(userText: r.text(s))
                } else {
                    guard let n = r.number() else { return nil }
                    m.user[key] = .number(n)
                }
            }
            r.skipSpace()
            if r.take(0x2C) { continue }
            guard r.take(0x7D) else { return nil }
            break
        }
        r.skipSpace()
        return r.atEnd ? m : nil
    }

    private static let typedKeys = ["heartRateSensorLocation", "heartRateMotionContext", "sensorContact",
                                    "syncIdentifier", "syncVersion", "wasUserEntered"]

    /// An enum case by its name, ASCII letters in any case (the model's `init?(name:)` rule);
    /// anything else (digits, other characters) is left to the Foundation path.
    private static func enumCase<E>(_ r: Reader, _ s: Range<Int>, _ all: [E], _ name: KeyPath<E, String>) -> E? {
        for i in s { guard (0x41...0x5A).contains(r.p[i]) || (0x61...0x7A).contains(r.p[i]) else { return nil } }
        for c in all {
            let n = c[keyPath: name].utf8
            guard n.count == s.count else { continue }
            if zip(n, s).allSatisfy({ $0 | 0x20 == r.p[$1] | 0x20 }) { return c }
        }
        return nil
    }

    /// `series`: exactly `{"index": n}`, n a whole number from 0 below 9e15 (SampleJSON's rule);
    /// anything else, an extra key included, is left to the Foundation path.
    private static func seriesIndex(_ r: inout Reader) -> Int? {
        guard r.take(0x7B) else { return nil }
        r.skipSpace()
        guard let k = r.string(), r.equals(k, "index") else { return nil }
        r.skipSpace()
        guard r.take(0x3A) else { return nil }
        r.skipSpace()
        guard let n = r.number(), n >= 0, n == n.rounded(), n < 9e15 else { return nil }
        r.skipSpace()
        guard r.take(0x7D) else { return nil }
        return Int(n)
    }

    /// `rrIntervals`: `{"ticks": [1…65534, …], "precededByGap": true|false}` (either order).
    private static func rrIntervals(_ r: inout Reader) -> RRIntervals? {
        guard r.take(0x7B) else { return nil }
        var ticks: [UInt16]?
        var gap: Bool?
        r.skipSpace()
        if r.peek == 0x7D { return nil }   // no ticks: an error, worded by the Foundation path
        while true {
            guard let k = r.key() else { return nil }
            if r.equals(k, "ticks") {
                guard ticks == nil, r.take(0x5B) else { return nil }
                var t: [UInt16] = []
                r.skipSpace()
                if !r.take(0x5D) {
                    while true {
                        r.skipSpace()
                        guard let n = r.number(), n >= 1, n < 65535, n == n.rounded() else { return nil }
                        t.append(UInt16(n))
                        r.skipSpace()
                        if r.take(0x2C) { continue }
                        guard r.take(0x5D) else { return nil }
                        break
                    }
                }
                ticks = t
            } else if r.equals(k, "precededByGap") {
                guard gap == nil else { return nil }
                if r.takeLiteral("true") { gap = true } else if r.takeLiteral("false") { gap = false } else { return nil }
            } else {
                return nil
            }
            r.skipSpace()
            if r.take(0x2C) { continue }
            guard r.take(0x7D) else { return nil }
            break
        }
        guard let ticks else { return nil }
        return RRIntervals(ticks: ticks, precededByGap: gap ?? false)
    }
}

/// A value remembered with the bytes it was made from.
private struct Cached<T> {
    var bytes: [UInt8] = []
    var lengths = (-1, -1, -1)
    var value: T?

    /// The value for the bytes of `a` (and `b`, `c`: absent is not the same as empty), made by
    /// `make` unless the same bytes gave it last time.
    mutating func value(_ r: Reader, _ a: Range<Int>, _ b: Range<Int>? = nil, _ c: Range<Int>? = nil, make: () -> T?) -> T? {
        let lengths = (a.count, b?.count ?? -1, c?.count ?? -1)
        if let value, lengths == self.lengths, matches(r, a, b, c) { return value }
        guard let v = make() else { return nil }
        bytes.removeAll(keepingCapacity: true)
        bytes.append(contentsOf: UnsafeBufferPointer(start: r.p + a.lowerBound, count: a.count))
        if let b { bytes.append(contentsOf: UnsafeBufferPointer(start: r.p + b.lowerBound, count: b.count)) }
        if let c { bytes.append(contentsOf: UnsafeBufferPointer(start: r.p + c.lowerBound, count: c.count)) }
        self.lengths = lengths
        value = v
        return v
    }

    /// Skips the JSON value at `r` and gives what its bytes make (as ``value(_:_:_:_:make:)``);
    /// nil when it is not a value or `make` refuses it.
    mutating func skipping(_ r: inout Reader, make: (Reader, Range<Int>) -> T?) -> T? {
        let from = r.i
        guard r.skipValue() else { return nil }
        let span = from..<r.i
        return value(r, span, make: { [r] in make(r, span) })
    }

    private func matches(_ r: Reader, _ a: Range<Int>, _ b: Range<Int>?, _ c: Range<Int>?) -> Bool {
        // The lengths already match, so the bytes hold exactly a, b and c one after another.
        bytes.withUnsafeBufferPointer { own in
            guard let base = own.baseAddress else { return true }   // every span empty
            guard memcmp(base, r.p + a.lowerBound, a.count) == 0 else { return false }
            var at = a.count
            if let b {
                guard memcmp(base + at, r.p + b.lowerBound, b.count) == 0 else { return false }
                at += b.count
            }
            if let c { guard memcmp(base + at, r.p + c.lowerBound, c.count) == 0 else { return false } }
            return true
        }
    }
}

/// A cursor over one line's bytes: the JSON tokens the fast parser reads.
struct Reader {
    let p: UnsafePointer<UInt8>
    let n: Int
    var i = 0

    init(p: UnsafePointer<UInt8>, n: Int) {
        self.p = p
        self.n = n
    }

    /// A reader over `span` of the same bytes.
    func sub(_ span: Range<Int>) -> Reader {
        var r = Reader(p: p, n: span.upperBound)
        r.i = span.lowerBound
        return r
    }

    var atEnd: Bool { i == n }
    var peek: UInt8 { i < n ? p[i] : 0 }

    /// JSON's insignificant white space (a line holds no LF).
    mutating func skipSpace() {
        while i < n, p[i] == 0x20 || p[i] == 0x09 || p[i] == 0x0D || p[i] == 0x0A { i += 1 }
    }

    mutating func take(_ b: UInt8) -> Bool {
        guard i < n, p[i] == b else { return false }
        i += 1
        return true
    }

    mutating func takeLiteral(_ s: StaticString) -> Bool {
        let k = s.utf8CodeUnitCount
        guard i + k <= n, memcmp(p + i, s.utf8Start, k) == 0 else { return false }
        i += k
        return true
    }

    mutating func takeNull() -> Bool { takeLiteral("null") }

    /// A string without escapes or control characters: the range of its content. Nil (and the
    /// line left to Foundation) for anything else.
    /// An object's `"key":` with the spaces around it: the key's bytes (as ``string()``).
    mutating func key() -> Range<Int>? {
        skipSpace()
        guard let k = string() else { return nil }
        skipSpace()
        guard take(0x3A) else { return nil }
        skipSpace()
        return k
    }

    mutating func string() -> Range<Int>? {
        guard take(0x22) else { return nil }
        let from = i
        while i < n {
            let b = p[i]
            if b == 0x22 { i += 1; return from..<(i - 1) }
            if b == 0x5C || b < 0x20 { return nil }
            i += 1
        }
        return nil
    }

    func text(_ s: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(start: p + s.lowerBound, count: s.count), as: UTF8.self)
    }

    func equals(_ s: Range<Int>, _ text: String) -> Bool {
        var text = text
        return text.withUTF8 { t in t.count == s.count && memcmp(t.baseAddress!, p + s.lowerBound, s.count) == 0 }
    }

    func same(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
        a.count == b.count && memcmp(p + a.lowerBound, p + b.lowerBound, a.count) == 0
    }

    /// A JSON number (RFC 8259 grammar) as the nearest double. Nil for anything else, and for
    /// numbers whose reading could depend on the reader (over 40 characters, exponents of 3
    /// digits or more, minus zero): those go to Foundation.
    mutating func number() -> Double? {
        let from = i
        var integral = true
        _ = take(0x2D)   // -
        guard i < n else { return nil }
        if p[i] == 0x30 {
            i += 1
        } else if (0x31...0x39).contains(p[i]) {
            while i < n, (0x30...0x39).contains(p[i]) { i += 1 }
        } else {
            return nil
        }
        if i < n, p[i] == 0x2E {   // .
            integral = false
            i += 1
            let d = i
            while i < n, (0x30...0x39).contains(p[i]) { i += 1 }
            guard i > d else { return nil }
        }
        if i < n, p[i] == 0x65 || p[i] == 0x45 {   // e E
            integral = false
            i += 1
            if i < n, p[i] == 0x2B || p[i] == 0x2D { i += 1 }
            let d = i
            while i < n, (0x30...0x39).contains(p[i]) { i += 1 }
            guard i > d, i - d <= 2 else { return nil }
        }
        let length = i - from
        guard length <= 40 else { return nil }
        // Foundation's JSONDecoder refuses `0e5` but reads `0e+5` and `0e0`: a zero integer part
        // followed by an exponent is left to it.
        let digits = p[from] == 0x2D ? from + 1 : from
        if p[digits] == 0x30, digits + 1 < i, p[digits + 1] == 0x65 || p[digits + 1] == 0x45 { return nil }
        if p[from] == 0x2D {
            // Minus zero and its spellings are Foundation's to read.
            var k = from + 1, nonzero = false
            while k < i, p[k] != 0x65, p[k] != 0x45 {
                if (0x31...0x39).contains(p[k]) { nonzero = true; break }
                k += 1
            }
            guard nonzero else { return nil }
        }
        if integral, length <= 15 {
            var v: Int64 = 0
            let neg = p[from] == 0x2D
            for k in (neg ? from + 1 : from)..<i { v = v * 10 + Int64(p[k] - 0x30) }
            return Double(neg ? -v : v)
        }
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))   // 48 bytes
        return withUnsafeMutableBytes(of: &buffer) { raw -> Double? in
            let b = raw.bindMemory(to: CChar.self)
            for k in 0..<length { b[k] = CChar(bitPattern: p[from + k]) }
            b[length] = 0
            var end: UnsafeMutablePointer<CChar>?
            let v = strtod(b.baseAddress!, &end)
            guard let end, end - b.baseAddress! == length, v.isFinite else { return nil }
            return v
        }
    }

    /// Skips one JSON value whose shape the parser checks later (an object, a string, null);
    /// false for what it does not skip (numbers and literals other than null are refused here).
    mutating func skipValue() -> Bool {
        if takeNull() { return true }
        if peek == 0x22 { return string() != nil }
        guard peek == 0x7B else { return false }
        var depth = 0
        while i < n {
            switch p[i] {
            case 0x22:
                guard string() != nil else { return false }
                continue
            case 0x7B, 0x5B: depth += 1
            case 0x7D, 0x5D:
                depth -= 1
                if depth == 0 { i += 1; return true }
            default: break
            }
            i += 1
        }
        return false
    }
}
