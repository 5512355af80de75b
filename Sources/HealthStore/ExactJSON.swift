import Foundation

/// JSON parsing that keeps every number exactly. Foundation's `JSONSerialization` on Linux
/// rounds some decimals to a neighbouring double (`0.30000000000000004` reads as
/// `0.3000000000000001`), so a value drifted on every export → import; `JSONDecoder` reads the
/// nearest double. The result has `JSONSerialization`'s shapes: `[String: Any]`, `[Any]`,
/// `String`, `NSNumber` (numbers), `Bool` (true/false, never a number) and `NSNull`.
enum ExactJSON {
    /// Parses one JSON value.
    /// - Throws: a `DecodingError` when `data` is not JSON.
    static func value(_ data: Data) throws -> Any {
        try JSONDecoder().decode(Value.self, from: data).any
    }

    private enum Value: Decodable {
        case null, bool(Bool), number(Double), string(String), array([Value]), object([String: Value])

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() { self = .null }
            else if let b = try? c.decode(Bool.self) { self = .bool(b) }
            else if let d = try? c.decode(Double.self) { self = .number(d) }
            else if let s = try? c.decode(String.self) { self = .string(s) }
            else if let a = try? c.decode([Value].self) { self = .array(a) }
            else { self = .object(try c.decode([String: Value].self)) }
        }

        var any: Any {
            switch self {
            case .null: NSNull()
            case .bool(let b): b
            case .number(let d): NSNumber(value: d)
            case .string(let s): s
            case .array(let a): a.map(\.any)
            case .object(let o): o.mapValues(\.any)
            }
        }
    }
}
