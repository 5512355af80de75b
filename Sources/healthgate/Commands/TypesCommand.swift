import ArgumentParser
import Foundation
import HealthModel

/// `healthgate types`: the quantity types the store knows.
struct TypesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "types",
        abstract: "List the quantity types, their canonical units and aggregation styles.")

    @Flag(help: "Print a JSON array instead of a table.")
    var json = false

    func run() throws {
        let types = QuantityTypeRegistry.standard.all
        if json {
            JSONOutput.emit(types.map { t -> [String: Any] in
                var o: [String: Any] = ["identifier": t.identifier, "unit": t.canonicalUnitString,
                                        "aggregationStyle": t.aggregationStyle.rawValue, "summary": t.summary]
                // The values one sample may have (docs/input-rules.md, "Value ranges").
                if let r = t.plausibleRange { o["plausibleRange"] = [r.lowerBound, r.upperBound] }
                return o
            })
        } else {
            Table.print(["TYPE", "UNIT", "RANGE (one sample)", "AGGREGATION"], types.map { t in
                [t.identifier, t.canonicalUnitString,
                 t.plausibleRange.map { "\(Table.number($0.lowerBound))–\(Table.number($0.upperBound))" } ?? "any",
                 t.aggregationStyle.rawValue + "  (" + t.summary + ")"]
            })
        }
    }
}
