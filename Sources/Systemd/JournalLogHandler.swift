import Foundation
import Logging
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Log lines for systemd's journal: one line per event on stderr, prefixed with the syslog
/// priority (`<3>` error … `<7>` debug) that journald reads from a service's output
/// (`SyslogLevelPrefix=`, on by default), so `journalctl -p warning -u healthgate` filters
/// by level and errors show in red. No timestamp: the journal stamps every line itself.
///
/// ``bootstrap(label:)`` picks it only when stderr really is the journal (systemd's
/// `$JOURNAL_STREAM` names stderr's device and inode); in a terminal the familiar
/// `StreamLogHandler` lines stay.
package struct JournalLogHandler: LogHandler {
    /// The logger's label.
    package let label: String
    package var logLevel: Logger.Level = .info
    package var metadata: Logger.Metadata = [:]
    private let write: @Sendable (String) -> Void

    /// A handler writing `<priority>` lines through `write` (stderr by default).
    package init(label: String, write: @escaping @Sendable (String) -> Void = JournalLogHandler.standardError) {
        self.label = label
        self.write = write
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The syslog priority journald files a line of `level` under.
    package static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    package func log(event: LogEvent) {
        var all = metadata
        if let explicit = event.metadata { all.merge(explicit) { $1 } }
        var text = "<\(Self.priority(event.level))>\(event.message)"
        if let error = event.error { text += ": \(error)" }
        if !all.isEmpty {
            text += " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        // One event is one journal entry: a newline inside the message would split it.
        write(text.replacingOccurrences(of: "\n", with: " ") + "\n")
    }

    /// Writes `line` to stderr in one `write(2)`.
    package static let standardError: @Sendable (String) -> Void = { line in
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }

    /// Whether stderr is connected to the journal: systemd sets `JOURNAL_STREAM=DEV:INODE` for a
    /// service whose output goes there, and stderr's `fstat` must match it (a child that
    /// redirected stderr inherits the variable but not the stream).
    package static func stderrIsJournal(environment: [String: String] = ProcessInfo.processInfo.environment,
                                       fd: Int32 = 2) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }

    /// The daemon's handler for `label`: journal lines when stderr is the journal, otherwise
    /// swift-log's stderr stream handler.
    package static func bootstrap(label: String) -> any LogHandler {
        stderrIsJournal() ? JournalLogHandler(label: label) : StreamLogHandler.standardError(label: label)
    }
}

extension Logger {
    /// A logger printing `level` and above on stderr, as the interactive commands use
    /// (they print their own progress; the logger says only what they cannot show).
    package static func standardError(_ label: String = "healthgate", level: Logger.Level) -> Logger {
        var logger = Logger(label: label) { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = level
        return logger
    }

    /// `run`'s logger: one line per event on stderr, prefixed with its syslog priority under
    /// systemd (``JournalLogHandler``), at `$HEALTHGATE_LOG`'s level (default info).
    package static func daemon() -> Logger {
        var logger = Logger(label: "healthgate", factory: JournalLogHandler.bootstrap)
        logger.logLevel = ProcessInfo.processInfo.environment["HEALTHGATE_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        return logger
    }
}
