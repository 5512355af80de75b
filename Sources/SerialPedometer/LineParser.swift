import Foundation

/// Which line shapes a device's lines are parsed as.
package enum LineFormat: Sendable, Hashable, CustomStringConvertible {
    /// JSON lines, `key:value`/`key=value` pairs and bare integers, told apart by shape
    /// (a line starting with `{` is JSON; a lone number is an integer line; else pairs).
    case auto
    /// JSON lines only: `{"steps":1234,"t":1700000001.25,"seq":7,"boot":"b3"}`.
    case json
    /// Arduino Serial Plotter style pairs only: `steps:1234,seq:7` (`,`, tab or space between pairs).
    case keyValue
    /// A bare cumulative count per line only: `1234` (integral decimals such as `123.00` too).
    case integer
    /// A vendor profile the user chose by name (never guessed).
    case profile(VendorProfile)

    /// Parses `auto`, `json`, `kv`, `int` or `profile:NAME`, looking NAME up in `profiles`.
    /// - Throws: ``SerialConfigError`` when the name is unknown.
    package init(parsing text: String, profiles: [String: VendorProfile]) throws {
        switch text {
        case "auto": self = .auto
        case "json": self = .json
        case "kv": self = .keyValue
        case "int": self = .integer
        default:
            guard text.hasPrefix("profile:") else { throw SerialConfigError.unknownFormat(text) }
            let name = String(text.dropFirst("profile:".count))
            guard let p = profiles[name] else {
                throw SerialConfigError.unknownProfile(name, known: profiles.keys.sorted())
            }
            self = .profile(p)
        }
    }

    package var description: String {
        switch self {
        case .auto: "auto"
        case .json: "json"
        case .keyValue: "kv"
        case .integer: "int"
        case .profile(let p): "profile:\(p.name)"
        }
    }
}

