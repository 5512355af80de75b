import ArgumentParser
import Foundation
import HealthModel
import HealthStore
import Gateway

/// `healthgate devices`: the devices the gateway remembers, and `devices forget`.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List remembered devices (the default), or forget one.",
        discussion: """
            Example:
              healthgate devices
              healthgate devices --json --db /var/lib/healthgate/health.sqlite
              healthgate devices forget chest-strap
            """,
        subcommands: [List.self, Forget.self],
        defaultSubcommand: List.self)

    /// `healthgate devices [list]`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List remembered devices: name, kind, address, last seen, sensor location, battery.",
            discussion: """
                Devices are remembered by `healthgate pair` (Bluetooth LE straps) and by the serial \
                commands (pedometers); `live` and the serial capture update when each was last seen \
                and its battery level. Reads the store read-only (a user who may only read the file \
                can list it); a missing store exits 66.

                The table shows LAST SEEN in this machine's time zone, to the second. With --json, \
                prints one JSON array of objects: name, alias, kind, address, addressType, \
                localIdentifier, lastSeen (ISO 8601 in UTC with milliseconds, or null), battery \
                (percent or null), sensorLocation, manufacturer, model, hardwareVersion, \
                firmwareVersion, softwareVersion.

                Example:
                  healthgate devices
                  healthgate devices --json --db /var/lib/healthgate/health.sqlite
                """)

        @OptionGroup var store: StoreLocation

        @Flag(help: "Print a JSON array instead of a table.")
        var json = false

        func run() throws {
            let db = try store.openForReading()
            let devices = try db.devices().filter { $0.kind != .other }
            if json {
                try JSONOutput.emit(devices.map(\.jsonObject))
                return
            }
            guard !devices.isEmpty else {
                Console.note("No devices remembered yet: pair a strap with `healthgate pair ADDRESS` (find it with `healthgate scan`).")
                return
            }
            Table.print(["NAME", "KIND", "ADDRESS", "LAST SEEN", "LOCATION", "BATTERY", "MODEL"],
                        devices.map(DevicesCommand.row))
        }
    }

    /// `healthgate devices forget ID|ADDRESS`.
    struct Forget: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "forget",
            abstract: "Remove a device from the registry; its samples stay.",
            discussion: """
                DEVICE is what `healthgate devices` shows: its alias or name, its address (a \
                Bluetooth address or a serial path) or its local identifier (--json's \
                localIdentifier, e.g. serial:A1B2C3 or ble:C0:FF:EE:12:34:56).

                What happens, as in HealthKit: the device's samples stay in the store and still \
                name the device (name, manufacturer, model) in `samples` and `export`. What the \
                gateway kept about it goes: it is no longer listed, its alias, address, battery and \
                last-seen time are removed, and so is its persisted per-device state (a \
                pedometer's counter state: the next reading of that pedometer starts a new count \
                instead of continuing the old one). A strap must be paired again to be used by name.

                A device that `healthgate run` or `serial watch` is reading right now is \
                registered again on its next connection or reading: stop the process (or remove \
                the device from the configuration) first.

                Example:
                  healthgate devices forget chest-strap
                  healthgate devices forget /dev/ttyUSB0 --json
                """)

        @OptionGroup var store: StoreLocation

        @Argument(help: ArgumentHelp("The device: alias, name, address or local identifier.", valueName: "device"))
        var device: String

        @Flag(help: "Print a JSON object: device, samples (kept), removedState, rowDeleted.")
        var json = false

        func run() throws {
            // Looked up read-only first: a missing store is "no such device" (66), not a new file.
            let lookup = try store.openForReading()
            guard let found = try lookup.device(matching: device), found.kind != .other,
                  let local = found.device.localIdentifier else {
                throw CLIFailure("no remembered device matches '\(device)'; `healthgate devices` lists them with their names, addresses and aliases.",
                                 code: .dataError)
            }
            let db = try store.open()
            let done = try db.forgetDevice(localIdentifier: local, stateKeys: PedometerSource.stateKeys(localIdentifier: local))
            if json {
                try JSONOutput.emit([
                    "device": done.record.jsonObject, "samples": done.samples,
                    "removedState": done.removedStateKeys, "rowDeleted": done.rowDeleted,
                ] as [String: Any])
                return
            }
            let name = done.record.alias ?? done.record.device.name ?? local
            let state = done.removedStateKeys.isEmpty ? "" : " and its persisted state (\(done.removedStateKeys.joined(separator: ", ")))"
            print("Forgot \(name) (\(done.record.kind.rawValue) \(done.record.address ?? local)): removed from the device registry\(state); its \(done.samples) sample\(done.samples == 1 ? "" : "s") stay in the store.")
        }
    }

    /// One table row: every cell whole (the table sizes its columns to them).
    static func row(_ d: DeviceRecord) -> [String] {
        [d.alias ?? d.device.name ?? "-", d.kind.rawValue, d.address ?? "-", d.lastSeen.map { Table.time(Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.down)), in: .current) } ?? "never",
         d.sensorLocation?.name ?? "-", d.battery.map { "\($0)%" } ?? "-",
         [d.device.manufacturer, d.device.model].compactMap { $0 }.joined(separator: " ")]
    }
}
