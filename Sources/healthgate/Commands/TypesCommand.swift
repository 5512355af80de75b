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
            JSONOutput.emit(types.map {
                ["identifier": $0.identifier, "unit": $0.canonicalUnitString,
                 "aggregationStyle": $0.aggregationStyle.rawValue, "summary": $0.summary]
            })
        } else {
            print("TYPE".padding(toLength: 26, withPad: " ", startingAt: 0) + "UNIT".padding(toLength: 11, withPad: " ", startingAt: 0) + "AGGREGATION")
            for t in types {
                print(t.identifier.padding(toLength: 26, withPad: " ", startingAt: 0)
                      + t.canonicalUnitString.padding(toLength: 11, withPad: " ", startingAt: 0)
                      + t.aggregationStyle.rawValue + "  (" + t.summary + ")")
            }
        }
    }
}
