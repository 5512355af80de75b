import ArgumentParser
import Foundation
import HealthModel
import HealthStore

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
            try JSONOutput.emit(types.map(\.jsonObject))
        } else {
            Table.print(["TYPE", "UNIT", "RANGE (one sample)", "AGGREGATION"], types.map { t in
                [t.identifier, t.canonicalUnitString,
                 t.plausibleRange.map { "\(Table.number($0.lowerBound))–\(Table.number($0.upperBound))" } ?? "any",
                 t.aggregationStyle.rawValue + "  (" + t.summary + ")"]
            })
        }
    }
}
