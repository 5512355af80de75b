import Testing
@testable import SerialPedometer

/// The default line formats (JSON, key:value pairs, bare integers) and opt-in vendor profiles,
/// with the real firmware line shapes from docs/serial-pedometers.md.
@Suite struct LineFormatTests {
    private func reading(_ line: String, _ format: LineFormat = .auto) -> PedometerReading? {
        try? LineParser.parse(line, format: format).get()
    }
    private func rejected(_ line: String, _ format: LineFormat = .auto) -> Bool {
        if case .failure = LineParser.parse(line, format: format) { return true }
        return false
    }

    @Test func jsonLineWithEveryKey() {
        let r = reading(#"{"steps":1234,"t":1700000001.25,"seq":7,"boot":"b3"}"#)
        #expect(r == PedometerReading(steps: 1234, deviceTime: 1_700_000_001.25, seq: 7, boot: "b3"))
    }

    @Test func jsonDeltaKeysAndNumericBoot() {
        let r = reading(#"{"steps":10,"dsteps":4,"t0":100.5,"t1":101.5,"boot":42}"#, .json)
        #expect(r == PedometerReading(steps: 10, boot: "42", deltaSteps: 4, deltaStart: 100.5, deltaEnd: 101.5))
    }

    @Test func jsonIntegralDecimalAcceptedFractionRejected() {
        #expect(reading(#"{"steps":123.00}"#)?.steps == 123)
        #expect(rejected(#"{"steps":12.5}"#))
        #expect(rejected(#"{"steps":-3}"#))
        #expect(rejected(#"{"steps":"12"}"#))
        #expect(rejected(#"{"steps":true}"#))
    }

    @Test func jsonWithoutStepsOrBrokenIsRejected() {
        #expect(rejected(#"{"t":5}"#))
        #expect(rejected(#"{"steps":5"#))
        #expect(rejected(#"[1,2]"#))
        #expect(rejected("steps:5", .json))
    }

    @Test(arguments: [("steps:42", 42), ("steps=42", 42), ("seq:3,steps:42", 42), ("steps:42\tseq:3", 42),
                      ("steps:42 seq:3 boot:x", 42), ("steps: 42", 42), ("ax:1.5,steps:9,ay:-0.2", 9),
                      ("steps:123.00", 123)])
    func keyValueShapes(_ line: String, _ steps: UInt64) {
        #expect(reading(line)?.steps == steps)
        #expect(reading(line, .keyValue)?.steps == steps)
    }

    @Test func keyValueCarriesOptionalKeys() {
        #expect(reading("steps=5,t=1700000000.5,seq=9,boot=ab12")
                == PedometerReading(steps: 5, deviceTime: 1_700_000_000.5, seq: 9, boot: "ab12"))
    }

    @Test func bareIntegers() {
        #expect(reading("1234")?.steps == 1234)
        #expect(reading("123.00")?.steps == 123)
        #expect(reading("0")?.steps == 0)
        #expect(reading("77", .integer)?.steps == 77)
        #expect(rejected("12.5"))
        #expect(rejected("-4"))
        #expect(rejected("steps:4", .integer))
    }

    /// Vendor free text and banners are never guessed as counts by default.
    @Test(arguments: ["Step: 1234", "Steps: 12, Activity: Walking", "Total Steps: 123.00",
                      "Current Run Steps: 4.00", "BMA456 Step Counter", "I2C device found at address 0x14 !",
                      "Interrupt occurred!\tStep detected! Step count: 5\tDetected activity type: Walking",
                      "Steps:12", "steps:", "steps:abc", "hello"])
    func vendorTextAndBannersAreRejectedByDefault(_ line: String) {
        #expect(rejected(line))
    }

    @Test func builtInProfilesParseTheirFirmware() throws {
        let p = VendorProfile.builtIn
        #expect(reading("Step: 1234", .profile(try #require(p["seeed-bma456"])))?.steps == 1234)
        #expect(reading("Steps: 12, Activity: Walking", .profile(try #require(p["bma400"])))?.steps == 12)
        #expect(reading("Interrupt occurred!\tStep detected! Step count: 5\tDetected activity type: Walking",
                        .profile(try #require(p["sparkfun-bma400"])))?.steps == 5)
        #expect(reading("Total Steps: 123.00", .profile(try #require(p["nicla-total"])))?.steps == 123)
        let run = reading("Current Run Steps: 4.00", .profile(try #require(p["nicla-run"])))
        #expect(run == PedometerReading(deltaSteps: 4))
        // A profile only takes its own lines.
        #expect(rejected("Current Run Steps: 4.00", .profile(try #require(p["nicla-total"]))))
        #expect(rejected("Step: 12.5", .profile(try #require(p["seeed-bma456"]))))
    }

    @Test func userProfilesNeedACaptureGroup() throws {
        let p = try VendorProfile(name: "mine", pattern: #"^Pedo=(\d+)$"#, semantics: .cumulative)
        #expect(reading("Pedo=88", .profile(p))?.steps == 88)
        #expect(throws: SerialConfigError.self) { try VendorProfile(name: "bad", pattern: #"^Pedo=\d+$"#, semantics: .delta) }
        #expect(throws: SerialConfigError.self) { try VendorProfile(name: "bad", pattern: #"^Pedo=(\d+$"#, semantics: .delta) }
    }

    /// The reasons a profile gives (built once, when it is compiled) name the profile and what failed.
    @Test func profileRejectionsNameTheProfile() throws {
        let p = try VendorProfile(name: "mine", pattern: #"^Pedo=(\S+)$"#, semantics: .cumulative)
        guard case .failure(let miss) = p.parse("Steps: 12") else { Issue.record("a line of another device matched"); return }
        #expect(miss.description == "does not match profile mine")
        guard case .failure(let bad) = p.parse("Pedo=12.5") else { Issue.record("a fraction was taken as a count"); return }
        #expect(bad.description == "profile mine matched, but its number is not a whole count")
        let other = try VendorProfile(name: "theirs", pattern: #"^Pedo=(\S+)$"#, semantics: .cumulative)
        guard case .failure(let theirs) = other.parse("x") else { Issue.record("matched"); return }
        #expect(theirs.description == "does not match profile theirs", "each profile keeps its own reasons")
    }

    @Test func formatNamesParse() throws {
        #expect(try LineFormat(parsing: "auto", profiles: [:]) == .auto)
        #expect(try LineFormat(parsing: "kv", profiles: [:]) == .keyValue)
        #expect(try LineFormat(parsing: "profile:bma400", profiles: VendorProfile.builtIn).description == "profile:bma400")
        #expect(throws: SerialConfigError.self) { try LineFormat(parsing: "profile:nope", profiles: VendorProfile.builtIn) }
        #expect(throws: SerialConfigError.self) { try LineFormat(parsing: "xml", profiles: [:]) }
    }
}
