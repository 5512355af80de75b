import GATT

/// How a simulated heart-rate strap looks: its strings, optional characteristics and handle
/// layout.
package struct SimulatedStrapConfiguration: Sendable {
    /// Handle layouts seen on real devices (discovery must cope with every one).
    package enum Layout: Sendable, Hashable {
        /// Heart Rate first from handle 1, then Device Information, then Battery (with notify).
        case compact
        /// A Polar H7's ranges as `gatttool primary` showed them: 1800 at 0x0001–0x000B, 1801 at
        /// 0x000C–0x000E, **180D at 0x000F–0x0014**, 180A at 0x0015–0x0023, 180F at
        /// 0x0024–0x0026, then a vendor 128-bit service. No Control Point, like the H7.
        case polarH7
        /// Only the Heart Rate service at 0x000C–0x0011 with 0x2A37 at 0x000D/0x000E and its
        /// CCCD at 0x000F: the byte script of heart-rate-profile.md §6.
        case script
    }

    package var layout: Layout = .compact
    package var name: String = "HealthGate Sim HR"
    package var manufacturer: String? = "HealthGate"
    package var model: String? = "SIM-HR1"
    package var serialNumber: String? = "0001"
    package var hardwareRevision: String? = "1.0"
    package var firmwareRevision: String? = "2.3.4"
    package var softwareRevision: String? = "5.6"
    /// Body Sensor Location value (nil: no 0x2A38).
    package var bodySensorLocation: UInt8? = 1
    /// Battery level in percent (nil: no Battery service).
    package var batteryLevel: UInt8? = 87
    /// Whether the strap has a Heart Rate Control Point (0x2A39). It accepts 0x01 and answers
    /// anything else with 0x80 (Control Point Not Supported).
    package var controlPoint = true

    package init() {}
}

extension SimulatedPeripheral {
    /// A simulated heart-rate strap: Heart Rate (0x180D: 0x2A37 notify + CCCD, 0x2A38, 0x2A39),
    /// Device Information (0x180A) and Battery (0x180F), laid out as `configuration.layout`.
    package static func heartRateStrap(_ configuration: SimulatedStrapConfiguration = SimulatedStrapConfiguration(),
                                      serverMTU: UInt16 = attDefaultMTU) -> SimulatedPeripheral {
        let c = configuration
        func utf8(_ s: String?) -> [UInt8]? { s.map { Array($0.utf8) } }

        var hrChars = [SimulatedCharacteristic(0x2A37, properties: [.notify])]
        if let loc = c.bodySensorLocation { hrChars.append(SimulatedCharacteristic(0x2A38, properties: [.read], value: [loc])) }
        if c.controlPoint {
            hrChars.append(SimulatedCharacteristic(0x2A39, properties: [.write], value: [0x00]) { value in
                value == [0x01] ? nil : .heartRateControlPointNotSupported
            })
        }
        let dis: [(UInt16, String?)] = [(0x2A29, c.manufacturer), (0x2A24, c.model), (0x2A25, c.serialNumber),
                                        (0x2A27, c.hardwareRevision), (0x2A26, c.firmwareRevision), (0x2A28, c.softwareRevision)]
        var disChars = dis.compactMap { uuid, s in
            utf8(s).map { SimulatedCharacteristic(BluetoothUUID(uuid), properties: [.read], value: $0) }
        }
        let gap = SimulatedService(0x1800, [
            SimulatedCharacteristic(0x2A00, properties: [.read], value: Array(c.name.utf8)),
            SimulatedCharacteristic(0x2A01, properties: [.read], value: [0x41, 0x03]),
        ])

        switch c.layout {
        case .script:
            return SimulatedPeripheral(
                services: [SimulatedService(0x180D, trailingGap: 2, [SimulatedCharacteristic(0x2A37, properties: [.notify])])],
                firstHandle: 0x000C, serverMTU: serverMTU)
        case .compact:
            var services = [SimulatedService(0x180D, hrChars), SimulatedService(0x180A, disChars)]
            if let b = c.batteryLevel {
                services.append(SimulatedService(0x180F, [SimulatedCharacteristic(0x2A19, properties: [.read, .notify], value: [b])]))
            }
            services.append(gap)
            return SimulatedPeripheral(services: services, serverMTU: serverMTU)
        case .polarH7:
            disChars.append(SimulatedCharacteristic(0x2A23, properties: [.read], value: [1, 2, 3, 4, 5, 6, 7, 8]))
            let gapService = SimulatedService(0x1800, trailingGap: 4, [
                SimulatedCharacteristic(0x2A00, properties: [.read], value: Array(c.name.utf8)),
                SimulatedCharacteristic(0x2A01, properties: [.read], value: [0x41, 0x03]),
                SimulatedCharacteristic(0x2A04, properties: [.read], value: [0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x90, 0x01]),
            ])
            let gattService = SimulatedService(0x1801, [SimulatedCharacteristic(0x2A05, properties: [.indicate], hasCCCD: false)])
            // The H7 has no Control Point (it reports no energy), so its HR service ends at 0x0014.
            var services = [gapService, gattService, SimulatedService(0x180D, hrChars.filter { $0.uuid != 0x2A39 }),
                            SimulatedService(0x180A, disChars)]
            if let b = c.batteryLevel {
                services.append(SimulatedService(0x180F, [SimulatedCharacteristic(0x2A19, properties: [.read], value: [b])]))
            }
            let vendor = BluetoothUUID("6217FF4B-FB31-1140-AD5A-A45545D7ECF3")!
            let vendorChar = BluetoothUUID("6217FF4C-C8EC-B1FB-1380-3AD986708E2D")!
            services.append(SimulatedService(vendor, [SimulatedCharacteristic(vendorChar, properties: [.read, .notify], value: [0])]))
            return SimulatedPeripheral(services: services, serverMTU: serverMTU)
        }
    }

    /// Notifies a Heart Rate Measurement payload, if the client subscribed on this connection.
    /// - Returns: whether it was sent.
    @discardableResult
    package func notifyHeartRate(_ payload: [UInt8]) -> Bool { notify(0x2A37, value: payload) }
}
