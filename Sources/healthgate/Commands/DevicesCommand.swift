import ArgumentParser
import Foundation
import HealthModel
import HealthStore

/// `healthgate devices`: the devices the gateway remembers.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List remembered devices: name, kind, address, last seen, sensor location, battery.",
        discussion: """
            Devices are remembered by `healthgate pair` (Bluetooth LE straps) and by the serial \
            commands (pedometers); `live` and the serial capture update when each was last seen \
            and its battery level.

            With --json, prints one JSON array of objects: name, alias, kind, address, \
            addressType, localIdentifier, lastSeen (ISO 8601 or null), battery (percent or \
            null), sensorLocation, manufacturer, model, hardwareVersion, firmwareVersion, \
            softwareVersion.

            Example:
              healthgate devices
              healthgate devices --json --db /var/lib/healthgate/health.sqlite
            """)

    @OptionGroup var store: StoreLocation

    @Flag(help: "Print a JSON array instead of a table.")
    var json = false

    func run() throws {
        try reporting {
            let db = try openHealthStore(store)
            let devices: [DeviceRecord]
            do { devices = try db.devices().filter { $0.kind != .other } } catch let e as StoreError { throw storeFailure(e) }
            if json {
                JSONOutput.emit(devices.map(Self.json))
                return
            }
            guard !devices.isEmpty else {
                Console.note("No devices remembered yet: pair a strap with `healthgate pair ADDRESS` (find it with `healthgate scan`).")
                return
            }
            print(column("NAME", 22) + column("KIND", 7) + column("ADDRESS", 19) + column("LAST SEEN", 22)
                  + column("LOCATION", 10) + column("BATTERY", 8) + "MODEL")
            for d in devices {
                print(column(d.alias ?? d.device.name ?? "-", 22) + column(d.kind.rawValue, 7)
                      + column(d.address ?? "-", 19) + column(d.lastSeen.map(ISO8601.string) ?? "never", 22)
                      + column(d.sensorLocation?.name ?? "-", 10) + column(d.battery.map { "\($0)%" } ?? "-", 8)
                      + ([d.device.manufacturer, d.device.model].compactMap { $0 }.joined(separator: " ")))
            }
        }
    }

    static func json(_ d: DeviceRecord) -> [String: Any] {
        func v(_ x: Any?) -> Any { x ?? NSNull() }
        return [
            "name": v(d.device.name), "alias": v(d.alias), "kind": d.kind.rawValue, "address": v(d.address),
            "addressType": v(d.addressType), "localIdentifier": v(d.device.localIdentifier),
            "lastSeen": v(d.lastSeen.map(ISO8601.string)), "battery": v(d.battery),
            "sensorLocation": v(d.sensorLocation?.name), "manufacturer": v(d.device.manufacturer),
            "model": v(d.device.model), "hardwareVersion": v(d.device.hardwareVersion),
            "firmwareVersion": v(d.device.firmwareVersion), "softwareVersion": v(d.device.softwareVersion),
        ]
    }
}
