@testable import AppleHealthExport
import Foundation
import HealthModel
import Testing

/// export.zip read in-process (`ZipEntryInflater`: zlib on a thread of its own): stored and
/// deflated entries over many chunks read as their XML does, and every way an entry can be
/// damaged is an error naming it, never a short document.
@Suite("Apple Health export.zip: inflated on its own thread, damage detected")
struct ZipTests {
    /// A directory with `export.xml` (a few MB: more chunks than the inflater's queue holds) and
    /// zips of it made by Python's zipfile (`deflated.zip`, `stored.zip`, `bzip2.zip`) and by
    /// hand (`zip64.zip`).
    static let fixture = Result { () throws -> URL in
        let dir = try ExportFixture.generate(["--big", "6000000"])
        let script = """
            import sys, zipfile
            d = sys.argv[1]
            for name, method in (("deflated", zipfile.ZIP_DEFLATED), ("stored", zipfile.ZIP_STORED), ("bzip2", zipfile.ZIP_BZIP2)):
                with zipfile.ZipFile(f"{d}/{name}.zip", "w", compression=method) as z:
                    z.write(f"{d}/export.xml", "apple_health_export/export.xml")
            # zip64.zip: what an export over 4 GiB has, written by hand for a small one: both
            # sizes and the local header's offset as 0xFFFFFFFF with a Zip64 extra field, and the
            # directory found through the Zip64 end record and its locator.
            import struct, zlib
            xml = open(f"{d}/export.xml", "rb").read()
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            data = c.compress(xml) + c.flush()
            crc, name, big = zlib.crc32(xml), b"apple_health_export/export.xml", 0xFFFFFFFF
            lextra = struct.pack("<HHQQ", 1, 16, len(xml), len(data))
            local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 8, 0, 0, crc, big, big, len(name), len(lextra)) + name + lextra
            cextra = struct.pack("<HHQQQ", 1, 24, len(xml), len(data), 0)
            central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 8, 0, 0, crc, big, big, len(name), len(cextra), 0, 0, 0, 0, big) + name + cextra
            at = len(local) + len(data)
            end64 = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, 1, 1, len(central), at)
            locator = struct.pack("<IIQI", 0x07064B50, 0, at + len(central), 1)
            end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, big, big, 0)
            open(f"{d}/zip64.zip", "wb").write(local + data + central + end64 + locator + end)
            """
        guard try runPython(["-c", script, dir.path]) == 0 else { throw CocoaError(.fileWriteUnknown) }
        return dir
    }

    /// A copy of `deflated.zip` with `patch` applied to its bytes, given the entry as the
    /// central directory names it and the offset of its central directory record.
    static func damaged(_ tag: String, _ patch: (inout [UInt8], ZipDirectory.Entry, Int) -> Void) throws -> String {
        let dir = try fixture.get()
        var bytes = [UInt8](try Data(contentsOf: dir.appendingPathComponent("deflated.zip")))
        let fd = open(dir.appendingPathComponent("deflated.zip").path, O_RDONLY)
        defer { close(fd) }
        let entries = try ZipDirectory.entries(fd: fd, size: Int64(bytes.count), path: "deflated.zip")
        let entry = try #require(entries.first)
        var central = bytes.count - 4
        while central > 0, bytes[central..<(central + 4)] != [0x50, 0x4B, 0x01, 0x02] { central -= 1 }
        try #require(central > 0, "no central directory record")
        patch(&bytes, entry, central)
        let out = dir.appendingPathComponent("\(tag).zip")
        try Data(bytes).write(to: out)
        return out.path
    }

    static func error(_ path: String) -> AppleHealthExportError? {
        do { _ = try AppleHealthExportReader(path: path).read { _ in }; return nil } catch { return error as? AppleHealthExportError }
    }

    @Test("deflated, stored and Zip64 entries read as their XML does, over more chunks than the queue holds")
    func storedAndDeflated() throws {
        let dir = try Self.fixture.get()
        let xml = try ExportFixture.read(dir.appendingPathComponent("export.xml").path)
        #expect(xml.report.bytesRead > Int64(5 * ZipEntryInflater.chunkBytes) && xml.samples.count > 10_000)
        for name in ["deflated", "stored", "zip64"] {
            let zip = try ExportFixture.read(dir.appendingPathComponent("\(name).zip").path)
            #expect(zip.samples == xml.samples && zip.workouts == xml.workouts, "\(name)")
            #expect(zip.report.bytesRead == xml.report.bytesRead && zip.report.complete, "\(name)")
        }
    }

