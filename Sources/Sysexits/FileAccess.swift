import Foundation
import Glibc
import Platform

/// Reading and writing the files a user names (`import --jsonl`, `export --output`,
/// `simulate --dir`, …) with POSIX calls, so a failure is one sentence from its errno — what,
/// why, what to do — and the matching sysexits code, never "NSCocoaErrorDomain error 256".
package enum FileAccess {
    /// What the program was doing when the call failed (it decides the sentence and the code).
    package enum Action {
        case read, write, createDirectory

        var verb: String {
            switch self {
            case .read: "read"
            case .write: "write"
            case .createDirectory: "create the directory"
            }
        }
    }

    /// The failure for `errno` while doing `action` on `path` (`what` names the file's role,
    /// e.g. "the JSON-lines file").
    package static func failure(errno code: Int32, _ action: Action, path: String, what: String) -> CLIFailure {
        let head = "cannot \(action.verb) \(what.isEmpty ? "" : what + " ")\(path)"
        let creating = action != .read
        switch code {
        case ENOENT where creating:
            var st = stat()
            let parent = (path as NSString).deletingLastPathComponent
            if stat(parent.isEmpty ? "." : parent, &st) == 0 {
                return CLIFailure("\(head): \(parent.isEmpty ? "." : parent) does not allow creating files (a virtual file system such as /proc); give another path.",
                                  code: .cannotCreate)
            }
            return CLIFailure("\(head): its parent directory does not exist; create it first or give another path.", code: .cannotCreate)
        case ENOENT:
            return CLIFailure("\(head): it does not exist; check the path.", code: .noInput)
        case EISDIR:
            return creating
                ? CLIFailure("\(head): it is a directory; give a file name (for example \(path)/out.jsonl).", code: .cannotCreate)
                : CLIFailure("\(head): it is a directory; give a file.", code: .noInput)
        case ENOTDIR:
            return CLIFailure("\(head): a part of the path is a file, not a directory; check the path.",
                              code: creating ? .cannotCreate : .noInput)
        case EACCES, EPERM:
            return CLIFailure("\(head): permission denied; check the permissions of the file and its directories, or give another path.",
                              code: .noPermission)
        case EROFS:
            return CLIFailure("\(head): the file system is read-only; give a path on a writable file system.", code: .cannotCreate)
        case EEXIST:
            return CLIFailure("\(head): a file of that name is in the way; remove it or give another path.", code: .cannotCreate)
        case ENOSPC, EDQUOT:
            return CLIFailure("\(head): the disk is full (or the quota is used up); free some space and retry.", code: .ioError)
        case ENAMETOOLONG, ELOOP:
            return CLIFailure("\(head): \(reason(code)); give a shorter path without symlink loops.", code: creating ? .cannotCreate : .noInput)
        case EMFILE, ENFILE, ENOMEM:
            return CLIFailure("\(head): \(reason(code)); retry when the system has resources again.", code: .tempFail)
        default:
            return CLIFailure("\(head): \(reason(code)); check the device and the path.", code: .ioError)
        }
    }

    /// The failure for any error a Foundation file call threw, by its underlying errno (a
    /// `CocoaError` carries one in `NSUnderlyingErrorKey`, a `POSIXError` is one); nil when
    /// the error says none.
    package static func failure(_ error: any Error, _ action: Action, path: String, what: String) -> CLIFailure? {
        guard let code = errnoCode(of: error) else { return nil }
        return failure(errno: code, action, path: path, what: what)
    }

    /// The errno inside a Foundation error, if it carries one.
    package static func errnoCode(of error: any Error) -> Int32? {
        if let p = error as? POSIXError { return p.code.rawValue }
        let ns = error as NSError
        if ns.domain == NSPOSIXErrorDomain { return Int32(ns.code) }
        if let u = ns.userInfo[NSUnderlyingErrorKey] as? NSError, u.domain == NSPOSIXErrorDomain { return Int32(u.code) }
        if ns.domain == NSCocoaErrorDomain {
            switch CocoaError.Code(rawValue: ns.code) {
            case .fileNoSuchFile, .fileReadNoSuchFile: return ENOENT
            case .fileReadNoPermission, .fileWriteNoPermission: return EACCES
            case .fileWriteOutOfSpace: return ENOSPC
            case .fileWriteVolumeReadOnly: return EROFS
            case .fileWriteFileExists: return EEXIST
            case .fileReadTooLarge: return EFBIG
            default: return nil
            }
        }
        return nil
    }

    /// strerror's text, lower-cased at the start to sit inside a sentence.
    package static func reason(_ code: Int32) -> String {
        let s = String(cString: strerror(code))
        return s.prefix(1).lowercased() + s.dropFirst()
    }

    /// Every byte of `path` (`-` reads standard input).
    package static func read(_ path: String, what: String) throws -> [UInt8] {
        let fd = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(errno: errno, .read, path: path, what: what) }
        defer { if fd != STDIN_FILENO { close(fd) } }
        var st = stat()
        if fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFDIR {
            throw failure(errno: EISDIR, .read, path: path, what: what)
        }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = SystemCall.retrying { chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
            if n == 0 { break }
            if n < 0 {
                throw failure(errno: errno, .read, path: path, what: what)
            }
            out.append(contentsOf: chunk[0..<n])
        }
        return out
    }

    /// Writes `bytes` to `path` atomically: a temporary file in the same directory, fsync'd and
    /// renamed over `path`, so a failure leaves the old file (or none), never half of one.
    package static func write(_ bytes: [UInt8], to path: String, what: String) throws {
        var out = try OutputFile(path: path, what: what)
        try out.write(bytes)
        try out.finish()
    }

    /// Writes every byte to `fd` (standard output included), retrying short writes.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String, what: String) throws {
        var done = 0
        while done < bytes.count {
            let n = SystemCall.retrying { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) } }
            if n < 0 {
                throw failure(errno: errno, .write, path: path, what: what)
            }
            done += n
        }
    }

    /// Creates `path` and its missing parents (like `mkdir -p`, mode 0700 for new ones).
    package static func createDirectory(_ path: String, what: String) throws {
        var st = stat()
        if stat(path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFDIR else { throw failure(errno: ENOTDIR, .createDirectory, path: path, what: what) }
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path { try createDirectory(parent, what: what) }
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw failure(errno: errno, .createDirectory, path: path, what: what)
        }
    }
}

