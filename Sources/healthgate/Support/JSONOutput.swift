import Foundation

/// JSON output for `--json`: stable key order, no escaped slashes, one value per call.
enum JSONOutput {
    /// Serialises a JSON-compatible value (dictionaries, arrays, strings, numbers, Bool, NSNull).
    static func string(_ value: Any, pretty: Bool = false) -> String {
        var options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed]
        if pretty { options.insert(.prettyPrinted) }
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: options) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Prints one JSON value on its own line and flushes, so pipes see it at once.
    static func emit(_ value: Any, pretty: Bool = false) {
        print(string(value, pretty: pretty))
        fflush(nil)  // all streams: stdout is a global var Swift 6 will not let us name here
    }
}
