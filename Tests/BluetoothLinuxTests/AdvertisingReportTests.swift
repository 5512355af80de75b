import Testing
@testable import BluetoothLinux

@Suite("HCI advertising reports")
struct AdvertisingReportTests {
    /// A raw-socket packet: [0x04][0x3E][len][0x02][n] then per report
    /// [event type][address type][address LE ×6][data length][data][rssi].
    static func legacyPacket(_ reports: [(UInt8, UInt8, String, [UInt8], Int8)]) -> [UInt8] {
        var params: [UInt8] = [0x02, UInt8(reports.count)]
        for (evt, atype, addr, data, rssi) in reports {
            params += [evt, atype] + BluetoothAddress(addr)!.littleEndianBytes + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        }
        return [0x04, 0x3E, UInt8(params.count)] + params
    }

    @Test func polarH7Report() throws {
        let ad = bytes(AdvertisingDataTests.polarH7)
        let packet = Self.legacyPacket([(0x00, 0x00, "A0:9E:1A:12:34:56", ad, -67)])
        let reports = try HCIEventParser.reports(fromPacket: packet)
        #expect(reports.count == 1)
        let r = reports[0]
        #expect(r.address.description == "A0:9E:1A:12:34:56")
        #expect(r.addressType == .public)
        #expect(r.rssi == -67)
        #expect(r.isConnectable && !r.isScanResponse)
        #expect(r.rawData == ad)
        #expect(r.data.localName == "Polar H7 D7904C14")
        #expect(r.data.advertisesHeartRate)
    }

    @Test func twoReportsOneEventRandomAddressAndScanResponse() throws {
        let packet = Self.legacyPacket([
            (0x00, 0x01, "F1:22:33:44:55:66", bytes("020106 03030D18"), -50),
            (0x04, 0x01, "F1:22:33:44:55:66", [5, 0x09] + Array("TICK".utf8), 127),
        ])
        let reports = try HCIEventParser.reports(fromPacket: packet)
        #expect(reports.map(\.addressType) == [.random, .random])
        #expect(reports[0].address.randomKind == .staticAddress)
        #expect(reports[1].isScanResponse)
        #expect(reports[1].rssi == nil)  // 127 = not available
        #expect(reports[1].data.localName == "TICK")
    }

    @Test func extendedReportWithLegacyPDU() throws {
        let ad = bytes("020106 03020D18")
        var p: [UInt8] = [0x0D, 1]
        p += [0x13, 0x00]                      // legacy | scannable | connectable = ADV_IND
        p += [0x01] + BluetoothAddress("C0:11:22:33:44:55")!.littleEndianBytes
        p += [0x01, 0x00, 0xFF, 0x7F, UInt8(bitPattern: Int8(-80)), 0x00, 0x00, 0x00] + [UInt8](repeating: 0, count: 6)
        p += [UInt8(ad.count)] + ad
        let reports = try HCIEventParser.reports(fromPacket: [0x04, 0x3E, UInt8(p.count)] + p)
        #expect(reports.count == 1)
        #expect(reports[0].eventType == 0)
        #expect(reports[0].addressType == .random)
        #expect(reports[0].rssi == -80)
        #expect(reports[0].data.advertisesHeartRate)
    }

    @Test func legacyEventTypeMapping() {
        #expect(HCIEventParser.legacyEventType(0x13) == 0)  // ADV_IND
        #expect(HCIEventParser.legacyEventType(0x15) == 1)  // ADV_DIRECT_IND
        #expect(HCIEventParser.legacyEventType(0x12) == 2)  // ADV_SCAN_IND
        #expect(HCIEventParser.legacyEventType(0x10) == 3)  // ADV_NONCONN_IND
        #expect(HCIEventParser.legacyEventType(0x1B) == 4)  // SCAN_RSP to ADV_IND
        #expect(HCIEventParser.legacyEventType(0x01) == 0xFF)  // extended PDU
    }

    @Test func truncatedReportsThrow() {
        let good = Self.legacyPacket([(0, 0, "00:11:22:33:44:55", bytes("020106"), -40)])
        // Cut inside the data but fix the event length so only the report layout is wrong.
        var cut = Array(good.dropLast(2))
        cut[2] = UInt8(cut.count - 3)
        #expect(throws: HCIEventParser.Failure.self) { try HCIEventParser.reports(fromPacket: cut) }
        // Event length longer than the packet.
        #expect(throws: HCIEventParser.Failure.self) { try HCIEventParser.reports(fromPacket: Array(good.dropLast())) }
        // A count of two with one report present.
        var twice = good
        twice[4] = 2
        #expect(throws: HCIEventParser.Failure.self) { try HCIEventParser.reports(fromPacket: twice) }
    }

    @Test func otherEventsCarryNoReports() throws {
        #expect(try HCIEventParser.reports(fromPacket: [0x04, 0x0E, 0x04, 0x01, 0x0B, 0x20, 0x00]).isEmpty)  // Command Complete
        #expect(try HCIEventParser.reports(fromPacket: [0x04, 0x3E, 0x01, 0x01]).isEmpty)  // LE Connection Complete (cut)
        #expect(try HCIEventParser.reports(fromPacket: [0x02, 0x00]).isEmpty)  // ACL data
        #expect(try HCIEventParser.reports(fromPacket: []).isEmpty)
    }
}
