import Testing
@testable import HealthGateConfiguration

/// A configuration that must be refused: its text, the line the error must name, and words the
/// message must contain.
struct ConfigCase: Sendable, CustomTestStringConvertible {
    let text: String
    let line: Int
    let says: String
    var testDescription: String { says }
}

/// Parses `c.text` as `/etc/healthgate.toml` and checks the refusal names that file, the line
/// and what is wrong (`file:line: message`).
func expectConfigError(_ c: ConfigCase, sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        _ = try GatewayConfig.parse(c.text, file: "/etc/healthgate.toml")
        Issue.record("accepted a bad config: \(c.text)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.file == "/etc/healthgate.toml", sourceLocation: sourceLocation)
        #expect(error.line == c.line, "\(error)", sourceLocation: sourceLocation)
        #expect(error.description.contains(c.says), "\(error)", sourceLocation: sourceLocation)
        #expect(error.description.hasPrefix("/etc/healthgate.toml:\(c.line): "), sourceLocation: sourceLocation)
    }
}
