import Foundation
import HealthModel
import Testing

/// The one strict date parser and exact formatter (docs/input-rules.md, "Dates").
@Suite("Dates: strict ISO 8601 parsing, exact formatting")
struct DateParsingTests {
    /// 2026-11-02T08:00:00Z.
    let eight = Date(timeIntervalSince1970: 1_793_606_400)
    let berlin = TimeZone(identifier: "Europe/Berlin")!

    func parse(_ s: String, _ tz: TimeZone? = nil) throws -> Date { try ISO8601.parse(s, localTimeZone: tz) }

    func reason(_ s: String, _ tz: TimeZone? = nil) -> String? {
        do { _ = try ISO8601.parse(s, localTimeZone: tz); return nil } catch { return error.reason }
    }

    @Test("the time of day is kept: T or a space, Z or an offset, with or without seconds")
    func timeOfDayKept() throws {
        #expect(try parse("2026-11-02T08:00:00Z") == eight)
        #expect(try parse("2026-11-02 08:00:00Z") == eight)
        #expect(try parse("2026-11-02 08:30:00Z") == eight.addingTimeInterval(1800))
        #expect(try parse("2026-11-02T08:00Z") == eight)
        #expect(try parse("2026-11-02T09:00:00+01:00") == eight)
        #expect(try parse("2026-11-02T03:30:00-04:30") == eight)
        #expect(try parse("2026-11-02T08:00:00-00:00") == eight)
    }

    @Test("fractional seconds keep every digit up to nanoseconds")
    func fractions() throws {
        #expect(try parse("2026-11-02T08:00:00.941Z").timeIntervalSince1970 == 1_793_606_400.941)
        #expect(try parse("2026-11-02T08:00:00.5Z").timeIntervalSince1970 == 1_793_606_400.5)
        #expect(try parse("2026-11-02T08:00:00.123456789Z").timeIntervalSince1970 == 1_793_606_400.123456789)
        #expect(reason("2026-11-02T08:00:00.1234567891Z")?.contains("9 fractional digits") == true)
        #expect(reason("2026-11-02T08:00:00.Z") != nil)
    }

    @Test("impossible calendar values are refused, never rolled over",
          arguments: [("2026-02-30T08:00:00Z", "February 2026 has 28 days"), ("2026-02-29T00:00:00Z", "February 2026 has 28 days"),
                      ("2100-02-29T00:00:00Z", "February 2100 has 28 days"), ("2026-04-31T00:00:00Z", "April 2026 has 30 days"),
                      ("2026-11-02T25:00:00Z", "hour 25"), ("2026-11-02T24:00:00Z", "hour 24"),
                      ("2026-11-02T08:60:00Z", "minute 60"), ("2026-11-02T08:00:60Z", "second 60"),
                      ("2026-13-02T08:00:00Z", "month 13"), ("2026-00-02T08:00:00Z", "month 0"),
                      ("2026-11-00T08:00:00Z", "day 0"), ("2026-11-02T08:00:00+24:00", "offset"),
                      ("0000-01-01T00:00:00Z", "year 0"),
                      // The offset takes them out of 0001–9999 in UTC: export would write year 10000 or 0000.
                      ("9999-12-31T23:59:59-23:59", "outside 0001-01-01T00:00:00Z"), ("9999-12-31T23:00:00-01:00", "outside"),
                      ("0001-01-01T00:00:00+00:01", "outside"), ("9999-12-31T23:59:59.999999999Z", "outside")])
    func impossible(text: String, expected: String) {
        let r = reason(text)
        #expect(r?.contains(expected) == true, "\(text): \(r ?? "accepted")")
    }

    @Test("leap days exist exactly in leap years")
    func leapDays() throws {
        #expect(try parse("2028-02-29T12:00:00Z") == Date(timeIntervalSince1970: 1_835_438_400))
        #expect(try parse("2000-02-29T00:00:00Z") == Date(timeIntervalSince1970: 951_782_400))
    }

    @Test("anything not in the grammar is refused",
          arguments: ["yesterday", "2026-11-02T08:00:00", "2026-11-02", "2026-11-2T08:00:00Z", "2026/11/02T08:00:00Z",
                      " 2026-11-02T08:00:00Z", "2026-11-02T08:00:00Z ", "2026-11-02T08:00:00+0100", "2026-11-02T08:00:00+01",
                      "2026-11-02t08:00:00Z", "2026-11-02T08:00:00z", "2026-11-02T8:00:00Z", "2026-11-02T08Z", "",
                      "２０２６-11-02T08:00:00Z", "2026-11-02Z", "2026-11-02T08:00:00ZZ"])
    func refused(text: String) {
        #expect(reason(text) != nil, "\(text) was accepted")
    }

    @Test("without a zone and without a local zone it is refused with a hint")
    func zoneRequired() {
        #expect(reason("2026-11-02T08:00:00")?.contains("has no time zone") == true)
        #expect(reason("2026-11-02")?.contains("bare date") == true)
    }

