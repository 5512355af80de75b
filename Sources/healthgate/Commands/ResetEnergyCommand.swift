import Platform
import ArgumentParser
import BluetoothLinux
import Foundation
import Gateway

/// `healthgate reset-energy`: zero a strap's energy-expended counter.
struct ResetEnergyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset-energy",
        abstract: "Reset a strap's energy-expended counter (write 0x01 to its Heart Rate Control Point).",
        discussion: """
            Straps that report energy expended count kilojoules from their last reset and stop at \
            65535 kJ; this resets the count to 0. A strap without a Heart Rate Control Point \
            (most do not report energy), or one that answers "Control Point Not Supported" \
            (0x80), gets a clear message and exit code 69.

            Example:
              healthgate reset-energy chest
              healthgate reset-energy C4:7C:8D:6A:1F:02 --address-type public
            """)

    @Argument(help: ArgumentHelp("The strap: its address, or the name it was paired under.", valueName: "address|name"))
    var strap: String

    @OptionGroup var connect: ConnectOptions
    @OptionGroup var store: StoreLocation

    func run() async throws {
        let adapter = try connect.adapterOption.resolve()
        // Read-only: it only looks the name up (a missing store stays missing).
        let target = try StrapTarget.resolve(strap, storeAt: store.path, addressType: connect.addressType)
        let stop = StopSignal()
        let trap = SignalTrap(raising: stop)
        defer { trap.cancel() }
        let connector = kernelConnector(adapter: adapter, timeout: connect.oneShotTimeout)
        let connection = try await StrapConnection.connect(target, connector: connector, stop: stop)
        defer { connection.close() }
        try await connection.resetEnergyExpended()
        print("Energy expended on \(target) was reset to 0 kJ.")
    }
}