    @Test("damage: wrong CRC-32, data cut short, a flipped byte, encryption, bzip2: each an error naming why")
    func damage() throws {
        // The central directory's CRC-32 (offset 16 of its record) off by one.
        let crc = try Self.damaged("crc") { b, _, c in b[c + 16] ^= 1 }
        #expect(Self.error(crc).map { "\($0)" }?.contains("the CRC-32 of apple_health_export/export.xml does not match") == true)
        // The compressed size (offset 20) halved: the deflate stream has not ended where the data does.
        let short = try Self.damaged("short") { b, e, c in
            let half = UInt32(e.compressedSize / 2)
            for k in 0..<4 { b[c + 20 + k] = UInt8(truncatingIfNeeded: half >> (8 * UInt32(k))) }
        }
        #expect(Self.error(short).map { "\($0)" }?.contains("ends before its last byte") == true)
        // Bytes in the middle of the compressed data scrambled: zlib's error or a wrong CRC.
        let flipped = try Self.damaged("flipped") { b, e, _ in
            let middle = Int(e.localHeaderOffset) + 30 + "apple_health_export/export.xml".utf8.count + Int(e.compressedSize / 2)
            for k in 0..<64 { b[middle + k] ^= 0x5A }
        }
        let f = try #require(Self.error(flipped))
        guard case .zipUnreadable = f else { Issue.record("\(f)"); return }
        #expect("\(f)".contains("is damaged (zlib:") || "\(f)".contains("CRC-32") || "\(f)".contains("decompresses to"), "\(f)")
        #expect("\(f)".hasSuffix("or unzip it with another tool and give the path of apple_health_export/export.xml."))
        // The encryption flag (bit 0 of the flags at offset 8).
        let encrypted = try Self.damaged("encrypted") { b, _, c in b[c + 8] |= 1 }
        #expect(Self.error(encrypted) == .zipUnreadable(path: encrypted, reason: "its apple_health_export/export.xml is encrypted"))
        // A compression this reader lacks.
        let bzip2 = try Self.fixture.get().appendingPathComponent("bzip2.zip").path
        #expect(Self.error(bzip2).map { "\($0)" }?.contains("is compressed with method 12, not deflate (8) or stored (0)") == true)
    }

    /// Until 2026-11-29 a zip was read from `unzip`'s pipe, and `close()` closed that number by
    /// hand while the pipe's `FileHandle` closed it again when the stream was freed: if anything
    /// had been given the number in between (SQLite's temporary file, on the import's saving
    /// thread) it was closed under it. The inflating thread now owns its own descriptor and
    /// `close()` waits for it: a file opened right after `close()` must still be open after the
    /// stream is gone, whether the reading stopped early or at the end.
    @Test("closing a zip's stream, early or after its last byte, stops its thread and closes its file once", .timeLimit(.minutes(1)))
    func closeStopsTheThread() throws {
        let dir = try Self.fixture.get()
        for stopAfter in [0, 1, 4 * ZipEntryInflater.chunkBytes, Int.max] {
            var stream: XMLByteStream? = try XMLByteStream(path: dir.appendingPathComponent("deflated.zip").path,
                                                            input: .zip(entry: "apple_health_export/export.xml"))
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 8)
            defer { buffer.deallocate() }
            var read = 0
            while read < stopAfter {
                let n = try stream!.read(into: buffer, count: 1 << 16)
                if n == 0 { break }
                read += n
            }
            if stopAfter == .max { try stream!.finish() }
            stream!.close()
            let mine = open("/dev/null", O_RDONLY | O_CLOEXEC)
            try #require(mine >= 0)
            defer { close(mine) }
            stream = nil
            #expect(fcntl(mine, F_GETFD) >= 0, "descriptor \(mine), opened after the stream was closed, was closed by the stream (stopped after \(stopAfter))")
        }
    }
}
