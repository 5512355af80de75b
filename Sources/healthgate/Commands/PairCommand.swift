import Platform
import ArgumentParser
import BluetoothLinux
import Foundation
import Gateway
import HealthModel

/// `healthgate pair`: connect to a strap, read what it says about itself, remember it.
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Connect to a heart-rate strap, read its details and remember it under a friendly name.",
        discussion: """
            Connects over Bluetooth LE, discovers its services, reads the body sensor location, \
            Device Information (manufacturer, model, hardware/firmware/software revisions), the \
            battery level and its name, and remembers it in the store's device registry, so \
            `healthgate live` connects to it by default and accepts its name.

            Heart-rate data needs no encryption, so by default no pairing keys are exchanged. \
            --bond asks the kernel for an encrypted link (Just Works pairing; stored as a bond \
            when the adapter is bondable). That needs a pairing agent: bluetoothd's, usually.

            Needs CAP_NET_ADMIN (root, or `setcap cap_net_raw,cap_net_admin+eip`). Exit codes: \
            0 remembered, 69 no adapter / not reachable / not a strap, 75 no answer in time, \
            77 missing capabilities.

            Example:
              healthgate scan --timeout 5
              healthgate pair C4:7C:8D:6A:1F:02 --name chest
              healthgate pair F0:F1:F2:F3:F4:F5 --address-type random --bond --json
            """)

    @Argument(help: ArgumentHelp("The strap's address, as `healthgate scan` shows it.", valueName: "address"))
    var address: String

    @Option(help: ArgumentHelp("A friendly name to remember it by (for `live NAME`).", valueName: "name"))
    var name: String?

    @Flag(help: "Ask for an encrypted, bonded link (LE Just Works pairing).")
    var bond = false

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @OptionGroup var connect: ConnectOptions
    @OptionGroup var store: StoreLocation

    func validate() throws {
        guard BluetoothAddress(address) != nil else {
            throw ValidationError("\"\(address)\" is not a Bluetooth address: write it as AA:BB:CC:DD:EE:FF (`healthgate scan` lists them).")
        }
        if let name, name.isEmpty || BluetoothAddress(name) != nil {
            throw ValidationError("--name must be a friendly name, not empty and not an address.")
        }
    }

    func run() async throws {
        let adapter = try connect.adapterOption.resolve()
        let db = try store.open()
        let target = try StrapTarget.resolve(address, store: db, addressType: connect.addressType)
        let stop = StopSignal()
        let trap = SignalTrap(raising: stop)
        defer { trap.cancel() }
        let connector = kernelConnector(adapter: adapter, security: bond ? .medium : .low, timeout: connect.oneShotTimeout)
        let r = try await Pairing.pair(target, connector: connector, alias: name, store: db, stop: stop)
        let info = r.info
        if json {
            try JSONOutput.emit(r.jsonObject)
            return
        }
        print("Connected to \(target.address) (\(target.addressType.rawValue)): \(r.device.name ?? "unnamed strap")")
        func row(_ k: String, _ v: String?) { if let v { print("  " + TerminalText.column(k, 15) + v) } }
        row("manufacturer", info.manufacturer)
        row("model", info.model)
        row("hardware", info.hardwareRevision)
        row("firmware", info.firmwareRevision)
        row("software", info.softwareRevision)
        row("location", info.sensorLocation.map { l in
            info.sensorLocationRaw.map { $0 > 6 ? "other (reserved value \($0))" : l.name } ?? l.name })
        row("battery", info.battery.map { "\($0)%" })
        row("control point", info.hasControlPoint ? "yes (energy can be reset)" : "no")
        if let s = r.security {
            row("security", (SecurityLevel(rawValue: s.level)?.description ?? "level \(s.level)") + (s.keySize > 0 ? ", key size \(s.keySize)" : ""))
        }
        let handle = r.alias ?? target.address.description
        print("Remembered as \"\(r.alias ?? r.device.name ?? target.address.description)\"; `healthgate live \(handle)` streams it.")
        if bond {
            print("For `healthgate run`, give its [[strap]] table `encrypt = true`: each reconnect is then encrypted with the stored key.")
        }
    }
}
