import Foundation
import Synchronization
import Locking

/// JSON output for `--json` (both executables): stable key order, no escaped slashes, one value
/// a line. A value JSON cannot hold (NaN, an infinity, a type that is no JSON) is a failure with
/// exit 70, never a `null` that a script would take for an answer.
package enum JSONOutput {
    /// The text every `--json` value and every HTTP API answer is written with: stable key order,
    /// no escaped slashes, bare values allowed.
    package static let textOptions: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed]

    /// Serialises a JSON-compatible value (dictionaries, arrays, strings, numbers, Bool, NSNull).
    /// - Throws: ``CLIFailure`` (70) when the value is not JSON.
    package static func string(_ value: Any, pretty: Bool = false) throws -> String {
        if !pretty, let text = CompactJSON.string(value) { return text }
        var options = textOptions
        if pretty { options.insert(.prettyPrinted) }
        // JSONSerialization raises an Objective-C style exception (a crash on Linux) for some
        // values instead of throwing: check first.
        guard JSONSerialization.isValidJSONObject([value]) else { throw failure(value) }
        do {
            return String(decoding: try JSONSerialization.data(withJSONObject: value, options: options), as: UTF8.self)
        } catch {
            throw failure(value)
        }
    }

    /// Prints one JSON value on its own line and flushes, so pipes see it at once.
    /// - Throws: ``CLIFailure`` (70) when the value is not JSON; nothing is printed then.
    package static func emit(_ value: Any, pretty: Bool = false) throws {
        print(try string(value, pretty: pretty))
        fflush(nil)  // all streams: stdout is a global var Swift 6 will not let us name here
    }

    /// ``emit(_:pretty:)`` for one event of a stream that cannot stop to throw (a callback on a
    /// reader thread): a value that is not JSON is said on stderr at once, the event is left
    /// out, and the failure is kept for ``takeFailure()``, so the command still exits 70.
    package static func event(_ value: Any) {
        do { try emit(value) } catch let f as CLIFailure {
            let first = pending.withLock { p -> Bool in
                defer { if p == nil { p = f } }
                return p == nil
            }
            if first { Console.error(f.message) }
        } catch {}
    }

    /// The first failure ``event(_:)`` kept (then forgotten), for the command's exit.
    package static func takeFailure() -> CLIFailure? {
        pending.withLock { p in defer { p = nil }; return p }
    }

    private static let pending = Lock<CLIFailure?>(nil)

    private static func failure(_ value: Any) -> CLIFailure {
        CLIFailure("could not write the output as JSON: it holds a value JSON cannot represent (NaN, an infinity or a non-JSON type) in \(String(describing: value).prefix(200)); this is a bug, please report it with the command line.",
                   code: .software)
    }
}
