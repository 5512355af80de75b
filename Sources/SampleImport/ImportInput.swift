import Foundation
import Glibc
import Sysexits

/// The file `import` reads, opened for streaming: a descriptor (standard input for `-`) and,
/// for a regular file, its size (for the progress line). Open errors are
/// ``FileAccess/failure(errno:_:path:what:)``'s sentences, as for every file HealthGate reads.
struct ImportInput {
    /// The descriptor records are read from.
    let fd: Int32
    /// The size of a regular file; nil for a pipe, a terminal or a device.
    let size: Int?
    private let owned: Bool

    /// Opens `path` (`-`: standard input) for reading; `what` names the file in messages
    /// ("the JSON-lines file").
    init(path: String, what: String) throws {
        owned = path != "-"
        fd = owned ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO
        guard fd >= 0 else { throw FileAccess.failure(errno: errno, .read, path: path, what: what) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let code = errno
            if owned { Glibc.close(fd) }
            throw FileAccess.failure(errno: code, .read, path: path, what: what)
        }
        if st.st_mode & S_IFMT == S_IFDIR {
            if owned { Glibc.close(fd) }
            throw FileAccess.failure(errno: EISDIR, .read, path: path, what: what)
        }
        if st.st_mode & S_IFMT == S_IFREG {
            size = Int(st.st_size)
            _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_SEQUENTIAL))
        } else {
            size = nil
        }
    }

    /// Closes the file (never standard input).
    func close() {
        if owned { Glibc.close(fd) }
    }
}

/// The progress line of `import` on a terminal (updated per batch): records read, the rate, bytes read of the
/// total, on stderr, at most four times a second, rewritten in place (`\r`) and erased at the
/// end. Nothing at all when stderr is not a terminal (a pipe, a file, a CI log).
struct ImportMeter {
    private let path: String
    private let total: Int?
    private let enabled: Bool
    private let start = ContinuousClock.now
    private var lastShown: ContinuousClock.Instant
    private var shown = false

    /// A meter for `path` of `total` bytes (nil: unknown), shown only when `terminal`.
    init(path: String, total: Int?, terminal: Bool = isatty(STDERR_FILENO) == 1) {
        self.path = path
        self.total = total
        enabled = terminal
        lastShown = start
    }

    /// Shows `records` and `bytes` read, unless the line was shown less than 250 ms ago.
    mutating func show(records: Int, bytes: Int) {
        guard enabled else { return }
        let now = ContinuousClock.now
        guard now - lastShown >= .milliseconds(250) else { return }
        lastShown = now
        let elapsed = now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Double(records) / seconds : 0
        var text = "importing \(TerminalText.visible(path)): \(records) records, \(Int(rate))/s, " + Self.megabytes(bytes)
        if let total { text += " of " + Self.megabytes(total) }
        FileHandle.standardError.write(Data(("\r" + text + "\u{1B}[K").utf8))
        shown = true
    }

    /// Erases the progress line (before a message, and at the end).
    mutating func clear() {
        guard shown else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        shown = false
    }

    /// Erases the progress line at the end.
    mutating func finish() { clear() }

    private static func megabytes(_ n: Int) -> String {
        String(format: "%.1f MB", Double(n) / 1e6)
    }
}
