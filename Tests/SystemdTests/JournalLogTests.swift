import Foundation
import Logging
import Synchronization
import Testing
@testable import Systemd
#if canImport(Glibc)
@preconcurrency import Glibc
import Locking
#endif

/// The daemon's journal lines: syslog priority prefixes journald understands, one line per
/// event, and picked only when stderr really is the journal.
@Suite struct JournalLogTests {
    @Test func linesCarryTheSyslogPriorityAndStayOneLine() {
        let lines = Lock<[String]>([])
        var logger = Logger(label: "healthgate") { label in JournalLogHandler(label: label) { l in lines.withLock { $0.append(l) } } }
        logger.logLevel = .debug
        logger.debug("polling")
        logger.info("ingesting")
        logger.notice("pedometer appeared")
        logger.warning("could not prune", metadata: ["retry": "3600 s"])
        logger.error("the store refused a batch:\nSQLITE_FULL")
        logger.critical("gone")
        #expect(lines.withLock { $0 } == [
            "<7>polling\n", "<6>ingesting\n", "<5>pedometer appeared\n", "<4>could not prune retry=3600 s\n",
            "<3>the store refused a batch: SQLITE_FULL\n", "<2>gone\n",
        ])
    }

    @Test func stderrIsTheJournalOnlyWhenDeviceAndInodeMatch() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)").path
        let fd = open(path, O_CREAT | O_WRONLY, 0o600)
        #expect(fd >= 0)
        defer { close(fd); unlink(path) }
        var st = stat()
        #expect(fstat(fd, &st) == 0)
        let mine = "\(st.st_dev):\(st.st_ino)"
        #expect(JournalLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": mine], fd: fd))
        #expect(!JournalLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": "\(st.st_dev):\(st.st_ino + 1)"], fd: fd))
        #expect(!JournalLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": "garbage"], fd: fd))
        #expect(!JournalLogHandler.stderrIsJournal(environment: [:], fd: fd))
    }
}
