import HealthModel
import HeartRateProfile
import Testing

/// The malformed-input rules: reject without a value, keep the valid prefix otherwise, never invent.
@Suite struct MalformedPayloadTests {
    @Test func emptyIsRejected() {
        #expect(throws: HeartRateMeasurementError.empty) { try decode("") }
        #expect("\(HeartRateMeasurementError.empty)".contains("empty"))
    }

    @Test(arguments: ["16", "00", "01", "0148", "1901", "ff"])
    func missingValueIsRejectedSayingWhatIsMissing(hex: String) {
        #expect {
            try decode(hex)
        } throws: { e in
            let s = "\(e)"
            return s.contains("missing heart rate value") && s.contains(bytes(hex)[0] & 1 == 1 ? "uint16" : "uint8")
        }
    }

    @Test func missingEnergyKeepsPrefixAndStops() throws {
        // Energy announced, only one byte of it, RR announced too: nothing after bpm is read.
        for hex in ["0848", "084801", "18480102"] where hex != "18480102" {
            let m = try decode(hex)
            #expect(m.beatsPerMinute == 72 && m.energyExpendedKJ == nil && m.rrIntervals.isEmpty)
            #expect(m.malformation == .energyExpendedMissing)
        }
        let ok = try decode("18480102")  // EE 0x0201 present, RR flag, no RR bytes
        #expect(ok.energyExpendedKJ == 0x0201 && !ok.truncated && ok.rrIntervals.isEmpty)
    }

    @Test func oddTrailingByteIsNotAnRR() throws {
        let m = try decode("10480004ab")
        #expect(Array(m.rrIntervals) == [1024])
        #expect(m.malformation == .oddTrailingByte && m.truncated)
        let lone = try decode("1048ab")
        #expect(lone.rrIntervals.isEmpty && lone.truncated)
    }

    @Test func rrFlagWithoutBytesIsNoRR() throws {
        let m = try decode("1048")
        #expect(m.rrIntervals.isEmpty && !m.truncated)
    }

    @Test func reservedBitsAndContactBitOneAlone() throws {
        let reserved = try decode("e248")
        let plain = try decode("0048")
        #expect(reserved == plain.with(flags: 0xE2))
        #expect(try decode("0248").sensorContact == .notSupported)
        #expect(try decode("0448").sensorContact == .notDetected)
        #expect(try decode("0648").sensorContact == .detected)
    }

    @Test func bytesAfterTheLastAnnouncedFieldAreIgnored() throws {
        let m = try decode("0048ffee")
        #expect(m.beatsPerMinute == 72 && !m.truncated && m.ignoredTrailingBytes == 2 && m.rrIntervals.isEmpty)
    }

    @Test func formatMayChangePerNotification() throws {
        #expect(try decode("0048").beatsPerMinute == 72)
        #expect(try decode("012c01").beatsPerMinute == 300)
        #expect(try decode("014800").beatsPerMinute == 72)
    }

    @Test func largeMTUPayloadKeepsCapacityAndReportsOverflow() throws {
        let hex = "1048" + String(repeating: "0004", count: RRTicks.capacity + 3)
        let m = try decode(hex)
        #expect(m.rrIntervals.count == RRTicks.capacity)
        #expect(m.malformation == .rrOverflow(dropped: 3))
    }

    @Test func encodeRoundTrips() throws {
        let m = HeartRateMeasurement(beatsPerMinute: 300, sensorContact: .detected, energyExpendedKJ: 65535,
                                     rrIntervals: RRTicks([512]))
        #expect(m.encode() == bytes("1f2c01ffff0002"))  // bumble's encoding of the same measurement
        #expect(try HeartRateMeasurement.decode(bytes: m.encode()) == m)
    }
}

extension HeartRateMeasurement {
    func with(flags: UInt8) -> HeartRateMeasurement { var c = self; c.flags = flags; return c }
}
