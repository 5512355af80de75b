import Foundation
import HealthModel

/// The JSON shape of one sample, as `healthgate samples --json` prints it and
/// `healthgate import --jsonl` / `export --format jsonl` read and write it (docs/data-model.md):
///
/// ```json
/// {"uuid": "…", "type": "stepCount", "value": 1000, "unit": "count",
///  "start": "2026-11-02T08:00:00Z", "end": "2026-11-02T09:00:00Z",
///  "source": "Watch", "sourceIdentifier": "com.example.watch",
///  "device": {"name": "Watch", "manufacturer": "Apple"}, "metadata": {"syncIdentifier": "w-1", "syncVersion": 1}}
/// ```
///
/// A quantity of a quantity series carries the series' UUID and `"series": {"index": n}`, its
/// position in the series (docs/store.md, "Quantity series").
public enum SampleJSON {
    /// The JSON object for `sample`, its value expressed in `unit` (default: canonical).
    /// - Throws: ``HealthModelError/incompatibleUnits(_:_:)`` when `unit` does not fit the type.
    public static func object(_ sample: QuantitySample, unit: HealthUnit? = nil) throws -> [String: Any] {
        let u = unit ?? sample.type.canonicalUnit
        var o: [String: Any] = [
            "uuid": sample.uuid.uuidString.lowercased(),
            "type": sample.type.identifier,
            "value": try sample.quantity.doubleValue(for: u),
            "unit": u.unitString,
            "start": ISO8601.string(sample.startDate),
            "end": ISO8601.string(sample.endDate),
            "source": sample.source.name,
            "sourceIdentifier": sample.source.identifier,
            "metadata": metadataObject(sample.metadata),
        ]
        if let v = sample.source.version { o["sourceVersion"] = v }
        o["device"] = sample.device.map(deviceObject) ?? NSNull()
        if let rr = sample.rrIntervals {
            o["rrIntervals"] = ["ticks": rr.ticks.map(Int.init), "precededByGap": rr.precededByGap]
        }
        if let i = sample.seriesIndex { o["series"] = ["index": i] }
        return o
    }

    /// A device's non-nil fields.
    public static func deviceObject(_ d: Device) -> [String: Any] {
        var o: [String: Any] = [:]
        o["name"] = d.name; o["manufacturer"] = d.manufacturer; o["model"] = d.model
        o["hardwareVersion"] = d.hardwareVersion; o["firmwareVersion"] = d.firmwareVersion
        o["softwareVersion"] = d.softwareVersion; o["localIdentifier"] = d.localIdentifier
        o["udiDeviceIdentifier"] = d.udiDeviceIdentifier
        return o
    }

    /// Metadata as a flat object: the well-known keys by name, then user keys (dates as ISO 8601).
    public static func metadataObject(_ m: Metadata) -> [String: Any] {
        var o: [String: Any] = [:]
        for (k, v) in m.user {
            switch v {
            case .string(let s): o[k] = s
            case .number(let n): o[k] = n
            case .date(let d): o[k] = ISO8601.string(d)
            }
        }
        if let x = m.heartRateSensorLocation { o["heartRateSensorLocation"] = x.name }
        if let x = m.heartRateMotionContext { o["heartRateMotionContext"] = x.name }
        if let x = m.sensorContact { o["sensorContact"] = x.name }
        if let x = m.syncIdentifier { o["syncIdentifier"] = x }
        if let x = m.syncVersion { o["syncVersion"] = x }
        if let x = m.wasUserEntered { o["wasUserEntered"] = x }
        return o
    }

    /// Why a JSON object is not a sample.
    public struct DecodeError: Error, Sendable, CustomStringConvertible {
        /// What is wrong, in one sentence.
        public let message: String
        public var description: String { message }
    }

