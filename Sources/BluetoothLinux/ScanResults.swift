import Foundation

/// One device heard during a scan, merged over its advertisements and scan responses.
package struct ScannedDevice: Sendable {
    /// Its address.
    package var address: BluetoothAddress
    /// Its address type, once a report said it.
    package var addressType: AddressType?
    /// Everything it advertised, merged (a scan response adds its name).
    package var data: AdvertisingData
    /// The signal strength of its latest report.
    package var rssi: Int8?
    /// Whether its latest advertisement was connectable.
    package var connectable: Bool
    /// Reports heard.
    package var reports: Int
    /// When it was first and last heard.
    package var firstSeen: Date
    package var lastSeen: Date
}

/// The devices of a scan, in order of discovery: each advertising report merged into its device.
package struct ScanResults: Sendable {
    /// The devices, in order of discovery.
    package private(set) var devices: [ScannedDevice] = []
    private var index: [BluetoothAddress: Int] = [:]

    /// No device yet.
    package init() {}

    /// What one report changed.
    package struct Change: Sendable {
        /// The device's place in ``ScanResults/devices``.
        package var index: Int
        /// The device was heard for the first time.
        package var isNew: Bool
        /// Whether it advertised the Heart Rate service before and after this report.
        package var wasVisible: Bool
        package var isVisible: Bool

        /// Whether a list of straps (or, with `all`, of every device) gains a row.
        package func becameVisible(all: Bool) -> Bool { all ? isNew : (isVisible && !wasVisible) }
    }

    /// Adds a report heard at `date`; returns what changed.
    package mutating func add(_ r: AdvertisingReport, at date: Date) -> Change? {
        if let i = index[r.address] {
            var d = devices[i]
            let was = d.data.isHeartRateSensor()
            d.data.merge(r.data)
            if let rssi = r.rssi { d.rssi = rssi }
            if let t = r.addressType { d.addressType = t }
            if !r.isScanResponse { d.connectable = r.isConnectable }
            d.reports += 1
            d.lastSeen = date
            devices[i] = d
            return Change(index: i, isNew: false, wasVisible: was, isVisible: d.data.isHeartRateSensor())
        }
        let d = ScannedDevice(address: r.address, addressType: r.addressType, data: r.data, rssi: r.rssi,
                              connectable: r.isScanResponse || r.isConnectable, reports: 1, firstSeen: date, lastSeen: date)
        devices.append(d)
        index[r.address] = devices.count - 1
        return Change(index: devices.count - 1, isNew: true, wasVisible: false, isVisible: d.data.isHeartRateSensor())
    }

    /// The devices to show: straps (or, with `all`, every device), strongest signal first.
    package func rows(all: Bool) -> [ScannedDevice] {
        devices.filter { all || $0.data.isHeartRateSensor() }
            .sorted { (Int($0.rssi ?? -128), $1.address) > (Int($1.rssi ?? -128), $0.address) }
    }
}