/// Turns one trimmed line into a ``PedometerReading`` or a reason it is not one.
///
/// Numbers: counts (`steps`, `seq`, `dsteps`) are non-negative integers; an integral decimal
/// (`123.00`, as Arduino's `String(float)` prints) is accepted, a fractional one (`12.5`) is not.
/// Keys are case-sensitive (`steps`, not `Steps`): vendor text is for profiles.
package enum LineParser {
    /// Parses `line` (already framed and trimmed) in `format`, received at `receivedAt`, and
    /// refuses device times outside ``DeviceTimeRule``'s range: what the reader, the daemon,
    /// replay and `decode pedometer` all call, so they accept and refuse the same lines.
    package static func parse(_ line: String, format: LineFormat, receivedAt: Date) -> Result<PedometerReading, LineRejection> {
        parse(line, format: format).flatMap { r in
            DeviceTimeRule.check(r, receivedAt: receivedAt).map { .failure($0) } ?? .success(r)
        }
    }

    /// Parses `line` (already framed and trimmed) in `format`: the shape only, no time range
    /// (see ``parse(_:format:receivedAt:)``).
    package static func parse(_ line: String, format: LineFormat) -> Result<PedometerReading, LineRejection> {
        switch format {
        case .json: return parseJSON(line)
        case .keyValue: return parseKeyValue(line)
        case .integer:
            guard let n = parseCount(line) else { return .failure(.notPedometer("not a bare step count")) }
            return .success(PedometerReading(steps: n))
        case .profile(let p): return p.parse(line)
        case .auto:
            if line.hasPrefix("{") { return parseJSON(line) }
            if let n = parseCount(line) { return .success(PedometerReading(steps: n)) }
            if line.first == "-" || line.first?.isNumber == true, Double(line) != nil {
                return .failure(.notPedometer("a number, but not a non-negative whole step count"))
            }
            return parseKeyValue(line)
        }
    }

    // MARK: numbers

    /// A non-negative integer, or an integral decimal such as `123.00`; nil otherwise.
    static func parseCount(_ text: some StringProtocol) -> UInt64? {
        let s = Substring(text)
        if let n = UInt64(s) { return n }
        guard let dot = s.firstIndex(of: "."), dot != s.startIndex else { return nil }
        let whole = s[..<dot], frac = s[s.index(after: dot)...]
        guard !frac.isEmpty, frac.allSatisfy({ $0 == "0" }), whole.allSatisfy(\.isASCII) else { return nil }
        return UInt64(whole)
    }

    /// A finite decimal number (device times); nil otherwise.
    static func parseTime(_ text: some StringProtocol) -> Double? {
        guard let d = Double(String(text)), d.isFinite, d >= 0 else { return nil }
        return d
    }

    // MARK: JSON

    private struct JSONLine: Decodable {
        var steps: Number?
        var t: Double?
        var seq: Number?
        var boot: BootID?
        var dsteps: Number?
        var t0: Double?
        var t1: Double?
    }

    /// A JSON number that must be a non-negative integer (integral decimals allowed).
    private struct Number: Decodable {
        var value: UInt64
        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let n = try? c.decode(UInt64.self) { value = n; return }
            let d = try c.decode(Double.self)
            guard d >= 0, d.rounded() == d, d < 1.8e19 else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "\(d) is not a whole non-negative count")
            }
            value = UInt64(d)
        }
    }

    /// `boot` as a string or a number (firmware often prints a random integer).
    private struct BootID: Decodable {
        var value: String
        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let s = try? c.decode(String.self) { value = s; return }
            if let n = try? c.decode(Int64.self) { value = String(n); return }
            if let n = try? c.decode(UInt64.self) { value = String(n); return }
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "boot must be a string or an integer")
        }
    }

    static func parseJSON(_ line: String) -> Result<PedometerReading, LineRejection> {
        guard line.hasPrefix("{") else { return .failure(.notPedometer("not a JSON object")) }
        let decoded: JSONLine
        do {
            decoded = try JSONDecoder().decode(JSONLine.self, from: Data(line.utf8))
        } catch let DecodingError.dataCorrupted(ctx) where !ctx.codingPath.isEmpty {
            return .failure(.notPedometer("JSON key \(ctx.codingPath.map(\.stringValue).joined(separator: ".")): \(ctx.debugDescription)"))
        } catch let DecodingError.typeMismatch(_, ctx) {
            return .failure(.notPedometer("JSON key \(ctx.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type"))
        } catch {
            return .failure(.notPedometer("not valid JSON"))
        }
        guard let steps = decoded.steps else { return .failure(.notPedometer("JSON line has no \"steps\"")) }
        if let t = decoded.t, !(t.isFinite && t >= 0) { return .failure(.notPedometer("\"t\" is not a valid time")) }
        return .success(PedometerReading(steps: steps.value, deviceTime: decoded.t, seq: decoded.seq?.value,
                                         boot: decoded.boot?.value, deltaSteps: decoded.dsteps?.value,
                                         deltaStart: decoded.t0, deltaEnd: decoded.t1))
    }

    // MARK: key:value pairs

    static func parseKeyValue(_ line: String) -> Result<PedometerReading, LineRejection> {
        // Split on ',', tab and space; a token ending in ':' or '=' takes the next token as its value
        // (`steps: 42`, as hand-written sketches print it).
        let raw = line.split(whereSeparator: { $0 == "," || $0 == "\t" || $0 == " " })
        var pairs: [(String, Substring)] = []
        var i = 0
        while i < raw.count {
            let tok = raw[i]
            guard let sep = tok.firstIndex(where: { $0 == ":" || $0 == "=" }), sep != tok.startIndex else {
                return .failure(.notPedometer("not key:value pairs (\"\(tok.prefix(24))\")"))
            }
            let key = String(tok[..<sep])
            var value = tok[tok.index(after: sep)...]
            if value.isEmpty {
                guard i + 1 < raw.count else { return .failure(.notPedometer("key \"\(key)\" has no value")) }
                i += 1
                value = raw[i]
            }
            pairs.append((key, value))
            i += 1
        }
        var r = PedometerReading()
        for (key, value) in pairs {
            switch key {
            case "steps":
                guard let n = parseCount(value) else { return .failure(.notPedometer("steps \"\(value.prefix(24))\" is not a whole count")) }
                r.steps = n
            case "seq":
                guard let n = parseCount(value) else { return .failure(.notPedometer("seq \"\(value.prefix(24))\" is not a whole number")) }
                r.seq = n
            case "dsteps":
                guard let n = parseCount(value) else { return .failure(.notPedometer("dsteps \"\(value.prefix(24))\" is not a whole count")) }
                r.deltaSteps = n
            case "t", "t0", "t1":
                guard let d = parseTime(value) else { return .failure(.notPedometer("\(key) \"\(value.prefix(24))\" is not a time")) }
                if key == "t" { r.deviceTime = d } else if key == "t0" { r.deltaStart = d } else { r.deltaEnd = d }
            case "boot":
                r.boot = String(value)
            default:
                continue  // other plotter series (ax, ay, activity, …) are not ours
            }
        }
        guard r.steps != nil else { return .failure(.notPedometer("no \"steps\" key (vendor text needs --format profile:NAME)")) }
        return .success(r)
    }
}
