import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the path names: the XML itself, or a zip and the entry holding it.
public enum AppleHealthExportInput: Sendable, Hashable {
    /// `export.xml` read from the file itself.
    case xml
    /// `export.zip`: the entry (`apple_health_export/export.xml`) is decompressed as it is read (zlib).
    case zip(entry: String)
    /// `export.xml` arriving through a pipe or standard input (`-`): read once, its size unknown.
    case stream
}

/// A pipe's (or standard input's) descriptor and the bytes already taken from it to tell what it
/// holds: a pipe cannot be read again, so the stream starts with them.
final class PipeInput: @unchecked Sendable {
    // @unchecked: immutable after init; the descriptor is read by one stream, once.
    let fd: Int32
    let head: [UInt8]
    private let owned: Bool

    init(fd: Int32, head: [UInt8], owned: Bool) {
        self.fd = fd
        self.head = head
        self.owned = owned
    }

    deinit { if owned { Glibc.close(fd) } }
}

/// The export's XML bytes as a stream: read(2) on the file, or the chunks of a zip entry that
/// ``ZipEntryInflater`` decompresses on a thread of its own (on the other core, while this one parses).
final class XMLByteStream {
    private let path: String
    /// For the XML: the file (or the pipe). -1 for a zip.
    private let fd: Int32
    private let inflater: ZipEntryInflater?
    /// A pipe's first bytes, served before reading on, and the pipe (kept open while read).
    private var pending: ArraySlice<UInt8> = []
    private let pipe: PipeInput?
    /// The zip chunk being read, and how far.
    private var chunk: (bytes: [UInt8], count: Int)?
    private var chunkAt = 0
    private var closed = false

    /// Opens the XML of `path` (a zip: its `entry`; a stream: `pipe`, which must be given).
    init(path: String, input: AppleHealthExportInput, pipe: PipeInput? = nil) throws(AppleHealthExportError) {
        self.path = path
        self.pipe = pipe
        switch input {
        case .stream:
            guard let pipe else { throw AppleHealthExportError.unreadable(path: path, reason: "the pipe was not kept open") }
            fd = pipe.fd
            pending = pipe.head[...]
            inflater = nil
        case .xml:
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw AppleHealthExportError.unreadable(path: path, reason: String(cString: strerror(errno))) }
            self.fd = fd
            inflater = nil
        case .zip(let name):
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw AppleHealthExportError.unreadable(path: path, reason: String(cString: strerror(errno))) }
            defer { Glibc.close(fd) }
            var st = stat()
            guard fstat(fd, &st) == 0 else { throw AppleHealthExportError.unreadable(path: path, reason: String(cString: strerror(errno))) }
            let entries = try ZipDirectory.entries(fd: fd, size: Int64(st.st_size), path: path)
            guard let entry = entries.first(where: { $0.name == name }) else {
                throw AppleHealthExportError.noExportXML(path: path, entries: entries.map(\.name))
            }
            self.fd = -1
            inflater = try ZipEntryInflater(path: path, entry: entry)
        }
    }

    deinit { close() }

    /// Reads up to `count` bytes into `buffer`; 0 at the end.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(AppleHealthExportError) -> Int {
        guard let inflater else {
            if !pending.isEmpty {
                let n = min(count, pending.count)
                pending.prefix(n).withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: n) }
                pending = pending.dropFirst(n)
                return n
            }
            while true {
                let n = Glibc.read(fd, buffer, count)
                if n >= 0 { return n }
                if errno == EINTR { continue }
                throw AppleHealthExportError.unreadable(path: path, reason: String(cString: strerror(errno)))
            }
        }
        if let current = chunk, chunkAt == current.count {
            inflater.recycle(current.bytes)
            chunk = nil
        }
        if chunk == nil {
            guard let next = try inflater.next() else { return 0 }
            chunk = next
            chunkAt = 0
        }
        let n = min(count, chunk!.count - chunkAt)
        chunk!.bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + chunkAt, byteCount: n) }
        chunkAt += n
        return n
    }

    /// After the last byte: for a zip, throws when the entry was damaged (its CRC-32 or size
    /// differ from the directory's), which alone could look like a short document.
    func finish() throws(AppleHealthExportError) {
        guard let inflater else { return }
        while let next = try inflater.next() { inflater.recycle(next.bytes) }
    }

    /// Closes the stream; a zip's inflating thread still running (reading stopped early) is stopped.
    func close() {
        guard !closed else { return }
        closed = true
        if let inflater { inflater.cancel() } else if pipe == nil { Glibc.close(fd) }
    }
}
