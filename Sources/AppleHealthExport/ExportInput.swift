import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the path names: the XML itself, or a zip and the entry holding it.
public enum AppleHealthExportInput: Sendable, Hashable {
    /// `export.xml` read from the file itself.
    case xml
    /// `export.zip`: the entry (`apple_health_export/export.xml`) is streamed by `unzip -p`.
    case zip(entry: String)
}

/// The export's XML bytes as a stream: read(2) on the file, or on the pipe of an `unzip -p` child
/// that decompresses the entry (on the other core, while this one parses).
final class XMLByteStream {
    private let fd: Int32
    private let process: Process?
    /// For a zip: the pipe `fd` reads. Its `FileHandle` owns `fd` and closes it (on `close()` or
    /// when it is freed), so ``close()`` closes `fd` through it, never by number: a second
    /// close(2) of a number SQLite's connection has meanwhile been given closed SQLite's file
    /// (2026-11-29: "disk I/O error" while inserting, under load).
    private let stdoutPipe: Pipe?
    private let stderrPipe: Pipe?
    private let path: String
    private var closed = false

    /// Opens the XML of `path` (a zip: its `entry`).
    init(path: String, input: AppleHealthExportInput) throws(AppleHealthExportError) {
        self.path = path
        switch input {
        case .xml:
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw AppleHealthExportError.unreadable(path: path, reason: String(cString: strerror(errno))) }
            self.fd = fd
            process = nil
            stdoutPipe = nil
            stderrPipe = nil
        case .zip(let entry):
            guard let unzip = Self.unzipPath() else { throw AppleHealthExportError.unzipMissing }
            let p = Process()
            p.executableURL = URL(fileURLWithPath: unzip)
            // -p: the entry's bytes on stdout; -qq: nothing else. Names are wildcard patterns to
            // unzip: bracket the wildcard characters so the name matches only itself.
            p.arguments = ["-p", "-qq", path, Self.literalPattern(entry)]
            let out = Pipe(), err = Pipe()
            p.standardOutput = out
            p.standardError = err
            p.standardInput = FileHandle.nullDevice
            do { try p.run() } catch {
                throw AppleHealthExportError.unzipFailed(path: path, status: -1, message: "\(error)")
            }
            // Close our copies of the child's ends, so its exit is an end of file here.
            try? out.fileHandleForWriting.close()
            try? err.fileHandleForWriting.close()
            fd = out.fileHandleForReading.fileDescriptor
            // A 1 MiB pipe (F_SETPIPE_SZ; the default is 64 KiB): a read takes a whole chunk, and
            // unzip can run further ahead of the parser.
            _ = fcntl(fd, 1031 /* F_SETPIPE_SZ */, Int32(1 << 20))
            process = p
            stdoutPipe = out
            stderrPipe = err
        }
    }

    deinit { close() }

    /// Reads up to `count` bytes into `buffer`; 0 at the end.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(AppleHealthExportError) -> Int {
        while true {
            let n = Glibc.read(fd, buffer, count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw AppleHealthExportError.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// After the last byte: for a zip, waits for `unzip` and throws when it failed (a damaged
    /// archive ends its output early, which alone looks like a short document).
    func finish() throws(AppleHealthExportError) {
        guard let process, let stderrPipe else { return }
        let message = (try? stderrPipe.fileHandleForReading.readToEnd()).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
        process.waitUntilExit()
        let status = process.terminationStatus
        guard process.terminationReason == .exit, status == 0 else {
            throw AppleHealthExportError.unzipFailed(path: path, status: status,
                                                     message: message.split(separator: "\n").prefix(2).joined(separator: " ").trimmingCharacters(in: .whitespaces))
        }
    }

    /// Closes the stream; an `unzip` still running (reading stopped early) is ended.
    func close() {
        guard !closed else { return }
        closed = true
        if let process {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            try? stderrPipe?.fileHandleForReading.close()
        }
        if let stdoutPipe { try? stdoutPipe.fileHandleForReading.close() } else { Glibc.close(fd) }
    }

    /// `unzip` on `PATH`, nil when there is none.
    static func unzipPath() -> String? {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        return dirs.map { "\($0)/unzip" }.first { access($0, X_OK) == 0 }
    }

    /// `name` as an unzip pattern that matches only itself (`[`, `*`, `?` bracketed).
    static func literalPattern(_ name: String) -> String {
        var out = ""
        for c in name {
            switch c {
            case "[", "*", "?": out += "[\(c)]"
            default: out.append(c)
            }
        }
        return out
    }
}

/// The zip's central directory, read for the names and sizes of its entries (Zip64 included):
/// enough to find `…/export.xml` and know its uncompressed size for progress. Decompression is
/// `unzip`'s.
enum ZipDirectory {
    struct Entry: Equatable {
        var name: String
        var uncompressedSize: Int64
    }

    /// The entries of the zip open as `fd` of `size` bytes; throws when it has no readable directory.
    static func entries(fd: Int32, size: Int64, path: String) throws(AppleHealthExportError) -> [Entry] {
        func damaged(_ why: String) -> AppleHealthExportError {
            .notAnExport(path: path, reason: "it starts like a zip archive but \(why) (a partial download?)")
        }
        func readAt(_ offset: Int64, _ count: Int) -> [UInt8]? {
            guard offset >= 0, count >= 0, offset + Int64(count) <= size else { return nil }
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return nil }
                done += n
            }
            return bytes
        }
        func le(_ b: [UInt8], _ at: Int, _ width: Int) -> Int64 {
            var v: UInt64 = 0
            for k in (0..<width).reversed() { v = v << 8 | UInt64(b[at + k]) }
            return Int64(bitPattern: v)
        }
        // End of central directory: 22 bytes plus a comment of up to 65535, at the end.
        let tailCount = Int(min(size, 22 + 65_535))
        guard let tail = readAt(size - Int64(tailCount), tailCount) else { throw damaged("its end cannot be read") }
        var eocd = -1
        var i = tail.count - 22
        while i >= 0 {
            if tail[i] == 0x50, tail[i + 1] == 0x4B, tail[i + 2] == 0x05, tail[i + 3] == 0x06 { eocd = i; break }
            i -= 1
        }
        guard eocd >= 0 else { throw damaged("has no end of central directory") }
        var count = le(tail, eocd + 10, 2)
        var dirSize = le(tail, eocd + 12, 4)
        var dirOffset = le(tail, eocd + 16, 4)
        if dirOffset == 0xFFFF_FFFF || count == 0xFFFF || dirSize == 0xFFFF_FFFF {
            // Zip64: the locator just before the end record points at the Zip64 end record.
            let locatorAt = size - Int64(tailCount) + Int64(eocd) - 20
            guard let loc = readAt(locatorAt, 20), loc[0] == 0x50, loc[1] == 0x4B, loc[2] == 0x06, loc[3] == 0x07,
                  let rec = readAt(le(loc, 8, 8), 56), rec[0] == 0x50, rec[1] == 0x4B, rec[2] == 0x06, rec[3] == 0x06
            else { throw damaged("its Zip64 directory cannot be found") }
            count = le(rec, 32, 8)
            dirSize = le(rec, 40, 8)
            dirOffset = le(rec, 48, 8)
        }
        guard dirSize <= 256 << 20, let dir = readAt(dirOffset, Int(dirSize)) else { throw damaged("its central directory cannot be read") }
        var out: [Entry] = []
        var at = 0
        for _ in 0..<count {
            guard at + 46 <= dir.count, dir[at] == 0x50, dir[at + 1] == 0x4B, dir[at + 2] == 0x01, dir[at + 3] == 0x02 else {
                throw damaged("its central directory is damaged")
            }
            var uncompressed = le(dir, at + 24, 4)
            let nameCount = Int(le(dir, at + 28, 2)), extraCount = Int(le(dir, at + 30, 2)), commentCount = Int(le(dir, at + 32, 2))
            guard at + 46 + nameCount + extraCount <= dir.count else { throw damaged("its central directory is damaged") }
            let name = String(decoding: dir[(at + 46)..<(at + 46 + nameCount)], as: UTF8.self)
            if uncompressed == 0xFFFF_FFFF {
                // The Zip64 extra field (0x0001) holds the sizes the 32-bit fields could not.
                var e = at + 46 + nameCount
                let extraEnd = e + extraCount
                while e + 4 <= extraEnd {
                    let id = le(dir, e, 2), n = Int(le(dir, e + 2, 2))
                    if id == 1, n >= 8 { uncompressed = le(dir, e + 4, 8); break }
                    e += 4 + n
                }
            }
            out.append(Entry(name: name, uncompressedSize: uncompressed))
            at += 46 + nameCount + extraCount + commentCount
        }
        return out
    }

    /// The entry holding the export: `apple_health_export/export.xml`, else any `…/export.xml`
    /// (never `export_cda.xml`, never a `__MACOSX/` shadow), the shortest path first.
    static func exportEntry(_ entries: [Entry]) -> Entry? {
        entries.filter { ($0.name == "export.xml" || $0.name.hasSuffix("/export.xml")) && !$0.name.hasPrefix("__MACOSX/") }
            .min { (rank($0), $0.name.count, $0.name) < (rank($1), $1.name.count, $1.name) }
    }

    private static func rank(_ e: Entry) -> Int { e.name == "apple_health_export/export.xml" ? 0 : 1
    }
}
