import Foundation
import Testing
@testable import HealthModel

/// Health values typed by a user (options of the CLI): the rules at their edges, and a sentence
/// naming the option when a value does not fit.
@Suite struct InputValuesTests {
    @Test func durationsUpTo100YearsInWholeUnits() throws {
        #expect(try InputValues.seconds("30d", option: "--retention") == 30 * 86_400)
        #expect(try InputValues.seconds("1.5h", option: "--retention") == 5_400)
        #expect(try InputValues.seconds("36500d", option: "--retention") == InputValues.maximumDurationSeconds)
        for bad in ["36501d", "0d", "-1d", "d", "30", "30y", "infd", "nand", "1e300w"] {
            let e = #expect(throws: InputValueError.self, "\(bad)") { try InputValues.seconds(bad, option: "--retention") }
            #expect(e?.message.hasPrefix("--retention '\(bad)'") == true)
        }
    }

    @Test func timeZonesAreIANANamesInAnyCaseNeverOffsets() throws {
        #expect(try InputValues.timeZone("europe/berlin")?.identifier == "Europe/Berlin")
        #expect(try InputValues.timeZone("utc")?.secondsFromGMT() == 0)
        #expect(try InputValues.timeZone(nil) == nil)
        for bad in ["UTC+2", "GMT-0130", "+02:00", "Mars/Base", "../etc/passwd"] {
            #expect(throws: InputValueError.self, "\(bad)") { try InputValues.timeZone(bad, option: "tz") }
        }
    }

    @Test func aRangeMustNotBeEmpty() throws {
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        try InputValues.checkRange(from: t, to: t.addingTimeInterval(0.001))
        try InputValues.checkRange(from: nil, to: t)
        #expect(throws: InputValueError.self) { try InputValues.checkRange(from: t, to: t) }
        #expect(throws: InputValueError.self) { try InputValues.checkRange(from: t, to: t.addingTimeInterval(-1)) }
    }

    @Test func typesUnitsAndOptionsAreCheckedAgainstEachOther() throws {
        let hr = try InputValues.type("heartRate")
        #expect(try InputValues.unit(nil, for: hr) == hr.canonicalUnit)
        #expect(try InputValues.unit("count/s", for: hr).unitString == "count/s")
        #expect(throws: InputValueError.self) { try InputValues.unit("kg", for: hr) }
        #expect(throws: InputValueError.self) { try InputValues.type("heartrate2") }
        #expect(try InputValues.statisticsOptions("discreteMin,MOSTRECENT", for: hr) == [.discreteMin, .mostRecent])
        let e = #expect(throws: InputValueError.self) { try InputValues.statisticsOptions("cumulativeSum", for: hr) }
        #expect(e?.message.hasPrefix("--option: ") == true)
        #expect(try InputValues.sensorLocation("chest") == .chest)
        #expect(throws: InputValueError.self) { try InputValues.sensorLocation("elbow") }
        #expect(throws: InputValueError.self) { try InputValues.date("2026-13-01", option: "--from") }
    }

    @Test("decimal numbers only: no hexadecimal, nan or inf, no overflow or underflow to a different value; minus zero is zero")
    func decimalsAreStrict() {
        let good: [(String, Double)] = [("72", 72), ("0.5", 0.5), ("-5", -5), ("+3", 3), ("1e3", 1000), ("1.5E+2", 150), ("2e-3", 0.002),
                                        ("5.", 5), (".5", 0.5), ("0", 0), ("0e5", 0), ("1e-300", 1e-300)]
        for (text, v) in good { #expect(InputValues.decimal(text) == v, "\(text)") }
        #expect(InputValues.decimal("-0")?.sign == .plus && InputValues.decimal("-0.0e0")?.sign == .plus)
        for text in ["0x48", "0X10", "nan", "NaN", "inf", "-infinity", "1e400", "-1e400", "1e-400", "0.0000e-999x", " 72", "72 ", "1,5",
                     "1e", "e3", "1.2.3", "--5", "5-", "1e3e4", ""] {
            #expect(InputValues.decimal(text) == nil, "\(text)")
        }
    }
}
