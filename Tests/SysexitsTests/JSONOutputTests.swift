import Foundation
import Sysexits
import Testing

/// `--json` output: a value JSON cannot hold is a failure with exit 70, never a `null` printed
/// as if it were the answer.
@Suite struct JSONOutputTests {
    @Test func aValueIsOneLineWithSortedKeysAndPlainSlashes() throws {
        #expect(try JSONOutput.string(["b": 1, "a": "x/y", "c": [true, NSNull()]] as [String: Any])
                == #"{"a":"x/y","b":1,"c":[true,null]}"#)
        #expect(try JSONOutput.string(42) == "42")
        #expect(try JSONOutput.string("text") == #""text""#)
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func aNumberJSONCannotHoldIsASoftwareFailure(_ x: Double) throws {
        for value: Any in [x, ["mean": x] as [String: Any], [1.0, x]] {
            let failure = #expect(throws: CLIFailure.self) { try JSONOutput.string(value) }
            #expect(failure?.code == .software)
            #expect(failure?.message.hasPrefix("could not write the output as JSON") == true)
        }
    }

    @Test func aTypeThatIsNoJSONIsASoftwareFailure() throws {
        let failure = #expect(throws: CLIFailure.self) { try JSONOutput.string(["when": Date()] as [String: Any]) }
        #expect(failure?.code == .software)
    }

    /// A stream's event cannot throw: the failure is kept for the command's exit, once.
    @Test func aStreamEventThatIsNoJSONIsKeptForTheExit() {
        _ = JSONOutput.takeFailure()
        JSONOutput.event(["bpm": Double.nan] as [String: Any])
        JSONOutput.event(["bpm": Double.infinity] as [String: Any])
        let kept = JSONOutput.takeFailure()
        #expect(kept?.code == .software)
        #expect(kept?.message.contains("nan") == true, "the first failure is the one kept: \(kept?.message ?? "-")")
        #expect(JSONOutput.takeFailure() == nil)
    }
}
