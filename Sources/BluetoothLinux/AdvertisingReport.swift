/// One advertisement (or scan response) a controller heard, as an LE Advertising Report or an
/// LE Extended Advertising Report carries it.
package struct AdvertisingReport: Sendable, Hashable {
    /// Who advertised.
    package var address: BluetoothAddress
    /// Public or random; `nil` for anonymous extended advertising.
    package var addressType: AddressType?
    /// The legacy event type: 0 ADV_IND, 1 ADV_DIRECT_IND, 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND,
    /// 4 SCAN_RSP. For extended reports, the legacy equivalent when the PDU was legacy, else 0xFF.
    package var eventType: UInt8
    /// Received signal strength in dBm; `nil` when the controller says "not available" (127).
    package var rssi: Int8?
    /// The parsed AD structures.
    package var data: AdvertisingData
    /// The raw AD bytes, exactly as received.
    package var rawData: [UInt8]

    /// True for a scan response (which adds to, rather than replaces, the advertisement).
    package var isScanResponse: Bool { eventType == 4 }
    /// True unless the advertisement says it does not accept connections (ADV_SCAN_IND, ADV_NONCONN_IND).
    package var isConnectable: Bool { eventType == 0 || eventType == 1 || eventType == 0xFF }

    package init(address: BluetoothAddress, addressType: AddressType?, eventType: UInt8, rssi: Int8?, rawData: [UInt8]) {
        self.address = address
        self.addressType = addressType
        self.eventType = eventType
        self.rssi = rssi
        self.rawData = rawData
        self.data = AdvertisingData(parsing: rawData)
    }
}

/// Parses HCI LE Meta events into advertising reports (Core Vol 4 Part E 7.7.65.2 and 7.7.65.13).
package enum HCIEventParser {
    /// LE Meta event code.
    package static let leMetaEvent: UInt8 = 0x3E
    /// LE Advertising Report subevent.
    package static let advertisingReport: UInt8 = 0x02
    /// LE Extended Advertising Report subevent.
    package static let extendedAdvertisingReport: UInt8 = 0x0D

    /// Why an event could not be read.
    package enum Failure: Error, Equatable, CustomStringConvertible {
        case truncated(String)
        package var description: String {
            switch self { case .truncated(let what): return "truncated HCI event: \(what)" }
        }
    }

    /// Parses one packet read from a raw HCI socket (`[0x04 event][code][length][params…]`).
    /// Returns the reports it carries: none for events that are not advertising reports.
    /// - Throws: ``Failure`` when the packet is cut short; reports before the cut are lost with
    ///   it because the count and layout can no longer be trusted.
    package static func reports(fromPacket packet: [UInt8]) throws -> [AdvertisingReport] {
        guard packet.count >= 3, packet[0] == 0x04 else { return [] }
        guard packet[1] == leMetaEvent else { return [] }
        let length = Int(packet[2])
        guard packet.count >= 3 + length else { throw Failure.truncated("parameter length \(length), \(packet.count - 3) bytes present") }
        return try reports(fromLEMeta: Array(packet[3..<(3 + length)]))
    }

    /// Parses the parameters of an LE Meta event (starting at the subevent code).
    package static func reports(fromLEMeta p: [UInt8]) throws -> [AdvertisingReport] {
        guard let sub = p.first else { return [] }
        switch sub {
        case advertisingReport: return try legacy(p)
        case extendedAdvertisingReport: return try extended(p)
        default: return []
        }
    }

    private static func legacy(_ p: [UInt8]) throws -> [AdvertisingReport] {
        guard p.count >= 2 else { throw Failure.truncated("no report count") }
        var out: [AdvertisingReport] = []
        var i = 2
        for n in 0..<Int(p[1]) {
            // event type, address type, address[6], data length, data, rssi
            guard i + 9 <= p.count else { throw Failure.truncated("report \(n) header") }
            let dataLength = Int(p[i + 8])
            guard i + 9 + dataLength + 1 <= p.count else { throw Failure.truncated("report \(n) data (\(dataLength) bytes)") }
            let rssiByte = Int8(bitPattern: p[i + 9 + dataLength])
            // Six bytes by the length check above; checked anyway, as every field from the air.
            guard let address = BluetoothAddress(littleEndian: p[(i + 2)..<(i + 8)]) else { throw Failure.truncated("report \(n) address") }
            out.append(AdvertisingReport(
                address: address,
                addressType: AddressType(hci: p[i + 1]),
                eventType: p[i],
                rssi: rssiByte == 127 ? nil : rssiByte,
                rawData: Array(p[(i + 9)..<(i + 9 + dataLength)])))
            i += 10 + dataLength
        }
        return out
    }

    private static func extended(_ p: [UInt8]) throws -> [AdvertisingReport] {
        guard p.count >= 2 else { throw Failure.truncated("no report count") }
        var out: [AdvertisingReport] = []
        var i = 2
        for n in 0..<Int(p[1]) {
            // event type(2) addr type(1) addr(6) phy1 phy2 sid txpower rssi interval(2)
            // direct addr type(1) direct addr(6) data length(1) data
            guard i + 24 <= p.count else { throw Failure.truncated("extended report \(n) header") }
            let dataLength = Int(p[i + 23])
            guard i + 24 + dataLength <= p.count else { throw Failure.truncated("extended report \(n) data (\(dataLength) bytes)") }
            let props = UInt16(p[i]) | UInt16(p[i + 1]) << 8
            let rssiByte = Int8(bitPattern: p[i + 13])
            guard let address = BluetoothAddress(littleEndian: p[(i + 3)..<(i + 9)]) else { throw Failure.truncated("extended report \(n) address") }
            out.append(AdvertisingReport(
                address: address,
                addressType: AddressType(hci: p[i + 2]),
                eventType: legacyEventType(props),
                rssi: rssiByte == 127 ? nil : rssiByte,
                rawData: Array(p[(i + 24)..<(i + 24 + dataLength)])))
            i += 24 + dataLength
        }
        return out
    }

    /// Maps extended event properties to the legacy event type (Core Vol 4 E 7.7.65.13 table).
    static func legacyEventType(_ props: UInt16) -> UInt8 {
        let connectable = props & 0x01 != 0, scannable = props & 0x02 != 0
        let directed = props & 0x04 != 0, scanResponse = props & 0x08 != 0
        guard props & 0x10 != 0 else { return 0xFF }  // not a legacy PDU
        if scanResponse { return 4 }
        if directed { return 1 }
        if connectable { return 0 }
        if scannable { return 2 }
        return 3
    }
}
