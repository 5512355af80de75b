import HealthModel
import HeartRateProfile
import Testing

/// Body Sensor Location, Battery Level, Device Information → Device.
@Suite struct ProfileCharacteristicTests {
    @Test(arguments: 0...255)
    func bodySensorLocation(raw: Int) throws {
        let l = try BodySensorLocation(bytes: [UInt8(raw)])
        if raw <= 6 {
            #expect(l.location.rawValue == raw && !l.isReserved)
        } else {
            #expect(l.location == .other && l.isReserved && l.rawValue == UInt8(raw))
            #expect(l.description.contains("reserved value \(raw)"))
        }
    }

    @Test func emptyValuesAreErrors() throws {
        #expect(throws: ProfileValueError.empty("Body Sensor Location")) { try BodySensorLocation(bytes: []) }
        #expect(throws: ProfileValueError.empty("Battery Level")) { try BatteryLevel.decode([]) }
        #expect(throws: ProfileValueError.reserved("Battery Level", 101)) { try BatteryLevel.decode([101]) }
        #expect(try BatteryLevel.decode([100]) == 100)
    }

    @Test func deviceInformationBecomesADevice() {
        var dis = DeviceInformation()
        dis.set(Array("Polar Electro Oy".utf8), for: 0x2A29)
        dis.set(Array("H7\0".utf8), for: 0x2A24)
        dis.set(Array("1.1.0 ".utf8), for: 0x2A26)
        dis.set(Array("C0680226".utf8), for: 0x2A25)
        dis.set([0xFF, 0x41], for: 0x2A27)
        dis.set([], for: 0x2A28)
        let id = DeviceInformation.localIdentifier(forAddress: "00:22:d0:aa:bb:cc")
        let d = dis.device(name: "Polar H7 D7904C14", localIdentifier: id)
        #expect(d.manufacturer == "Polar Electro Oy" && d.model == "H7" && d.firmwareVersion == "1.1.0")
        #expect(d.hardwareVersion == "\u{FFFD}A" && d.softwareVersion == nil)
        #expect(d.localIdentifier == DeviceInformation.localIdentifier(forAddress: "00:22:D0:AA:BB:CC"))
        #expect(d.localIdentifier?.hasPrefix("ble-") == true && d.localIdentifier?.count == 20)
        #expect(!(d.localIdentifier ?? "").contains("C0680226"))  // the serial number stays out
    }

    /// One rule for every string read from a strap (Device Information and the GAP name, in
    /// `pair`, `live` and `run` alike): it ends at the first NUL, spaces and tabs at either end go.
    @Test func deviceInformationStringsFollowOneRule() {
        #expect(DeviceInformation.string(Array("  Polar H10\t".utf8)) == "Polar H10")   // `pair` kept these, `run` did not
        #expect(DeviceInformation.string(Array("H7\0garbage".utf8)) == "H7")            // `run` kept the garbage
        #expect(DeviceInformation.string(Array("H7 \0\0\0".utf8)) == "H7")
        #expect(DeviceInformation.string(Array("Polar  Electro".utf8)) == "Polar  Electro")  // inner spaces stay
        #expect(DeviceInformation.string([0x20, 0x00, 0x41]) == nil)
        #expect(DeviceInformation.string([]) == nil)
        #expect(DeviceInformation.string([0xFF, 0x41]) == "\u{FFFD}A")
    }

    @Test func controlPointConstants() {
        #expect(HeartRateControlPoint.resetEnergyExpended == [0x01])
        #expect(HeartRateControlPoint.notSupportedErrorCode == 0x80)
    }
}
