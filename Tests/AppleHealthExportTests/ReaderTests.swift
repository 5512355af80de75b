@testable import AppleHealthExport
import Foundation
import HealthModel
import Testing

/// The reader against make_export.py's oracle: every record of a mapped type with its value in
/// the canonical unit, its exact instant, source, device and metadata; what is not imported,
/// counted; bad records skipped with their lines; correlations read once; zip and XML alike.
@Suite("Apple Health export: records, units, dates, devices, metadata and the report match the generator's oracle")
struct ReaderTests {
    static func records(_ r: ExportFixture.Reading) -> [QuantitySample] {
        r.samples.filter { $0.metadata.user["HGHeartbeatsOf"] == nil }
    }

    @Test("each mapped record, exactly as generated: type, value in the canonical unit, instants, source, device, metadata")
    func recordsMatchTheOracle() throws {
        let dir = try ExportFixture.directory()
        let summary = try ExportFixture.summary(dir)
        let reading = try ExportFixture.read(dir.appendingPathComponent("export.xml").path)
        let expected = try #require(summary["records"] as? [[String: Any]])
        let got = Self.records(reading)
        #expect(got.count == expected.count)
        func key(_ type: String, _ start: Double, _ end: Double, _ source: String, _ value: Double) -> String {
            "\(type) \(Int(start)) \(Int(end)) \(source) \(String(format: "%.6f", value))"
        }
        let byKey = Dictionary(got.map { (key($0.type.identifier, $0.startDate.timeIntervalSince1970, $0.endDate.timeIntervalSince1970,
                                               $0.source.name, $0.canonicalValue), $0) }, uniquingKeysWith: { a, _ in a })
        var perType: [String: Int] = [:]
        for e in expected {
            let type = e["type"] as! String, source = e["source"] as! String
            let k = key(type, e["start"] as! Double, e["end"] as! Double, source, e["value"] as! Double)
            perType[type, default: 0] += 1
            guard let s = byKey[k] else { Issue.record("line \(e["line"]!): no sample \(k)"); continue }
            #expect(abs(s.canonicalValue - (e["value"] as! Double)) <= 1e-9 * max(1, abs(s.canonicalValue)), "\(k)")
            #expect(s.quantity.unit.unitString == e["unit"] as? String, "\(k): unit kept as written")
            #expect(s.source.identifier == "apple-health:" + source && s.source.version == e["sourceVersion"] as? String, "\(k)")
            let d = e["device"] as? [String: String]
            let device = d.map { Device(name: $0["name"], manufacturer: $0["manufacturer"], model: $0["model"], hardwareVersion: $0["hardwareVersion"],
                                        softwareVersion: $0["softwareVersion"], localIdentifier: $0["localIdentifier"]) }
            #expect(s.device == device, "\(k): device \(String(describing: s.device))")
            let user = (e["metadata"] as? [String: String] ?? [:]).mapValues { MetadataValue.string($0) }
            #expect(s.metadata.user == user, "\(k): \(s.metadata.user)")
            #expect(s.metadata.heartRateMotionContext?.rawValue == e["motionContext"] as? Int, "\(k)")
            if let sync = e["sync"] as? [Any] {
                #expect(s.metadata.syncIdentifier == "apple-health:\(source)/\(sync[0])" && s.metadata.syncVersion == sync[1] as? Int)
            } else {
                #expect(s.metadata.syncIdentifier == nil)
            }
            #expect(s.metadata.wasUserEntered == e["wasUserEntered"] as? Bool, "\(k)")
        }
        #expect(reading.report.samples == perType)
        for t in ["heartRate", "restingHeartRate", "heartRateVariabilitySDNN", "stepCount", "activeEnergyBurned", "distanceWalkingRunning", "bodyMass"] {
            #expect((perType[t] ?? 0) >= 44, "\(t): every mapped type is generated")
        }
    }