    /// Parses one JSON line into a sample. Without `uuid`, the sample gets a version-7 UUID
    /// whose time is the sample's start and whose random bits are a hash of the sample's
    /// content (``canonicalContent(_:)``), not of the line's text: the same sample written with
    /// its keys in another order, other spacing or `1e3` for `1000` is stored once, and
    /// importing the same file twice stores each sample once.
    public static func sample(fromLine line: String, registry: QuantityTypeRegistry = .standard) throws -> QuantitySample {
        let data = Data(line.utf8)
        let any: Any
        do { any = try ExactJSON.value(data) } catch {
            throw DecodeError(message: "not valid JSON")
        }
        guard let o = any as? [String: Any] else { throw DecodeError(message: "expected a JSON object") }
        return try sample(from: o, registry: registry, contentIdentity: true)
    }

    /// Parses a JSON object into a sample (see ``sample(fromLine:registry:)``). Without a
    /// `uuid` the sample's UUID is derived from its content when `contentIdentity` is true,
    /// else it is a fresh one.
    public static func sample(from o: [String: Any], registry: QuantityTypeRegistry = .standard,
                              contentIdentity: Bool = false) throws -> QuantitySample {
        guard let typeName = o["type"] as? String else { throw DecodeError(message: "missing \"type\" (a type identifier such as \"stepCount\")") }
        let type = try registry.type(typeName)
        guard let value = number(o["value"]) else { throw DecodeError(message: "missing or non-numeric \"value\"") }
        let unit = try (o["unit"] as? String).map { try HealthUnit($0) } ?? type.canonicalUnit
        guard let startText = o["start"] as? String else { throw DecodeError(message: "missing \"start\" (ISO 8601, e.g. 2026-11-02T08:00:00Z)") }
        let start = try date(startText, key: "start")
        var end = start
        if let endText = o["end"] as? String {
            end = try date(endText, key: "end")
        } else if o["end"] != nil, !(o["end"] is NSNull) {
            throw DecodeError(message: "\"end\" must be a string (ISO 8601, e.g. 2026-11-02T09:00:00Z)")
        }
        let source = try parseSource(o)
        var device: Device?
        if let d = o["device"] as? [String: Any] { device = try parseDevice(d) }
        else if let name = o["device"] as? String { device = Device(name: name) }
        let metadata = try parseMetadata(o["metadata"] as? [String: Any] ?? [:])
        var rr: RRIntervals?
        if let r = o["rrIntervals"] as? [String: Any] {
            guard let ticks = r["ticks"] as? [Any] else { throw DecodeError(message: "\"rrIntervals\" needs \"ticks\"") }
            let t = try ticks.map { x -> UInt16 in
                guard let n = number(x), n >= 1, n < 65535, n == n.rounded() else {
                    throw DecodeError(message: "RR ticks are whole numbers from 1 to 65534")
                }
                return UInt16(n)
            }
            rr = RRIntervals(ticks: t, precededByGap: (r["precededByGap"] as? Bool) ?? false)
        }
        var uuid = UUID.timeOrdered(at: start)
        let givenUUID = o["uuid"].flatMap { $0 is NSNull ? nil : $0 }
        if let u = givenUUID {
            guard let text = u as? String, let parsed = UUID(uuidString: text) else {
                throw DecodeError(message: "\"uuid\" is not a UUID: \(u)")
            }
            uuid = parsed
        }
        let parsed = try QuantitySample(uuid: uuid, type: type, quantity: Quantity(value, unit), start: start, end: end,
                                        source: source, device: device, metadata: metadata, rrIntervals: rr)
        try refuseNUL(parsed)
        if let series = o["series"], !(series is NSNull) {
            // A quantity of a quantity series: the series' UUID and the quantity's index.
            guard let so = series as? [String: Any], let n = number(so["index"]), n >= 0, n == n.rounded(), n < 9e15 else {
                throw DecodeError(message: "\"series\" must be {\"index\": n} with n a whole number from 0 (the quantity's position in its series)")
            }
            guard givenUUID != nil else {
                throw DecodeError(message: "a series quantity (\"series\") needs its series' \"uuid\"")
            }
            return try parsed.inSeries(index: Int(n))
        }
        guard givenUUID == nil, contentIdentity else { return parsed }
        var rng = SplitMix64(seed: fnv1a(try canonicalContent(parsed)))
        return try QuantitySample(uuid: UUID.timeOrdered(at: start, using: &rng), type: type, quantity: parsed.quantity,
                                  start: start, end: end, source: source, device: device, metadata: metadata, rrIntervals: rr)
    }

