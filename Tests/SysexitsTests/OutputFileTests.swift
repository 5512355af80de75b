import Foundation
@testable import Sysexits
import Testing

/// `OutputFile`: written whole or not at all. An output dropped before `finish()` (a failed
/// export) leaves the old file as it was and no temporary file beside it.
@Suite struct OutputFileTests {
    @Test("finish replaces the file; an output dropped unfinished leaves the old file and no temporary")
    func allOrNothing() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("outputfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("export.json").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        do {
            var out = try OutputFile(path: path, what: "the export")
            try out.write(String(repeating: "x", count: 1 << 19))   // past one block: bytes reach the temporary file
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).count == 2)
            _ = consume out   // dropped unfinished, as when a write throws
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["export.json"])
        var out = try OutputFile(path: path, what: "the export")
        try out.write("new")
        try out.finish()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["export.json"])
    }
}