    @Test("offsets are applied: +0530, -0330, +0545 and a record across Berlin's DST change keep their instants")
    func offsetsAndDST() throws {
        let reading = try ExportFixture.read(try ExportFixture.directory().appendingPathComponent("export.xml").path)
        // 2023-03-26 01:30 +0100 → 03:30 +0200: one hour, not two.
        let dst = try #require(reading.samples.first { $0.type == .stepCount && $0.canonicalValue == 1234 })
        #expect(dst.startDate.timeIntervalSince1970 == 1_679_790_600 && dst.duration == 3600)
        // 2023-01-05 07:31:21 UTC is 1672903881.
        let utc: Int64 = 1_672_903_881
        let cases: [(String, Int64, Int32)] = [("2023-01-05 07:31:21 +0530", utc - 19_800, 19_800), ("2023-01-05 07:31:21 -0330", utc + 12_600, -12_600),
                                               ("2023-01-05 07:31:21 +0545", utc - 20_700, 20_700), ("2023-01-05T07:31:21+01:00", utc - 3600, 3600),
                                               ("2023-01-05 07:31:21Z", utc, 0), ("2023-01-05 07:31:21 +0000", utc, 0)]
        for (text, seconds, offset) in cases {
            let i = try #require(ExportValues.instant(Self.bytes(text)), "\(text)")
            #expect(i.seconds == seconds && i.offset == offset, "\(text)")
        }
        // Without an offset a wall-clock time names no instant (it was taken as UTC until
        // 2026-11-29); an offset that moves it out of 0001–9999 in UTC is refused too.
        for bad in ["2023-02-29 07:31:21 +0100", "2023-01-05 24:00:00 +0100", "2023-01-05 07:31:21 +01", "2023-01-05", "2023-1-05 07:31:21 +0100",
                    "2023-01-05 07:31:21", "2023-01-05T07:31:21", "2023-01-05 07:31:21 ", "9999-12-31 23:59:59 -2359", "0001-01-01 00:00:00 +0100"] {
            #expect(ExportValues.instant(Self.bytes(bad)) == nil, "\(bad)")
        }
    }

