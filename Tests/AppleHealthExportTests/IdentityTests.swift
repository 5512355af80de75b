@testable import AppleHealthExport
import Foundation
import HealthModel
import Testing

/// Content-derived UUIDs, heartbeat lists as RR intervals, and workouts with their events.
@Suite("Apple Health export: deterministic UUIDs, heartbeat lists → RR, workouts with pause/resume")
struct IdentityTests {
    @Test("two readings give the same UUIDs; a newer export with more records gives the old records their old UUIDs")
    func deterministicUUIDs() throws {
        let dir = try ExportFixture.directory()
        let path = dir.appendingPathComponent("export.xml").path
        let first = try ExportFixture.read(path), second = try ExportFixture.read(path)
        #expect(first.samples.map(\.uuid) == second.samples.map(\.uuid) && first.workouts.map(\.workout.uuid) == second.workouts.map(\.workout.uuid))
        #expect(Set(first.samples.map(\.uuid)).count == first.samples.count, "no two samples share a UUID")
        #expect(first.samples.allSatisfy { $0.uuid.uuidString.dropFirst(14).first == "8" }, "version 8 UUIDs")

        // The newer export: a record and a workout more, some lines earlier (line numbers shift),
        // and another object address in every device text (they change from export to export).
        var text = try String(contentsOf: URL(fileURLWithPath: path), encoding: .utf8)
        let newHR = #" <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Health" unit="count/min" startDate="2023-06-01 08:00:00 +0200" endDate="2023-06-01 08:00:00 +0200" value="61"/>"# + "\n"
        let newSteps = #" <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Health" unit="count" startDate="2023-06-01 08:00:00 +0200" endDate="2023-06-01 08:10:00 +0200" value="610"/>"# + "\n"
        let newWorkout = #" <Workout workoutActivityType="HKWorkoutActivityTypeYoga" sourceName="Health" startDate="2023-06-01 09:00:00 +0200" endDate="2023-06-01 09:30:00 +0200"/>"# + "\n"
        let me = try #require(text.range(of: "<Me "))
        let lineEnd = try #require(text[me.upperBound...].firstIndex(of: "\n"))
        text.insert(contentsOf: newHR, at: text.index(after: lineEnd))
        text = text.replacingOccurrences(of: "</HealthData>", with: newSteps + newWorkout + "</HealthData>")
            .replacingOccurrences(of: "HKDevice: 0x283b4c0a0", with: "HKDevice: 0x11111111")
        let newer = dir.appendingPathComponent("newer.xml")
        try text.write(to: newer, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: newer) }
        let later = try ExportFixture.read(newer.path)
        let old = Set(first.samples.map(\.uuid)), new = Set(later.samples.map(\.uuid))
        #expect(old.isSubset(of: new) && new.subtracting(old).count == 2)
        let oldW = Set(first.workouts.map(\.workout.uuid)), newW = Set(later.workouts.map(\.workout.uuid))
        #expect(oldW.isSubset(of: newW) && newW.count == oldW.count + 1)
    }

    @Test("time-ordered sample UUIDs: the start's milliseconds in the first 48 bits, the content hash's in the rest; a type's UUIDs sort as its starts")
    func timeOrderedUUIDs() throws {
        let path = try ExportFixture.directory().appendingPathComponent("export.xml").path
        let timed = try ExportFixture.read(path)
        let hashed = try ExportFixture.read(path, options: .init(sampleIdentity: .contentHash))
        #expect(timed.samples.count == hashed.samples.count && !timed.samples.isEmpty)
        func bytes(_ u: UUID) -> [UInt8] { withUnsafeBytes(of: u.uuid) { Array($0) } }
        for (t, h) in zip(timed.samples, hashed.samples) {
            let tb = bytes(t.uuid), hb = bytes(h.uuid)
            let ms = tb.prefix(6).reduce(Int64(0)) { $0 << 8 | Int64($1) }
            #expect(ms == Int64((t.startDate.timeIntervalSince1970 * 1000).rounded()), "\(t.uuid) for \(t.startDate)")
            #expect(tb[6] >> 4 == 8 && tb[8] >> 6 == 2, "version 8, variant 10")
            // A heartbeat sample's hash covers its SDNN's UUID, which differs between the schemes.
            if t.metadata.user["HGHeartbeatsOf"] == nil { #expect(tb.dropFirst(6) == hb.dropFirst(6), "the hash kept") }
        }
        #expect(timed.samples.contains { $0.metadata.user["HGHeartbeatsOf"] != nil }, "the fixture has heartbeat samples")
        #expect(Set(timed.samples.map(\.uuid)).count == timed.samples.count, "no two samples share a UUID")
        #expect(timed.workouts.map(\.workout.uuid) == hashed.workouts.map(\.workout.uuid), "workouts' UUIDs are the same under both")
        // Byte order (SQLite's BLOB order) follows the start, type by type.
        for type in Set(timed.samples.map(\.type)) {
            let ofType = timed.samples.filter { $0.type == type }.sorted { $0.startDate < $1.startDate }
            for (a, b) in zip(ofType, ofType.dropFirst()) where a.startDate.timeIntervalSince1970 * 1000 < (b.startDate.timeIntervalSince1970 * 1000).rounded() - 1 {
                #expect(bytes(a.uuid).lexicographicallyPrecedes(bytes(b.uuid)))
            }
        }
        // Before 1970 and past 2⁴⁸ ms (year 10889) the time is clamped, never wrapped.
        let before = ContentIdentity.sample(type: "stepCount", source: "S", start: Date(timeIntervalSince1970: -5), end: Date(timeIntervalSince1970: 1), canonicalValue: 1)
        #expect(bytes(before).prefix(6).allSatisfy { $0 == 0 })
        let far = ContentIdentity.sample(type: "stepCount", source: "S", start: Date(timeIntervalSince1970: 3e14), end: Date(timeIntervalSince1970: 3e14), canonicalValue: 1)
        #expect(bytes(far).prefix(6).allSatisfy { $0 == 0xFF })
    }

    /// The UUIDs are a promise across versions: a re-import after an upgrade must give every
    /// stored sample its old UUID. Pinned against an independent implementation of the layout
    /// docs/apple-health.md gives (Python's hashlib over the length-prefixed fields, computed
    /// once and written here), so a change to how the fields are hashed fails here.
    @Test("sample and workout UUIDs equal an independent computation of the documented layout")
    func pinnedUUIDs() {
        let start = Date(timeIntervalSince1970: 1_672_900_281)
        #expect(ContentIdentity.sample(type: "heartRate", source: "Anna’s Apple Watch", start: start, end: start, canonicalValue: 72,
                                       scheme: .contentHash).uuidString.lowercased() == "1a05323a-a342-8efd-a87d-da0a5debdf0f")
        #expect(ContentIdentity.sample(type: "heartRate", source: "Anna’s Apple Watch", start: start, end: start, canonicalValue: 72,
                                       scheme: .timeOrdered).uuidString.lowercased() == "018580a0-82a8-8efd-a87d-da0a5debdf0f")
        #expect(ContentIdentity.workout(activity: "HKWorkoutActivityTypeRunning", source: "Anna’s Apple Watch", start: start,
                                        end: start.addingTimeInterval(1800)).uuidString.lowercased() == "7d273e5f-9194-8865-a976-897da76c3d7b")
    }

    @Test("the same sample in kcal and in Cal, or another device text, is one UUID; another value or source is another")
    func identityFields() {
        let t = Date(timeIntervalSince1970: 1_700_000_000)
        let a = ContentIdentity.sample(type: "activeEnergyBurned", source: "Watch", start: t, end: t + 60, canonicalValue: 10 * 4.184)
        let b = ContentIdentity.sample(type: "activeEnergyBurned", source: "Watch", start: t, end: t + 60,
                                       canonicalValue: (try? HealthUnit("Cal").convert(10, to: .kilojoule)) ?? 0)
        #expect(a == b)
        #expect(a != ContentIdentity.sample(type: "activeEnergyBurned", source: "Watch", start: t, end: t + 60, canonicalValue: 41.85))
        #expect(a != ContentIdentity.sample(type: "activeEnergyBurned", source: "Phone", start: t, end: t + 60, canonicalValue: 10 * 4.184))
        #expect(a != ContentIdentity.sample(type: "activeEnergyBurned", source: "Watch", start: t, end: t + 61, canonicalValue: 10 * 4.184))
        // Length prefixes: moving a character from one field to the next changes the UUID.
        #expect(ContentIdentity.workout(activity: "ab", source: "c", start: t, end: t) != ContentIdentity.workout(activity: "a", source: "bc", start: t, end: t))
    }

    @Test("heartbeat lists: one heart-rate sample per run of beats, RR ticks from the beat times, midnight crossed, a gap splits")
    func heartbeatLists() throws {
        let dir = try ExportFixture.directory()
        let expected = try #require(try ExportFixture.summary(dir)["hrv"] as? [[String: Any]])
        let reading = try ExportFixture.read(dir.appendingPathComponent("export.xml").path)
        let sdnn = reading.samples.filter { $0.type == .heartRateVariabilitySDNN }
        let beats = reading.samples.filter { $0.metadata.user["HGHeartbeatsOf"] != nil }
        #expect(reading.report.heartbeatSamples == beats.count)
        for e in expected {
            let start = e["start"] as! Double
            let owner = try #require(sdnn.first { $0.startDate.timeIntervalSince1970 == start })
            let runs = beats.filter { $0.metadata.user["HGHeartbeatsOf"] == .string(owner.uuid.uuidString.lowercased()) }
            let want = (e["runs"] as! [[Int]]).filter { !$0.isEmpty }
            #expect(runs.map { $0.rrIntervals?.ticks.map(Int.init) ?? [] } == want, "SDNN at \(start)")
            #expect(runs.allSatisfy { $0.type == .heartRate && $0.rrIntervals?.precededByGap == true && $0.device == owner.device && $0.source == owner.source })
            let first = try #require(runs.first)
            #expect(abs(first.startDate.timeIntervalSince1970 - (e["firstBeat"] as! Double)) < 0.0005, "first beat of \(start)")
            for r in runs {
                let ticks = r.rrIntervals!.ticks
                // The last interval ends at the sample's end (docs/data-model.md).
                let span = Double(ticks.reduce(0) { $0 + Int($1) }) / 1024
                #expect(abs(r.duration - span) < 0.005 * Double(ticks.count))
                #expect(abs(r.canonicalValue - 60 * 1024 * Double(ticks.count) / Double(ticks.reduce(0) { $0 + Int($1) })) < 1e-9)
            }
        }
        // The third list has a gap: two runs.
        #expect((expected[2]["runs"] as! [[Int]]).count == 2)
        // Off: no heart-rate samples from the lists.
        let off = try ExportFixture.read(dir.appendingPathComponent("export.xml").path, options: .init(heartbeatSamples: false))
        #expect(off.report.heartbeatSamples == 0 && off.samples.count == reading.samples.count - beats.count)
    }

    @Test("beat clock times: 12-hour and 24-hour forms, fractions, NBSP before PM; nonsense refused")
    func clockTimes() {
        let cases: [(String, Int64?)] = [("7:31:21.40 PM", ((19 * 60 + 31) * 60 + 21) * 1000 + 400), ("12:00:00.05 AM", 50), ("12:59:59.99 PM", ((12 * 60 + 59) * 60 + 59) * 1000 + 990),
                                         ("19:31:21.4", ((19 * 60 + 31) * 60 + 21) * 1000 + 400), ("7:31:21,40\u{202F}pm", ((19 * 60 + 31) * 60 + 21) * 1000 + 400),
                                         ("7:31:21 a.m.", ((7 * 60 + 31) * 60 + 21) * 1000), ("13:00:00 PM", nil), ("7:61:00 PM", nil), ("7:31", nil), ("", nil)]
        for (text, want) in cases {
            #expect(ExportValues.clockMilliseconds(ReaderTests.bytes(text)) == want, "\(text)")
        }
    }

    @Test("workouts: activity, instants, source, device; pause/resume kept when they alternate; other events, statistics, routes kept aside")
    func workouts() throws {
        let dir = try ExportFixture.directory()
        let expected = try #require(try ExportFixture.summary(dir)["workouts"] as? [[String: Any]])
        let reading = try ExportFixture.read(dir.appendingPathComponent("export.xml").path)
        #expect(reading.workouts.count == expected.count && reading.report.workouts == expected.count)
        for (e, w) in zip(expected, reading.workouts) {
            #expect(w.workout.activity.rawValue == e["activity"] as? String && w.activityTypeName == "HKWorkoutActivityType" + (e["activity"] as! String).prefix(1).uppercased() + (e["activity"] as! String).dropFirst())
            #expect(w.workout.start.timeIntervalSince1970 == e["start"] as? Double && w.workout.end?.timeIntervalSince1970 == e["end"] as? Double)
            #expect(w.workout.source.name == e["source"] as? String && w.line == e["line"] as? Int)
            let events = (e["events"] as! [[Any]]).map { "\($0[0] as! String)@\(Int($0[1] as! Double))" }
            #expect(w.workout.events.map { "\($0.kind.rawValue)@\(Int($0.date.timeIntervalSince1970))" } == events)
            #expect(w.otherEvents.map(\.type) == ["HKWorkoutEventTypeSegment", "HKWorkoutEventTypePause", "HKWorkoutEventTypeMotionPaused",
                                                  "HKWorkoutEventTypeMotionResumed", "HKWorkoutEventTypeLap", "HKWorkoutEventTypeResume",
                                                  "HKWorkoutEventTypeMarker"])
            #expect(w.otherEvents.first?.duration == 30)
            #expect(w.workout.activeDuration() == 39 * 60 && w.duration == 40.5 * 60)
            #expect(w.routeFiles == e["routes"] as? [String])
            #expect(w.metadata == e["metadata"] as? [String: String])
            let stats = e["statistics"] as! [String: [String: Any]]
            #expect(Set(w.statistics.map(\.type)) == Set(stats.keys))
            for s in w.statistics {
                let want = stats[s.type]!
                if let sum = want["sum"] as? Double { #expect(s.sum == Quantity(sum, try HealthUnit(want["unit"] as! String)), "\(s.type)") }
                if let avg = want["average"] as? Double {
                    #expect(s.average?.value == avg && s.minimum?.value == want["minimum"] as? Double && s.maximum?.value == want["maximum"] as? Double)
                }
            }
            #expect(w.statistics.first?.quantityType == .activeEnergyBurned)
        }
        #expect(reading.workouts[0].device?.hardwareVersion == "Watch6,1" && reading.workouts[1].device == nil)
    }
}