    @Test("a local time is read in the given zone; a bare date is that zone's midnight")
    func localTime() throws {
        #expect(try parse("2026-11-02T09:00:00", berlin) == eight)
        #expect(try parse("2026-11-02 09:00", berlin) == eight)
        #expect(try parse("2026-07-01T10:00:00", berlin) == parse("2026-07-01T08:00:00Z"))
        #expect(try parse("2026-11-02", berlin) == parse("2026-11-01T23:00:00Z"))
        #expect(try parse("2026-11-02", TimeZone(identifier: "UTC")!) == parse("2026-11-02T00:00:00Z"))
        // An explicit zone wins over the local one.
        #expect(try parse("2026-11-02T08:00:00Z", berlin) == eight)
    }

    @Test("a local time the clocks skip or repeat is refused; the days themselves parse")
    func daylightSaving() throws {
        #expect(reason("2026-03-29T02:30:00", berlin)?.contains("does not exist in Europe/Berlin") == true)
        #expect(reason("2026-10-25T02:30:00", berlin)?.contains("happens twice") == true)
        // The hint names the zone's own offsets (it said +01:00 for Santiago, whose are -04:00 and -03:00).
        #expect(reason("2026-03-29T02:30:00", berlin)?.hasSuffix("add an offset: +01:00 or +02:00") == true)
        let santiago = try #require(TimeZone(identifier: "America/Santiago"))
        #expect(reason("2026-09-06T00:30:00", santiago)?.hasSuffix("add an offset: -04:00 or -03:00") == true, "\(reason("2026-09-06T00:30:00", santiago) ?? "")")
        #expect(reason("2026-10-25T02:30:00", berlin)?.hasSuffix("to say which: +01:00 or +02:00") == true)
        #expect(try parse("2026-03-29T03:00:00", berlin) == parse("2026-03-29T01:00:00Z"))
        #expect(try parse("2026-10-25T02:30:00+02:00", berlin) == parse("2026-10-25T00:30:00Z"))
        #expect(try parse("2026-03-29", berlin) == parse("2026-03-28T23:00:00Z"))
        #expect(try parse("2026-10-25", berlin) == parse("2026-10-24T22:00:00Z"))
        // São Paulo skipped midnight itself in 2018: the bare date is the day's first instant, 01:00.
        let sp = TimeZone(identifier: "America/Sao_Paulo")!
        #expect(try parse("2018-11-04", sp) == parse("2018-11-04T03:00:00Z"))
    }

    @Test("formatting: UTC with Z, and 0, 3, 6 or 9 fraction digits, whichever reads back exactly")
    func formatting() throws {
        #expect(ISO8601.string(eight) == "2026-11-02T08:00:00Z")
        #expect(ISO8601.string(Date(timeIntervalSince1970: 1_793_606_400.941)) == "2026-11-02T08:00:00.941Z")
        #expect(ISO8601.string(Date(timeIntervalSince1970: 1_793_606_400.25)) == "2026-11-02T08:00:00.250Z")
        #expect(ISO8601.string(Date(timeIntervalSince1970: 1_793_606_400.000_25)) == "2026-11-02T08:00:00.000250Z")
        #expect(ISO8601.string(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
        #expect(try parse("1969-12-31T23:59:59.500Z").timeIntervalSince1970 == -0.5)
        #expect(ISO8601.string(Date(timeIntervalSince1970: 253_402_300_799)) == "9999-12-31T23:59:59Z")
    }

    @Test("every stored time survives format → parse bit for bit (ms, µs and clock readings)")
    func exactRoundTrip() throws {
        var rng = SystemRandomNumberGenerator()
        var times: [Double] = [1_793_606_400.941, 1_793_606_400.001, 1_793_606_400.999, 0, 1_000_000_000.1]
        for _ in 0..<2_000 {
            times.append(Double(Int.random(in: 0...4_102_444_800, using: &rng)) + Double(Int.random(in: 0...999, using: &rng)) / 1000)
            times.append(Double.random(in: 978_307_200...4_102_444_800, using: &rng))   // like Date(), 2001–2100
        }
        times.append(Date().timeIntervalSince1970)
        for t in times {
            let date = Date(timeIntervalSince1970: t)
            let text = ISO8601.string(date)
            let back = try parse(text)
            #expect(back.timeIntervalSinceReferenceDate.bitPattern == date.timeIntervalSinceReferenceDate.bitPattern, "\(t) → \(text) → \(back)")
            // What the store keeps (seconds since 1970) comes back bit for bit too. (Before 2001,
            // Foundation's Date itself may move a 1970-based value by an ulp; the Date is exact.)
            if t >= 978_307_200 {
                #expect(back.timeIntervalSince1970.bitPattern == t.bitPattern, "\(t) → \(text)")
            }
            #expect(ISO8601.string(back) == text)
        }
    }

    @Test("the range's edges are accepted and format back to the same text")
    func rangeEdges() throws {
        for text in ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "9999-12-31T22:59:59-01:00", "0001-01-01T01:00:00+01:00"] {
            let d = try ISO8601.parse(text, localTimeZone: nil)
            #expect(ISO8601.isInRange(d.timeIntervalSince1970), "\(text)")
            #expect(try ISO8601.parse(ISO8601.string(d), localTimeZone: nil) == d, "\(text)")
        }
        #expect(!ISO8601.isInRange(ISO8601.endSeconds) && ISO8601.isInRange(ISO8601.endSeconds - 1))
        #expect(!ISO8601.isInRange(ISO8601.earliestSeconds - 1) && ISO8601.isInRange(ISO8601.earliestSeconds))
    }
}
