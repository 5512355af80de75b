import HealthModel
import HealthGateTesting
import HeartRateProfile
import Testing
@testable import BluetoothLinux

/// Random HCI events, advertising payloads and profile characteristic values (seeded,
/// reproducible), as anything on the air could send them, never trap the parsers: each is parsed,
/// or refused with a typed error or a listed problem (issue #17: no trap on data from outside).
@Suite struct HostileAdvertisingTests {
    @Test func randomHCIPacketsParseOrAreRefused() {
        var g = SplitMix64(seed: 0x48_43_49)
        var parsed = 0, refused = 0
        for _ in 0..<5000 {
            // An LE Meta event header with a legacy or extended subevent and a small report count
            // most of the time, so the per-report length arithmetic is what gets exercised.
            var params = g.bytes(Int.random(in: 0...80, using: &g))
            if params.count >= 2, Int.random(in: 0...3, using: &g) > 0 {
                params[0] = Bool.random(using: &g) ? HCIEventParser.advertisingReport : HCIEventParser.extendedAdvertisingReport
                params[1] = UInt8.random(in: 0...4, using: &g)
            }
            let length = Bool.random(using: &g) ? UInt8(params.count) : UInt8.random(in: 0...255, using: &g)
            let packet: [UInt8] = [0x04, HCIEventParser.leMetaEvent, length] + params
            do {
                let reports = try HCIEventParser.reports(fromPacket: packet)
                parsed += 1
                for r in reports { _ = AdvertisingData(parsing: r.rawData).isHeartRateSensor() }
            } catch {
                refused += 1
                #expect(!"\(error)".isEmpty)
            }
        }
        #expect(parsed > 1000 && refused > 500, "parsed \(parsed), refused \(refused)")
    }

    @Test func randomAdvertisingPayloadsParseWithProblemsListed() {
        var g = SplitMix64(seed: 0x41_44)
        // Known AD types (flags, UUID lists, names, tx power, service and manufacturer data).
        let types: [UInt8] = [0x01, 0x02, 0x03, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x16, 0x19, 0xFF]
        var withProblems = 0
        for _ in 0..<5000 {
            var ad: [UInt8] = []
            for _ in 0..<Int.random(in: 0...5, using: &g) {
                let value = g.bytes(Int.random(in: 0...8, using: &g))
                let length = Int.random(in: 0...9, using: &g) == 0 ? UInt8.random(in: 0...255, using: &g) : UInt8(value.count + 1)
                ad += [length, types[Int.random(in: 0..<types.count, using: &g)]] + value
            }
            let data = AdvertisingData(parsing: ad)
            if !data.problems.isEmpty { withProblems += 1 }
            _ = data.isHeartRateSensor()
        }
        #expect(withProblems > 100)
    }

    @Test func randomCharacteristicValuesDecodeOrAreRefused() {
        // Body Sensor Location, Battery Level, Device Information strings, as read from a strap.
        var g = SplitMix64(seed: 0x43_48)
        var refused = 0
        for _ in 0..<3000 {
            let bytes = g.bytes(Int.random(in: 0...24, using: &g))
            do { _ = try BodySensorLocation(bytes: bytes).location } catch { refused += 1 }
            do { _ = try BatteryLevel.decode(bytes) } catch { refused += 1 }
            _ = DeviceInformation.string(bytes)
        }
        #expect(refused > 1000)
    }
}