    static func bytes(_ s: String) -> UnsafeBufferPointer<UInt8> {
        let b = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: s.utf8.count)   // leaked: a test's few bytes
        _ = b.initialize(from: s.utf8)
        return UnsafeBufferPointer(b)
    }

    @Test("the report: unknown types and other elements counted, correlation copies not read twice, Me, export date, locale")
    func report() throws {
        let dir = try ExportFixture.directory()
        let summary = try ExportFixture.summary(dir)
        let r = try ExportFixture.read(dir.appendingPathComponent("export.xml").path).report
        #expect(r.unknownRecordTypes == summary["unknownRecordTypes"] as? [String: Int])
        #expect(r.otherElements == summary["unknownElements"] as? [String: Int])
        #expect(r.correlationCopies == summary["correlationCopies"] as? Int)
        #expect(r.dateOfBirth == CalendarDay(year: 1990, month: 5, day: 17) && r.dateOfBirth?.description == "1990-05-17")
        #expect(r.characteristics["HKCharacteristicTypeIdentifierBiologicalSex"] == "HKBiologicalSexFemale")
        #expect(r.exportDate?.timeIntervalSince1970 == summary["exportDate"] as? Double)
        #expect(r.locale == "en_US" && r.complete)
        let size = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("export.xml").path)[.size] as? Int
        #expect(r.bytesRead == r.totalBytes && r.totalBytes == size.map(Int64.init))
    }

    @Test("bad records are skipped and reported with the line of their start tag and why")
    func badRecords() throws {
        let dir = try ExportFixture.directory()
        let expected = try #require(try ExportFixture.summary(dir)["bad"] as? [[String: Any]])
        let r = try ExportFixture.read(dir.appendingPathComponent("export.xml").path).report
        #expect(r.badRecordCount == expected.count)
        let why = ["unit": ["incompatible units", "is not a valid unit"], "value": ["is not a number"], "plausible": ["not plausible"],
                   "negative": ["cannot be negative"], "date": ["startDate '2023-02-30"], "order": ["starts ("]]
        for (e, got) in zip(expected, r.badRecords) {
            #expect(got.line == e["line"] as? Int && got.type == e["type"] as? String, "\(got)")
            let phrases = why[e["why"] as! String]!
            #expect(phrases.contains { got.reason.contains($0) }, "\(got)")
        }
        #expect(r.badRecords.first?.description.hasPrefix("export.xml:\(expected[0]["line"]!): skipped HKQuantityTypeIdentifierHeartRate: ") == true)
    }

    @Test("export.xml through a pipe (/dev/fd/N, as /dev/stdin or <(…) are): the same samples, workouts and bad-record lines as the file; a zip through a pipe is refused with what to do")
    func throughAPipe() throws {
        let dir = try ExportFixture.directory()
        let xml = try ExportFixture.read(dir.appendingPathComponent("export.xml").path)
        /// `file` (or its first `limit` bytes: within the pipe's buffer, so a reader that stops
        /// early never leaves the writer blocked or facing a closed pipe) through a pipe.
        func piped(_ file: String, limit: Int = .max) throws -> ExportFixture.Reading {
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            let data = try Data(contentsOf: dir.appendingPathComponent(file)).prefix(limit)
            let (readEnd, writeEnd) = (fds[0], fds[1])
            let writer = Thread {
                // Small writes: the reader's first read sees only part of the head.
                data.withUnsafeBytes { b in
                    var at = 0
                    while at < b.count {
                        let n = write(writeEnd, b.baseAddress! + at, min(7, b.count - at))
                        if n <= 0 { break }
                        at += n
                    }
                }
                close(writeEnd)
            }
            writer.start()
            defer {
                while !writer.isFinished { usleep(1_000) }
                close(readEnd)
            }
            return try ExportFixture.read("/dev/fd/\(readEnd)")
        }
        let p = try piped("export.xml")
        #expect(p.samples == xml.samples && p.workouts == xml.workouts, "\(p.samples.count) vs \(xml.samples.count)")
        #expect(p.report.badRecords.map(\.description) == xml.report.badRecords.map(\.description))
        #expect(p.report.complete && p.report.totalBytes == nil && p.report.bytesRead == xml.report.bytesRead)
        let e = #expect(throws: AppleHealthExportError.self) { _ = try piped("export.zip", limit: 4096) }
        #expect("\(e.map { "\($0)" } ?? "")".contains("a zip arriving through a pipe"), "\(String(describing: e))")
    }

    @Test("export.zip (its export.xml found beside export_cda.xml) gives the same samples and workouts as export.xml")
    func zipEqualsXML() throws {
        let dir = try ExportFixture.directory()
        let xml = try ExportFixture.read(dir.appendingPathComponent("export.xml").path)
        let zipReader = try AppleHealthExportReader(path: dir.appendingPathComponent("export.zip").path)
        #expect(zipReader.input == .zip(entry: "apple_health_export/export.xml"))
        #expect(zipReader.totalBytes == xml.report.totalBytes)
        let zip = try ExportFixture.read(dir.appendingPathComponent("export.zip").path)
        #expect(zip.samples == xml.samples && zip.workouts == xml.workouts)
        #expect(zip.report.bytesRead == xml.report.bytesRead && zip.report.badRecordCount == xml.report.badRecordCount && zip.report.complete)
    }

    @Test("batches hold at most the batch size; progress only grows and ends at the XML's size")
    func batchesAndProgress() throws {
        let dir = try ExportFixture.directory()
        let reader = try AppleHealthExportReader(path: dir.appendingPathComponent("export.xml").path,
                                                 options: .init(batchSize: 7, progressBytes: 4096))
        var sizes: [Int] = [], progress: [Int64] = []
        let report = try reader.read { b in
            sizes.append(b.samples.count)
            progress.append(b.bytesRead)
            #expect(b.totalBytes == reader.totalBytes)
        }
        #expect(sizes.allSatisfy { $0 <= 7 } && sizes.reduce(0, +) == report.sampleTotal)
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0 <= $1 } && progress.last == reader.totalBytes)
        // Stretches without samples (unknown types, workouts) still move the progress: empty batches.
        #expect(sizes.contains(0))
    }
}
