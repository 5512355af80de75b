import Testing
@testable import BluetoothLinux

@Suite("Advertising data parsing")
struct AdvertisingDataTests {
    /// The real Polar H7 advertisement from polar-ble-sdk#305 (heart-rate-profile.md §4).
    static let polarH7 = "02010603020D1807FF6B003B1B5452020A001209506F6C6172204837204437393034433134"

    @Test func polarH7RealPayload() {
        let ad = AdvertisingData(parsing: bytes(Self.polarH7))
        #expect(ad.problems.isEmpty)
        #expect(ad.flags == 0x06)
        #expect(ad.serviceUUIDs16 == [0x180D])
        #expect(!ad.serviceListComplete)  // 0x02: the incomplete list
        #expect(ad.manufacturerData == [.init(company: 0x006B, data: [0x3B, 0x1B, 0x54, 0x52])])
        #expect(companyName(ad.manufacturerData[0].company) == "Polar Electro Oy")
        #expect(ad.txPower == 0)
        #expect(ad.localName == "Polar H7 D7904C14")
        #expect(ad.localNameComplete)
        #expect(ad.advertisesHeartRate)
        #expect(ad.isHeartRateSensor())
    }

    @Test func completeListAndShortName() {
        // flags, complete 16-bit list (180F, 180D, 180A), shortened name "HRM", TX power -4 dBm
        let ad = AdvertisingData(parsing: bytes("020106 07030F180D180A18 040848524D 020AFC"))
        #expect(ad.problems.isEmpty)
        #expect(ad.serviceUUIDs16 == [0x180F, 0x180D, 0x180A])
        #expect(ad.serviceListComplete)
        #expect(ad.localName == "HRM")
        #expect(!ad.localNameComplete)
        #expect(ad.txPower == -4)
        #expect(ad.advertisesHeartRate)
    }

    @Test func heartRateServiceInEitherList() {
        #expect(AdvertisingData(parsing: bytes("03020D18")).advertisesHeartRate)
        #expect(AdvertisingData(parsing: bytes("03030D18")).advertisesHeartRate)
        #expect(!AdvertisingData(parsing: bytes("03030F18")).advertisesHeartRate)
        // 0x180D as manufacturer data bytes is not a service list
        #expect(!AdvertisingData(parsing: bytes("05FF0D180D18")).advertisesHeartRate)
    }

    @Test func nameFallbackWithoutService() {
        let polar = AdvertisingData(parsing: Array([10, 0x09]) + Array("Polar H10".utf8))
        #expect(polar.localName == "Polar H10")
        #expect(!polar.advertisesHeartRate)
        #expect(polar.isHeartRateSensor())
        let lamp = AdvertisingData(parsing: Array([10, 0x09]) + Array("Desk Lamp".utf8))
        #expect(!lamp.isHeartRateSensor())
        #expect(lamp.isHeartRateSensor(nameHints: ["lamp"]))
        #expect(!AdvertisingData(parsing: bytes("020106")).isHeartRateSensor())
    }

    @Test func completeNameBeatsShortenedInAnyOrder() {
        let a = AdvertisingData(parsing: bytes("09094C6F6E674E616D65 03085348"))  // complete then short
        #expect(a.localName == "LongName" && a.localNameComplete)
        var adv = AdvertisingData(parsing: bytes("03085348"))
        adv.merge(AdvertisingData(parsing: bytes("09094C6F6E674E616D65 03030D18")))
        #expect(adv.localName == "LongName")
        #expect(adv.serviceUUIDs16 == [0x180D])
        var kept = AdvertisingData(parsing: bytes("09094C6F6E674E616D65"))
        kept.merge(AdvertisingData(parsing: bytes("03085348")))
        #expect(kept.localName == "LongName")
    }

    @Test func lengthRunningPastTheEndKeepsWhatCameBefore() {
        let ad = AdvertisingData(parsing: bytes("020106 05030D18"))  // claims 5, 3 present
        #expect(ad.flags == 0x06)
        #expect(ad.serviceUUIDs16.isEmpty)
        #expect(ad.problems.count == 1)
        #expect(ad.problems[0].contains("claims 5 bytes"))
    }

    @Test func zeroPaddingIsFineJunkAfterZeroIsReported() {
        let padded = AdvertisingData(parsing: bytes("020106 03020D18 000000"))
        #expect(padded.problems.isEmpty)
        #expect(padded.advertisesHeartRate)
        let junk = AdvertisingData(parsing: bytes("020106 00 03020D18"))
        #expect(junk.flags == 0x06)
        #expect(!junk.advertisesHeartRate)  // nothing after a zero length is trusted
        #expect(junk.problems.count == 1)
    }

    @Test func oddServiceListKeepsWholeUUIDsOnly() {
        let ad = AdvertisingData(parsing: bytes("04030D1818"))
        #expect(ad.serviceUUIDs16 == [0x180D])
        #expect(ad.problems.count == 1)
    }

    @Test func shortStructuresAreReportedNotInvented() {
        let ad = AdvertisingData(parsing: bytes("0101 02FF6B 010A 02160D"))
        #expect(ad.flags == nil)
        #expect(ad.manufacturerData.isEmpty)
        #expect(ad.txPower == nil)
        #expect(ad.serviceData16.isEmpty)
        #expect(ad.problems.count == 4)
    }

    @Test func emptyAndUnknownTypes() {
        let empty = AdvertisingData(parsing: [UInt8]())
        #expect(empty == AdvertisingData())
        let unknown = AdvertisingData(parsing: bytes("03191234 020106"))  // 0x19 Appearance: skipped
        #expect(unknown.problems.isEmpty)
        #expect(unknown.flags == 0x06)
    }

    @Test func uuids128AndServiceData() {
        let uuid = bytes("0000FEEE00001000800000805F9B34FB")
        let ad = AdvertisingData(parsing: [17, 0x07] + uuid.reversed() + bytes("05160D184801"))
        #expect(ad.serviceUUIDs128 == [uuid])
        #expect(ad.serviceData16 == [.init(uuid: 0x180D, data: [0x48, 0x01])])
    }

    @Test func invalidUTF8NameIsRepairedNotDropped() {
        let ad = AdvertisingData(parsing: bytes("0409FF4142"))
        #expect(ad.localName == "\u{FFFD}AB")
    }
}