    /// Refuses a NUL character in any text of the sample: SQLite's C strings would cut the text
    /// there, so "Watch\u{0}X" would be stored as "Watch" without a word.
    static func refuseNUL(_ s: QuantitySample) throws {
        var texts: [(String, String?)] = [("source", s.source.name), ("sourceIdentifier", s.source.identifier),
                                          ("sourceVersion", s.source.version), ("syncIdentifier", s.metadata.syncIdentifier)]
        if let d = s.device {
            texts += [("device name", d.name), ("device manufacturer", d.manufacturer), ("device model", d.model),
                      ("device hardwareVersion", d.hardwareVersion), ("device firmwareVersion", d.firmwareVersion),
                      ("device softwareVersion", d.softwareVersion), ("device localIdentifier", d.localIdentifier),
                      ("device udiDeviceIdentifier", d.udiDeviceIdentifier)]
        }
        for (k, v) in s.metadata.user {
            texts.append(("metadata key", k))
            if case .string(let x) = v { texts.append(("metadata '\(k)'", x)) }
        }
        for case let (what, text?) in texts where text.utf8.contains(0) {
            throw DecodeError(message: "\(what) contains a NUL character (\\u0000), which cannot be stored; remove it")
        }
    }

    /// A sample's content in one canonical text: its JSON object (value in the canonical unit,
    /// dates exact, keys sorted) without the UUID. Two samples with equal content have equal
    /// text, however their lines were written.
    public static func canonicalContent(_ sample: QuantitySample) throws -> String {
        var o = try object(sample)
        o["uuid"] = nil
        let data = try JSONSerialization.data(withJSONObject: o, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    /// A date field, parsed strictly by ``ISO8601/parse(_:localTimeZone:)``: a file must say its
    /// zone (`Z` or an offset), so a line means the same instant on every machine.
    static func date(_ text: String, key: String) throws -> Date {
        do { return try ISO8601.parse(text, localTimeZone: nil) } catch {
            throw DecodeError(message: "\"\(key)\": \(error.reason)")
        }
    }

    /// True for a JSON `true`/`false` (or a Swift Bool), false for the numbers 0 and 1, which
    /// Foundation on Linux also lets `as? Bool` / `is Bool` match.
    package static func isBoolean(_ x: Any) -> Bool {
        if type(of: x) == Bool.self { return true }
        guard let n = x as? NSNumber else { return false }
        return !CFNumberLike.isPlainNumber(n)
    }

    static func number(_ x: Any?) -> Double? {
        guard let n = x as? NSNumber, !(x is Bool) || CFNumberLike.isPlainNumber(n) else { return nil }
        return n.doubleValue
    }

    /// The source of imported lines that name none: an ordinary (third-party tier) source.
    public static let importSource = Source(name: "Import", identifier: "import")

    static func parseSource(_ o: [String: Any]) throws -> Source {
        if let s = o["source"] as? [String: Any] {
            guard let name = s["name"] as? String else { throw DecodeError(message: "\"source\" needs a \"name\"") }
            return Source(name: name, identifier: s["identifier"] as? String, version: s["version"] as? String)
        }
        if let name = o["source"] as? String {
            return Source(name: name, identifier: o["sourceIdentifier"] as? String, version: o["sourceVersion"] as? String)
        }
        if o["source"] != nil { throw DecodeError(message: "\"source\" must be a name or an object with \"name\"") }
        return importSource
    }

    static func parseDevice(_ d: [String: Any]) throws -> Device {
        func s(_ k: String) throws -> String? {
            guard let v = d[k] else { return nil }
            if v is NSNull { return nil }
            guard let str = v as? String else { throw DecodeError(message: "device \"\(k)\" must be a string") }
            return str
        }
        return Device(name: try s("name"), manufacturer: try s("manufacturer"), model: try s("model"),
                      hardwareVersion: try s("hardwareVersion"), firmwareVersion: try s("firmwareVersion"),
                      softwareVersion: try s("softwareVersion"), localIdentifier: try s("localIdentifier"),
                      udiDeviceIdentifier: try s("udiDeviceIdentifier"))
    }

    /// HealthKit's key names are accepted as aliases of HealthGate's (``Metadata/reservedKeys``).
    static let aliases = Metadata.reservedKeys

    /// Parses a flat metadata object (well-known keys by name; anything else is a user key:
    /// a string, a number, or a string holding an ISO 8601 date-time, which becomes a date).
    public static func parseMetadata(_ raw: [String: Any]) throws -> Metadata {
        var m = Metadata()
        for (rawKey, v) in raw {
            let key = aliases[rawKey] ?? rawKey
            switch key {
            case "heartRateSensorLocation":
                guard let x = enumText(v).flatMap(HeartRateSensorLocation.init(name:)) else {
                    throw DecodeError(message: "heartRateSensorLocation must be one of \(HeartRateSensorLocation.allCases.map(\.name).joined(separator: ", ")) or 0–6")
                }
                m.heartRateSensorLocation = x
            case "heartRateMotionContext":
                guard let x = enumText(v).flatMap(HeartRateMotionContext.init(name:)) else {
                    throw DecodeError(message: "heartRateMotionContext must be notSet, sedentary or active")
                }
                m.heartRateMotionContext = x
            case "sensorContact":
                guard let x = enumText(v).flatMap(SensorContact.init(name:)) else {
                    throw DecodeError(message: "sensorContact must be notSupported, notDetected or detected")
                }
                m.sensorContact = x
            case "syncIdentifier":
                guard let x = v as? String else { throw DecodeError(message: "syncIdentifier must be a string") }
                m.syncIdentifier = x
            case "syncVersion":
                guard let n = number(v), n == n.rounded(), abs(n) < 9e15 else { throw DecodeError(message: "syncVersion must be an integer") }
                m.syncVersion = Int(n)
            case "wasUserEntered":
                guard isBoolean(v), let b = v as? Bool else { throw DecodeError(message: "wasUserEntered must be true or false") }
                m.wasUserEntered = b
            default:
                m.user[key] = try userValue(key, v)
            }
        }
        return m
    }

    /// A user metadata value from JSON or command-line text.
    static func userValue(_ key: String, _ v: Any) throws -> MetadataValue {
        if let s = v as? String { return MetadataValue(userText: s) }
        if isBoolean(v) { throw DecodeError(message: "metadata '\(key)' is a boolean; values are strings, numbers or dates") }
        if let n = number(v) { return .number(n) }
        throw DecodeError(message: "metadata '\(key)' must be a string, a number or a date")
    }

    static func enumText(_ v: Any) -> String? {
        if let s = v as? String { return s }
        // Only small whole numbers can be an enum's number (Int(1e300) would trap).
        if let n = number(v), n == n.rounded(), abs(n) < 1_000 { return String(Int(n)) }
        return nil
    }

    static func fnv1a(_ s: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in s.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }
}

/// Telling JSON booleans from numbers: Foundation on Linux decodes `true` as an NSNumber too.
enum CFNumberLike {
    static func isPlainNumber(_ n: NSNumber) -> Bool {
        // A JSON boolean decodes to a Bool-typed NSNumber; "c" is its objCType.
        String(cString: n.objCType) != "c"
    }
}
