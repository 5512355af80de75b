@testable import AppleHealthExport
import Foundation
import HealthModel
import Testing

/// The scanner's edges (a tag split across any two reads, the DOCTYPE's internal subset,
/// entities), device texts, numbers, and every error's sentence.
@Suite("Apple Health export: scanner edges, device texts, numbers, malformed and wrong inputs")
struct ScannerTests {
    static func temp(_ name: String, _ text: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ah-\(UUID().uuidString)-\(name)")
        try Data(text.utf8).write(to: url)
        return url
    }

    static let prologue = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!-- a comment with a quote ' and a > and a ] -->
        <!ATTLIST Record value CDATA "a default with > and ]> inside">
        <!ENTITY % odd '<!-- not a comment -->'>
        ]>
        <HealthData locale="de_DE">

        """

    static let records = """
         <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="A &amp; B&#39;s &#x2764; &lt;Watch&gt; &quot;x&quot; &apos;y&apos; &unknown;" unit="count/min" startDate="2023-01-05 07:31:21 +0100" endDate="2023-01-05 07:31:21 +0100" value="72">
          <MetadataEntry key="multi
        line" value="tab\there &#10; kept"/>
         </Record><Record type='HKQuantityTypeIdentifierStepCount' sourceName='S' unit='count' startDate='2023-01-05 07:31:21 +0100' endDate='2023-01-05 07:41:21 +0100' value='10'/>
        <!-- <Record type="HKQuantityTypeIdentifierStepCount"/> --><![CDATA[ <Record/> ]]><?pi <Record/> ?>
        </HealthData>

        """

    @Test("the same records whatever the read size: a tag, an entity or the DOCTYPE split across reads of 1 to 13 bytes")
    func splitReads() throws {
        let url = try Self.temp("split.xml", Self.prologue + Self.records)
        defer { try? FileManager.default.removeItem(at: url) }
        let whole = try ExportFixture.read(url.path)
        #expect(whole.samples.count == 2 && whole.report.locale == "de_DE")
        let hr = try #require(whole.samples.first)
        #expect(hr.source.name == "A & B's \u{2764} <Watch> \"x\" 'y' &unknown;")
        #expect(hr.metadata.user == ["multi line": .string("tab here \n kept")])
        #expect(whole.report.lines == 13)
        for capacity in 1...13 {
            let stream = try XMLByteStream(path: url.path, input: .xml)
            let parser = ExportParser(scanner: XMLScanner(source: stream, path: url.path, initialCapacity: capacity), path: url.path,
                                      options: .init(), totalBytes: nil)
            var samples: [QuantitySample] = []
            try parser.run { samples += $0.samples }
            #expect(samples == whole.samples, "capacity \(capacity)")
        }
    }

    @Test("malformed XML stops the reading with its line; the samples before it were delivered")
    func malformed() throws {
        let cases: [(String, Int, String)] = [
            (Self.prologue + Self.records.prefix(200), 8, "ends inside a tag"),
            (Self.prologue + Self.records.replacingOccurrences(of: "</HealthData>", with: ""), 14, "still open"),
            (Self.prologue + " <Record type=\"x\" value=72/>\n</HealthData>", 8, "not in quotes"),
            (Self.prologue + " <Record type=\"x\"></Workout>\n</HealthData>", 8, "does not close"),
            (Self.prologue + " <Record type=\"x\" value>\n</HealthData>", 8, "has no '='"),
            (Self.prologue + "</HealthData>\n<Record/>", 9, "after the end of <HealthData>"),
        ]
        for (text, line, phrase) in cases {
            let url = try Self.temp("bad.xml", text)
            defer { try? FileManager.default.removeItem(at: url) }
            var report = AppleHealthExportReport()
            var delivered = 0
            do {
                try AppleHealthExportReader(path: url.path).read(into: &report) { delivered += $0.samples.count }
                Issue.record("\(phrase): no error")
            } catch let e as AppleHealthExportError {
                guard case .malformedXML(_, let l, let reason) = e else { Issue.record("\(e)"); continue }
                #expect(l == line && reason.contains(phrase), "\(e)")
                #expect(e.description.contains("line \(l): the XML is malformed") && e.description.contains("export again"))
            }
            #expect(!report.complete)
            if phrase == "still open" { #expect(delivered == 2 && report.samples["heartRate"] == 1) }
        }
    }

    @Test("wrong inputs: missing file, a directory, not an export, another XML, a zip without export.xml, a damaged zip")
    func wrongInputs() throws {
        func error(_ path: String) -> AppleHealthExportError? {
            do { _ = try AppleHealthExportReader(path: path).read { _ in }; return nil } catch { return error as? AppleHealthExportError }
        }
        #expect(error("/nonexistent/export.zip") == .fileMissing(path: "/nonexistent/export.zip"))
        #expect(error("/tmp").map { "\($0)" }?.contains("is a directory") == true)
        let text = try Self.temp("notes.txt", "hello")
        let cda = try Self.temp("export_cda.xml", "<?xml version=\"1.0\"?>\n<ClinicalDocument/>\n")
        let damaged = try Self.temp("damaged.zip", "PK\u{3}\u{4}not really a zip")
        defer { for u in [text, cda, damaged] { try? FileManager.default.removeItem(at: u) } }
        #expect(error(text.path).map { "\($0)" }?.contains("is neither a zip archive nor XML") == true)
        #expect(error(cda.path).map { "\($0)" }?.contains("its root element is <ClinicalDocument>, not <HealthData>") == true)
        #expect(error(damaged.path).map { "\($0)" }?.contains("starts like a zip archive but has no end of central directory") == true)
        // A zip with other files only.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ah-zip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let zip = dir.appendingPathComponent("other.zip")
        let r = try runPython(["-c", "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1],'w'); z.writestr('apple_health_export/export_cda.xml','<a/>'); z.writestr('notes/export.xml.bak','x'); z.close()", zip.path])
        #expect(r == 0)
        let e = try #require(error(zip.path))
        #expect(e == .noExportXML(path: zip.path, entries: ["apple_health_export/export_cda.xml", "notes/export.xml.bak"]))
        #expect("\(e)".contains("holds no apple_health_export/export.xml (it has apple_health_export/export_cda.xml, notes/export.xml.bak)"))
    }

    @Test("the export entry: apple_health_export/export.xml, else the shortest …/export.xml, never __MACOSX or export_cda.xml")
    func exportEntry() {
        #expect(ZipDirectory.exportEntry([.init(name: "__MACOSX/apple_health_export/export.xml", uncompressedSize: 1),
                                          .init(name: "x/y/export.xml", uncompressedSize: 2),
                                          .init(name: "apple_health_export/export_cda.xml", uncompressedSize: 3)])?.name == "x/y/export.xml")
        #expect(ZipDirectory.exportEntry([.init(name: "export.xml", uncompressedSize: 1),
                                          .init(name: "apple_health_export/export.xml", uncompressedSize: 2)])?.name == "apple_health_export/export.xml")
        #expect(ZipDirectory.exportEntry([.init(name: "apple_health_export/export_cda.xml", uncompressedSize: 1)]) == nil)
    }

    @Test("device texts: fields with commas and colons, missing fields, unknown keys, no address, nothing")
    func devices() {
        let d = ExportValues.device("<<HKDevice: 0x283b4c0a0>, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, software:8.5>")
        #expect(d == Device(name: "Apple Watch", manufacturer: "Apple Inc.", model: "Watch", hardwareVersion: "Watch6,1", softwareVersion: "8.5"))
        #expect(ExportValues.device("<<HKDevice: 0x1>, name:Body+, manufacturer:Withings, Inc., localIdentifier:00:24:e4:aa:bb:cc, firmware:1.2, UDIDeviceIdentifier:(01)123>")
                == Device(name: "Body+", manufacturer: "Withings, Inc.", firmwareVersion: "1.2", localIdentifier: "00:24:e4:aa:bb:cc", udiDeviceIdentifier: "(01)123"))
        #expect(ExportValues.device("<<HKDevice: 0x1>, name:Strap, colour:red, model:H10>") == Device(name: "Strap, colour:red", model: "H10"))
        #expect(ExportValues.device("name:Scale, model:>") == Device(name: "Scale"))
        #expect(ExportValues.device("<<HKDevice: 0x1>>") == nil && ExportValues.device("") == nil && ExportValues.device("garbage") == nil)
    }

    @Test("numbers: integers, decimals, signs, exponents exactly as Double parses them; non-numbers refused")
    func numbers() {
        for text in ["72", "0.0123", "-5", "+3.5", "1e3", "123456789.123456789", "0.1", "98.60000000000001", "5."] {
            #expect(ExportValues.number(ReaderTests.bytes(text)) == Double(text), "\(text)")
        }
        for text in ["", "-", ".", "seventy", "1.2.3", "nan", "inf", "1,5", "0x10", "1e-400", "1e400", "infinity"] {
            #expect(ExportValues.number(ReaderTests.bytes(text)) == nil, "\(text)")
            #expect(ExportValues.decimal(text) == nil, "\(text) (an attribute with an entity)")
        }
        #expect(ExportValues.number(ReaderTests.bytes("-0"))?.sign == .plus && ExportValues.number(ReaderTests.bytes("-0.0e1"))?.sign == .plus)
    }
}

/// Runs `python3 arguments…`; its exit status.
func runPython(_ arguments: [String]) throws -> Int32 {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3"] + arguments
    try p.run()
    p.waitUntilExit()
    return p.terminationStatus
}
