import CZlib
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The zip's central directory, read for its entries (Zip64 included): enough to find
/// `…/export.xml`, know its uncompressed size for progress, and where its data starts.
enum ZipDirectory {
    struct Entry: Equatable {
        var name: String
        var uncompressedSize: Int64
        var compressedSize: Int64 = 0
        /// 0 stored, 8 deflate; anything else is refused when read.
        var method: Int = 8
        /// General-purpose flags; bit 0 is encryption.
        var flags: Int = 0
        var crc32: UInt32 = 0
        /// Where the entry's local header starts.
        var localHeaderOffset: Int64 = 0
    }

    /// `count` bytes at `offset` of `fd` (of `size` bytes), nil when they are not all there.
    static func readAt(_ fd: Int32, size: Int64, _ offset: Int64, _ count: Int) -> [UInt8]? {
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

    /// The little-endian integer of `width` bytes at `at`.
    static func le(_ b: [UInt8], _ at: Int, _ width: Int) -> Int64 {
        var v: UInt64 = 0
        for k in (0..<width).reversed() { v = v << 8 | UInt64(b[at + k]) }
        return Int64(bitPattern: v)
    }

    static func damaged(_ path: String, _ why: String) -> AppleHealthExportError {
        .notAnExport(path: path, reason: "it starts like a zip archive but \(why) (a partial download?)")
    }

    /// The entries of the zip open as `fd` of `size` bytes; throws when it has no readable directory.
    static func entries(fd: Int32, size: Int64, path: String) throws(AppleHealthExportError) -> [Entry] {
        func readAt(_ offset: Int64, _ count: Int) -> [UInt8]? { Self.readAt(fd, size: size, offset, count) }
        // End of central directory: 22 bytes plus a comment of up to 65535, at the end.
        let tailCount = Int(min(size, 22 + 65_535))
        guard let tail = readAt(size - Int64(tailCount), tailCount) else { throw damaged(path, "its end cannot be read") }
        var eocd = -1
        var i = tail.count - 22
        while i >= 0 {
            if tail[i] == 0x50, tail[i + 1] == 0x4B, tail[i + 2] == 0x05, tail[i + 3] == 0x06 { eocd = i; break }
            i -= 1
        }
        guard eocd >= 0 else { throw damaged(path, "has no end of central directory") }
        var count = le(tail, eocd + 10, 2)
        var dirSize = le(tail, eocd + 12, 4)
        var dirOffset = le(tail, eocd + 16, 4)
        if dirOffset == 0xFFFF_FFFF || count == 0xFFFF || dirSize == 0xFFFF_FFFF {
            // Zip64: the locator just before the end record points at the Zip64 end record.
            let locatorAt = size - Int64(tailCount) + Int64(eocd) - 20
            guard let loc = readAt(locatorAt, 20), loc[0] == 0x50, loc[1] == 0x4B, loc[2] == 0x06, loc[3] == 0x07,
                  let rec = readAt(le(loc, 8, 8), 56), rec[0] == 0x50, rec[1] == 0x4B, rec[2] == 0x06, rec[3] == 0x06
            else { throw damaged(path, "its Zip64 directory cannot be found") }
            count = le(rec, 32, 8)
            dirSize = le(rec, 40, 8)
            dirOffset = le(rec, 48, 8)
        }
        guard dirSize <= 256 << 20, let dir = readAt(dirOffset, Int(dirSize)) else { throw damaged(path, "its central directory cannot be read") }
        var out: [Entry] = []
        var at = 0
        for _ in 0..<count {
            guard at + 46 <= dir.count, dir[at] == 0x50, dir[at + 1] == 0x4B, dir[at + 2] == 0x01, dir[at + 3] == 0x02 else {
                throw damaged(path, "its central directory is damaged")
            }
            let nameCount = Int(le(dir, at + 28, 2)), extraCount = Int(le(dir, at + 30, 2)), commentCount = Int(le(dir, at + 32, 2))
            guard at + 46 + nameCount + extraCount <= dir.count else { throw damaged(path, "its central directory is damaged") }
            var entry = Entry(name: String(decoding: dir[(at + 46)..<(at + 46 + nameCount)], as: UTF8.self),
                              uncompressedSize: le(dir, at + 24, 4), compressedSize: le(dir, at + 20, 4),
                              method: Int(le(dir, at + 10, 2)), flags: Int(le(dir, at + 8, 2)),
                              crc32: UInt32(le(dir, at + 16, 4)), localHeaderOffset: le(dir, at + 42, 4))
            if entry.uncompressedSize == 0xFFFF_FFFF || entry.compressedSize == 0xFFFF_FFFF || entry.localHeaderOffset == 0xFFFF_FFFF {
                // The Zip64 extra field (0x0001) holds, in this order, those of the uncompressed
                // size, the compressed size and the local header's offset that did not fit.
                var e = at + 46 + nameCount
                let extraEnd = e + extraCount
                while e + 4 <= extraEnd {
                    let id = le(dir, e, 2), n = Int(le(dir, e + 2, 2))
                    if id == 1 {
                        var field = e + 4
                        let end = min(e + 4 + n, extraEnd)
                        func next(_ value: inout Int64) {
                            guard value == 0xFFFF_FFFF, field + 8 <= end else { return }
                            value = le(dir, field, 8)
                            field += 8
                        }
                        next(&entry.uncompressedSize)
                        next(&entry.compressedSize)
                        next(&entry.localHeaderOffset)
                        break
                    }
                    e += 4 + n
                }
            }
            out.append(entry)
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

    private static func rank(_ e: Entry) -> Int { e.name == "apple_health_export/export.xml" ? 0 : 1 }
}

/// One zip entry decompressed on a thread of its own (zlib's raw inflate, or a copy for a stored
/// entry) into chunks of 1 MiB that the parsing thread takes in order: the decompression runs
/// on the other core while the parser works, as `unzip -p` in a child process did before, at
/// about a third of its CPU (docs/apple-health.md, "Streaming design"). At the end the CRC-32 and
/// the size are checked against the directory's, so a damaged entry is an error, never a short
/// document.
///
/// Thread rules: the fields under "guarded by `condition`" are touched only with `condition`
/// locked; the inflating thread owns `fd`, the zlib stream and the input buffer.
final class ZipEntryInflater: @unchecked Sendable {
    static let chunkBytes = 1 << 20
    private static let queueDepth = 3
    private static let inputBytes = 256 << 10

    private let path: String
    private let entry: ZipDirectory.Entry
    private let fd: Int32
    private let dataStart: Int64

    private let condition = NSCondition()
    // Guarded by `condition`:
    private var ready: [(bytes: [UInt8], count: Int)] = []
    private var spare: [[UInt8]] = []
    private var failure: AppleHealthExportError?
    private var ended = false
    private var cancelled = false
    private var threadDone = false

    /// Opens `path` again and checks the entry's local header; throws when the entry cannot be
    /// read (encrypted, a compression this reader lacks, its data cut off).
    init(path: String, entry: ZipDirectory.Entry) throws(AppleHealthExportError) {
        self.path = path
        self.entry = entry
        guard entry.flags & 1 == 0 else {
            throw .zipUnreadable(path: path, reason: "its \(entry.name) is encrypted")
        }
        guard entry.method == 0 || entry.method == 8 else {
            throw .zipUnreadable(path: path, reason: "its \(entry.name) is compressed with method \(entry.method), not deflate (8) or stored (0), which this importer reads")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        var st = stat()
        let size: Int64 = fstat(fd, &st) == 0 ? Int64(st.st_size) : 0
        guard let local = ZipDirectory.readAt(fd, size: size, entry.localHeaderOffset, 30),
              local[0] == 0x50, local[1] == 0x4B, local[2] == 0x03, local[3] == 0x04 else {
            Glibc.close(fd)
            throw ZipDirectory.damaged(path, "the local header of \(entry.name) is missing")
        }
        let start = entry.localHeaderOffset + 30 + ZipDirectory.le(local, 26, 2) + ZipDirectory.le(local, 28, 2)
        guard start + entry.compressedSize <= size else {
            Glibc.close(fd)
            throw ZipDirectory.damaged(path, "the data of \(entry.name) is cut off")
        }
        self.fd = fd
        dataStart = start
        let thread = Thread { [self] in
            run()
            Glibc.close(fd)
            condition.lock()
            threadDone = true
            condition.broadcast()
            condition.unlock()
        }
        thread.name = "apple-health-inflate"
        thread.start()
    }

    /// The next chunk of decompressed bytes (`count` of `bytes` are data), nil after the last;
    /// blocks until the thread has one. Give the array back with ``recycle(_:)``.
    /// - Throws: the decompression's error, after every chunk before it was taken.
    func next() throws(AppleHealthExportError) -> (bytes: [UInt8], count: Int)? {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty && !ended && failure == nil { condition.wait() }
        if !ready.isEmpty {
            let chunk = ready.removeFirst()
            condition.broadcast()
            return chunk
        }
        if let failure { throw failure }
        return nil
    }

    /// Hands a chunk's array back for the thread to fill again.
    func recycle(_ bytes: [UInt8]) {
        condition.lock()
        spare.append(bytes)
        condition.unlock()
    }

    /// Stops the thread (the reading ended early) and waits until it has closed its file.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        while !threadDone { condition.wait() }
        ready.removeAll()
        spare.removeAll()
        condition.unlock()
    }

    /// An empty array of ``chunkBytes`` to fill, once the queue has room; nil when cancelled.
    private func room() -> [UInt8]? {
        condition.lock()
        defer { condition.unlock() }
        while ready.count >= Self.queueDepth && !cancelled { condition.wait() }
        if cancelled { return nil }
        return spare.popLast() ?? [UInt8](repeating: 0, count: Self.chunkBytes)
    }

    private func deliver(_ bytes: [UInt8], count: Int) {
        condition.lock()
        ready.append((bytes, count))
        condition.broadcast()
        condition.unlock()
    }

    private func finish(_ error: AppleHealthExportError?) {
        condition.lock()
        if let error { failure = error } else { ended = true }
        condition.broadcast()
        condition.unlock()
    }

    /// The thread's work: fill chunks until the entry ends, then check its CRC-32 and size.
    private func run() {
        var stream = z_stream()
        if entry.method == 8 {
            guard healthgate_inflate_init_raw(&stream) == Z_OK else {
                finish(.zipUnreadable(path: path, reason: "zlib could not start (out of memory?)"))
                return
            }
        }
        defer { if entry.method == 8 { inflateEnd(&stream) } }
        let input = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.inputBytes)
        defer { input.deallocate() }
        var offset = dataStart, left = entry.compressedSize
        var crc: UInt = crc32(0, nil, 0)
        var total: Int64 = 0
        var streamEnded = false
        /// Reads the next stretch of compressed data into `input`; its byte count, 0 at the end, nil on an error.
        func readInput(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int? {
            let want = Int(min(Int64(capacity), left))
            guard want > 0 else { return 0 }
            while true {
                let n = pread(fd, buffer, want, off_t(offset))
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return nil }
                offset += Int64(n)
                left -= Int64(n)
                return n
            }
        }
        while !streamEnded {
            guard var chunk = room() else { return }
            var produced = 0
            var problem: AppleHealthExportError?
            chunk.withUnsafeMutableBufferPointer { out in
                let base = out.baseAddress!
                while produced < out.count && !streamEnded {
                    if entry.method == 0 {
                        guard let n = readInput(into: base + produced, capacity: out.count - produced) else {
                            problem = .unreadable(path: path, reason: String(cString: strerror(errno))); return
                        }
                        if n == 0 { streamEnded = true } else { produced += n }
                        continue
                    }
                    if stream.avail_in == 0 {
                        guard let n = readInput(into: input, capacity: Self.inputBytes) else {
                            problem = .unreadable(path: path, reason: String(cString: strerror(errno))); return
                        }
                        stream.next_in = input
                        stream.avail_in = uInt(n)
                    }
                    stream.next_out = base + produced
                    stream.avail_out = uInt(out.count - produced)
                    let before = stream.avail_out, inputBefore = stream.avail_in
                    let rc = inflate(&stream, Z_NO_FLUSH)
                    produced += Int(before - stream.avail_out)
                    switch rc {
                    case Z_STREAM_END:
                        streamEnded = true
                    case Z_OK:
                        continue
                    case Z_BUF_ERROR where stream.avail_in < inputBefore || stream.avail_out < before:
                        continue   // progress was made; Z_BUF_ERROR without any is the end of the input
                    case Z_BUF_ERROR:
                        problem = .zipUnreadable(path: path, reason: "the compressed data of \(entry.name) ends before its last byte (the file is cut short)")
                        return
                    default:
                        let message = stream.msg.map { String(cString: $0) } ?? "error \(rc)"
                        problem = .zipUnreadable(path: path, reason: "the compressed data of \(entry.name) is damaged (zlib: \(message)) after \(total + Int64(produced)) bytes")
                        return
                    }
                }
                crc = crc32(crc, base, uInt(produced))
            }
            total += Int64(produced)
            if let problem { finish(problem); return }
            if produced > 0 { deliver(chunk, count: produced) } else { recycle(chunk) }
        }
        if total != entry.uncompressedSize {
            finish(.zipUnreadable(path: path, reason: "\(entry.name) decompresses to \(total) bytes, not the \(entry.uncompressedSize) its directory says"))
        } else if UInt32(truncatingIfNeeded: crc) != entry.crc32 {
            finish(.zipUnreadable(path: path, reason: "the CRC-32 of \(entry.name) does not match its directory's (the data is damaged)"))
        } else {
            finish(nil)
        }
    }
}