/// A file written piece by piece and atomically (``FileAccess/write(_:to:what:)`` streamed):
/// pieces are buffered and written in large blocks to a temporary file in the same directory,
/// which ``finish()`` fsyncs and renames over the path; a failure, or an output dropped without
/// ``finish()``, leaves the old file (or none), never half of one. A path that is a device, FIFO
/// or socket (`/dev/stdout`, a pipe) is written to directly; no path means standard output.
package struct OutputFile: ~Copyable {
    private let fd: Int32
    private let path: String
    private let what: String
    /// The temporary file renamed over `path` at the end (nil: written in place).
    private let temp: String?
    private var buffer: [UInt8] = []
    /// `fd` is not closed yet.
    private var isOpen = true
    /// Every byte is written (and a temporary file renamed over the path).
    private var done = false
    private static let block = 1 << 18

    /// Opens `path` for writing (nil: standard output).
    /// - Throws: ``CLIFailure`` saying what went wrong with the path (a directory, no such folder…).
    package init(path: String?, what: String) throws {
        self.what = what
        guard let path else { fd = STDOUT_FILENO; self.path = "standard output"; temp = nil; return }
        self.path = path
        var st = stat()
        if stat(path, &st) == 0, st.st_mode & S_IFMT != S_IFREG {
            if st.st_mode & S_IFMT == S_IFDIR { throw FileAccess.failure(errno: EISDIR, .write, path: path, what: what) }
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw FileAccess.failure(errno: errno, .write, path: path, what: what) }
            self.fd = fd; temp = nil
            return
        }
        let url = URL(fileURLWithPath: path)
        let temp = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp").path
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw FileAccess.failure(errno: errno, .write, path: path, what: what) }
        self.fd = fd; self.temp = temp
    }

    /// Appends `text` (written once a block has gathered).
    package mutating func write(_ text: String) throws { try write(Array(text.utf8)) }

    /// Appends `bytes` (written once a block has gathered).
    package mutating func write(_ bytes: [UInt8]) throws {
        buffer += bytes
        if buffer.count >= Self.block { try flush() }
    }

    private mutating func flush() throws {
        try FileAccess.writeAll(fd, buffer, path: path, what: what)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is buffered; a temporary file is fsync'd, closed and renamed over the path.
    package consuming func finish() throws {
        try flush()
        if temp != nil, fsync(fd) != 0 { throw FileAccess.failure(errno: errno, .write, path: path, what: what) }
        if fd != STDOUT_FILENO {
            isOpen = false
            guard close(fd) == 0 else { throw FileAccess.failure(errno: errno, .write, path: path, what: what) }
        }
        if let temp, rename(temp, path) != 0 { throw FileAccess.failure(errno: errno, .write, path: path, what: what) }
        done = true
    }

    deinit {
        if isOpen, fd != STDOUT_FILENO { close(fd) }
        if !done, let temp { unlink(temp) }
    }
}
