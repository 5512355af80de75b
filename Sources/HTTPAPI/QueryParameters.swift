import Foundation
import HealthModel
import HealthStore
import Hummingbird

/// A request's query parameters, parsed with messages that name the parameter (400).
struct QueryParameters {
    private let pairs: [(key: String, value: String)]
    let registry: QuantityTypeRegistry
    /// The parameters a route understands; anything else is refused, so a typo is not ignored.
    private let known: Set<String>

    init(_ request: Request, known: Set<String>, registry: QuantityTypeRegistry = .standard) throws {
        pairs = request.uri.queryParameters.map { (String($0.key), String($0.value)) }
        self.registry = registry
        self.known = known
        if let bad = pairs.first(where: { !known.contains($0.key) }) {
            throw APIError(.badRequest, "query parameter '\(bad.key)' is not one this endpoint takes: use \(known.sorted().joined(separator: ", ")) (see /v1/openapi.json).")
        }
    }

    /// The value of `name`; a parameter given twice is refused unless the route takes lists.
    func string(_ name: String) throws -> String? {
        let all = pairs.filter { $0.key == name }.map(\.value)
        if all.count > 1 { throw APIError.parameter(name, "is given \(all.count) times: give it once.") }
        return all.first
    }

    /// Every value of `name`, commas splitting each.
    func list(_ name: String) -> [String] {
        pairs.filter { $0.key == name }.flatMap { $0.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            .filter { !$0.isEmpty }
    }

    func type(_ name: String = "type") throws -> QuantityType? {
        try string(name).map { try type(named: $0, parameter: name) }
    }

    func type(named text: String, parameter: String) throws -> QuantityType {
        do { return try registry.type(text) } catch {
            throw APIError.parameter(parameter, "'\(text)' is not a known quantity type: use one of \(registry.all.map(\.identifier).joined(separator: ", ")) (GET /v1/types).")
        }
    }

    /// `tz`: an IANA zone name, read as the CLI's `--tz` is (HealthModel's `InputValues`); nil when absent.
    func timeZone() throws -> TimeZone? {
        guard let text = try string("tz") else { return nil }
        do { return try InputValues.timeZone(text, option: "query parameter 'tz'") } catch {
            throw APIError(.badRequest, error.message)
        }
    }

    /// An ISO 8601 date; without an offset it is wall-clock time in `zone` (UTC by default).
    func date(_ name: String, zone: TimeZone?) throws -> Date? {
        guard let text = try string(name) else { return nil }
        do { return try ISO8601.parse(text, localTimeZone: zone ?? TimeZone(identifier: "UTC")) } catch {
            throw APIError.parameter(name, "'\(text)': \(error.reason); use ISO 8601 such as 2026-11-02T08:00:00Z or 2026-11-02 (write '+' in an offset as %2B).")
        }
    }

    /// A positive count.
    func limit() throws -> Int? {
        guard let text = try string("limit") else { return nil }
        guard let n = Int(text), n >= 1 else { throw APIError.parameter("limit", "'\(text)' is not a count: use a whole number, 1 or more.") }
        return n
    }

    func bool(_ name: String) throws -> Bool {
        guard let text = try string(name) else { return false }
        switch text.lowercased() {
        case "", "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw APIError.parameter(name, "'\(text)' is not true or false.")
        }
    }

    /// `[from, to)` must not be empty.
    static func checkRange(from: Date?, to: Date?) throws {
        if let from, let to, to <= from {
            throw APIError.parameter("to", "(\(ISO8601.string(to))) must be after 'from' (\(ISO8601.string(from))): the range [from, to) would be empty.")
        }
    }
}
