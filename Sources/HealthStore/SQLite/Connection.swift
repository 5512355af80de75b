import CSQLite
import Foundation
import Synchronization

/// Write transactions committed by every connection of this process (SQLite's commit hook):
/// what the SD-card write profile divides the bytes written by (docs/store.md, "Writes").
let committedTransactions = Atomic<UInt64>(0)

/// SQLite's "the destructor is transient" marker: SQLite copies bound text and blobs at once,
/// so the Swift buffers may go away after the bind call.
let sqliteTransient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// How large a statement journal may grow in memory before SQLite moves it to a temporary file
/// (`SQLITE_CONFIG_STMTJRNL_SPILL`; SQLite's default is 64 KiB). A statement that writes several
/// rows, or fires a trigger, inside a longer transaction keeps the original of every page it
/// changes so that it alone can be undone: the bulk writer's 50-row inserts (which fire the
/// rollup trigger) changed more than 64 KiB of pages each, so every one of them wrote its
/// journal to a file in the temporary directory and read nothing back: 219,000 page writes
/// (≈ 900 MB) for a 200 MB Apple Health import, a fifth of its time (docs/store.md, "Statement
/// journals"). In memory the journal costs at most this much, only while such a statement runs.
package let statementJournalSpillBytes: Int32 = 4 << 20

/// Applies the process-wide SQLite settings once, before the first database opens (SQLite takes
/// them only before it initializes). `SQLITE_OK`, or SQLite's code when something in this
/// process had already opened a database (then SQLite's defaults stay: slower, never wrong).
package let sqliteProcessConfiguration: Int32 = healthgate_sqlite3_config_statement_journal_spill(statementJournalSpillBytes)

/// One open SQLite database handle (`sqlite3*`) with a cache of prepared statements.
///
/// **Thread rules.** The handle is opened with `SQLITE_OPEN_NOMUTEX` (SQLite's "multi-thread"
/// mode): SQLite takes no lock of its own on it, so a `Connection` (and every ``Statement`` it
/// prepared) must be used by **one thread or task at a time**. It may move between threads —
/// that is why the class is `@unchecked Sendable` — but two threads must never call into it
/// concurrently. ``HealthStore`` meets the rule by guarding its connection with a lock; the
/// Ingest writer meets it by owning a connection of its own on its writer thread. Several
/// connections (in one or several processes) may use the same file: WAL mode lets readers run
/// while one writer writes, and `busy_timeout` makes a second writer wait instead of failing.
///
/// We chose NOMUTEX over FULLMUTEX because every caller already serialises its use; SQLite's own
/// mutex would be taken and released on every bind/step/column call of the hot insert loop.
package final class Connection: @unchecked Sendable {
    /// The raw handle, for code in this package that needs a C call the wrapper lacks.
    package let handle: OpaquePointer
    /// The file this connection opened.
    package let path: String
    private var cache: [String: Statement] = [:]
    private var transactionDepth = 0

    /// True when this connection may not write (``init(path:busyTimeoutMilliseconds:readOnly:)``
    /// with `readOnly`).
    package let isReadOnly: Bool
    /// True when a read-only connection had to open the file as immutable (no `-wal` to read,
    /// and no right to create the `-shm`/`-wal` files beside it): it sees the main file as it
    /// was at open and no later commit (``HealthStore`` reopens it when a writer appears).
    package let isImmutable: Bool

    /// Opens the database at `path`.
    ///
    /// Writing (the default): the file is created with mode 0600 (health data is private) and
    /// missing parent directories with 0700. Call ``enableWAL()`` before writing.
    ///
    /// Read-only: nothing is created. A missing path, a directory or an empty file is
    /// ``StoreError/storeMissing(path:reason:)``. SQLite reads a WAL database read-only when the
    /// `-shm` file exists (a writer is running, even when this user may only read it) or can be
    /// created; when neither holds (no writer, a directory this user may not write) and there is
    /// no `-wal` with content, the main file holds every commit and is opened as immutable
    /// (docs/store.md, "Open modes"); with a `-wal` that cannot be read this way the open fails
    /// with a permission error naming the fix.
    /// - Throws: ``StoreError`` when the file cannot be created or opened.
    package init(path: String, busyTimeoutMilliseconds: Int32 = 5000, readOnly: Bool = false) throws {
        _ = sqliteProcessConfiguration
        self.path = path
        isReadOnly = readOnly
        var immutable = false
        if readOnly {
            try Connection.checkReadable(path)
        } else if path != ":memory:" {
            try Connection.createFile(at: path)
        }
        var db = try Connection.openHandle(path, readOnly: readOnly, immutable: false,
                                           busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        if readOnly {
            // The first read opens the WAL and its index; that is where a reader without write
            // access to the directory fails.
            let rc = Connection.probe(db)
            if rc != SQLITE_OK {
                let message = String(cString: sqlite3_errmsg(db))
                sqlite3_close_v2(db)
                guard rc & 0xFF == SQLITE_READONLY || rc & 0xFF == SQLITE_CANTOPEN else {
                    throw StoreError.sqlite(code: rc, message: message, context: "opening \(path) read-only")
                }
                var st = stat()
                if stat(path + "-wal", &st) == 0, st.st_size > 0 {
                    throw StoreError.cannotOpen(
                        path: path,
                        reason: "its write-ahead log \(path)-wal holds commits not yet in the main file, and this user may not create the shared-memory file that reading it needs (\(message)); run any writing healthgate command on it as its owner (a clean stop checkpoints the log into the main file), or give this user write access to the directory",
                        code: SQLITE_PERM)
                }
                db = try Connection.openHandle(path, readOnly: true, immutable: true,
                                               busyTimeoutMilliseconds: busyTimeoutMilliseconds)
                immutable = true
            }
        }
        isImmutable = immutable
        handle = db
        do {
            try execute("PRAGMA foreign_keys=ON")
        } catch {
            cache.removeAll()
            sqlite3_close_v2(db)
            throw error
        }
    }

    /// Opens the raw handle with extended result codes and the busy timeout.
    private static func openHandle(_ path: String, readOnly: Bool, immutable: Bool,
                                   busyTimeoutMilliseconds: Int32) throws -> OpaquePointer {
        var db: OpaquePointer?
        let rc: Int32
        if immutable {
            rc = sqlite3_open_v2(uri(path) + "?immutable=1", &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nil)
        } else {
            let flags = readOnly ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
                : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
            rc = sqlite3_open_v2(path, &db, flags, nil)
        }
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw StoreError.cannotOpen(path: path, reason: message, code: rc)
        }
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        if !readOnly {
            // Counts every write transaction, explicit or autocommit; 0 lets it commit.
            sqlite3_commit_hook(db, { _ in committedTransactions.add(1, ordering: .relaxed); return 0 }, nil)
        }
        return db
    }

    /// Reads the schema once (what opens the WAL); SQLite's result code.
    private static func probe(_ db: OpaquePointer) -> Int32 {
        var st: OpaquePointer?
        var rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &st, nil)
        if rc == SQLITE_OK {
            rc = sqlite3_step(st)
            if rc == SQLITE_ROW { rc = SQLITE_OK }
        }
        sqlite3_finalize(st)
        return rc
    }

    /// `path` as an absolute `file:` URI (RFC 3986 escapes for what SQLite's URI parser reads).
    private static func uri(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var out = "file://"
        for b in absolute.utf8 {
            switch b {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"): out += String(format: "%%%02X", b)
            default: out.unicodeScalars.append(Unicode.Scalar(b))
            }
        }
        return out
    }

    /// A read-only open's checks before SQLite sees the path: it exists, is a file, is not empty.
    private static func checkReadable(_ path: String) throws {
        var st = stat()
        guard stat(path, &st) == 0 else {
            let e = errno
            if e == ENOENT || e == ENOTDIR { throw StoreError.storeMissing(path: path, reason: "no such file") }
            throw StoreError.cannotOpen(path: path, reason: String(cString: strerror(e)),
                                        code: e == EACCES || e == EPERM ? SQLITE_PERM : SQLITE_CANTOPEN)
        }
        if st.st_mode & S_IFMT == S_IFDIR { throw StoreError.storeMissing(path: path, reason: "it is a directory") }
        if st.st_size == 0 {
            throw StoreError.storeMissing(path: path, reason: "the file is empty: no store has been created in it yet")
        }
        guard access(path, R_OK) == 0 else {
            throw StoreError.cannotOpen(path: path, reason: "this user may not read it (\(String(cString: strerror(errno))))",
                                        code: SQLITE_PERM)
        }
    }

    /// Switches a writing connection to WAL with `synchronous=NORMAL` (docs/store.md). Run only
    /// after the file is known to be HealthGate's: the journal mode is stored in the file.
    package func enableWAL() throws {
        // journal_mode returns a row; run it through a statement so the result is read.
        let mode = try prepare("PRAGMA journal_mode=WAL", cached: false)
        _ = try mode.step()
        try execute("PRAGMA synchronous=NORMAL")
    }

    /// Copies every commit in the write-ahead log into the main file and truncates the log to
    /// zero bytes (`PRAGMA wal_checkpoint(TRUNCATE)`), so the main file alone holds the whole
    /// store (a copy of it without `-wal` is complete). Waits up to the busy timeout for
    /// readers; returns false when some remain and the log could not be fully copied.
    /// Nothing to do on a read-only connection.
    @discardableResult
    package func checkpoint() throws -> Bool {
        guard !isReadOnly else { return true }
        let st = try prepare("PRAGMA wal_checkpoint(TRUNCATE)", cached: false)
        _ = try st.step()
        return st.int64(0) == 0
    }

    deinit {
        cache.removeAll()   // finalize every statement before closing
        sqlite3_close_v2(handle)
    }

    /// Creates `path` with mode 0600 if it does not exist, and its parent directories (0700).
    static func createFile(at path: String) throws {
        let url = URL(fileURLWithPath: path)
        let dir = url.deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(
                atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "cannot create directory \(dir) (\(error.localizedDescription.trimmingCharacters(in: CharacterSet(charactersIn: "."))))",
                                        code: SQLITE_CANTOPEN)
        }
        // O_EXCL: never open (and so never close) an existing store file here. Closing any
        // descriptor of a file drops every POSIX lock this process holds on it, so a second
        // store opened in a process would silently release the first connection's SQLite
        // locks; another process then takes itself for the last user, checkpoints and deletes
        // the WAL under the first, whose change observer never sees a commit again (issue 17,
        // `stats --follow` stopping after one update).
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0, errno == EEXIST { return }
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw StoreError.cannotOpen(path: path, reason: reason,
                                        code: errno == EACCES || errno == EPERM ? SQLITE_PERM : SQLITE_CANTOPEN)
        }
        close(fd)
    }

    /// ``checkpoint()`` for a connection about to close: waits at most a second for readers
    /// (a store going away should not hang on one) and ignores failures, which leave the
    /// commits safely in the log for the next writer.
    package func checkpointBeforeClose() {
        guard !isReadOnly, !inTransaction else { return }
        sqlite3_busy_timeout(handle, 1000)
        _ = try? checkpoint()
    }

    // MARK: Statements

    /// Returns a prepared statement for `sql`. With `cached` (the default) the statement is
    /// kept and handed out again, reset and with its bindings cleared, for the same text.
    package func prepare(_ sql: String, cached: Bool = true) throws -> Statement {
        if cached, let s = cache[sql] {
            s.reset()
            return s
        }
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, cached ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0, &raw, nil)
        guard rc == SQLITE_OK, let raw else { throw error(rc, "preparing \(sql)") }
        let s = Statement(raw, connection: self)
        if cached { cache[sql] = s }
        return s
    }

    /// Runs one or more SQL statements that return no rows (DDL, pragmas, BEGIN/COMMIT).
    package func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw StoreError.sqlite(code: rc, message: text, context: sql)
        }
    }

    /// The rowid of the last successful INSERT on this connection.
    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    /// Rows changed by the last INSERT/UPDATE/DELETE.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    /// `PRAGMA user_version`, the schema version the migrations maintain.
    package var userVersion: Int {
        get throws {
            let s = try prepare("PRAGMA user_version", cached: false)
            _ = try s.step()
            return Int(s.int64(0))
        }
    }

    /// The integer a `PRAGMA name` returns (read-only pragmas such as `application_id`).
    package func int64Pragma(_ name: String) throws -> Int64 {
        let s = try prepare("PRAGMA \(name)", cached: false)
        _ = try s.step()
        return s.int64(0)
    }

    /// Sets `PRAGMA user_version`.
    package func setUserVersion(_ v: Int) throws { try execute("PRAGMA user_version=\(v)") }

    // MARK: Transactions

    /// Runs `body` in a transaction: `BEGIN IMMEDIATE` (so a writer takes the write lock up
    /// front and waits on `busy_timeout` instead of failing mid-way), `COMMIT` on return,
    /// `ROLLBACK` on a thrown error. Nested calls join the outer transaction (a savepoint
    /// would be needed for partial rollback; nothing here needs it).
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        if transactionDepth > 0 {
            transactionDepth += 1
            defer { transactionDepth -= 1 }
            return try body()
        }
        try execute("BEGIN IMMEDIATE")
        transactionDepth = 1
        defer { transactionDepth = 0 }
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Flushes the write-ahead log to the disk (an fsync through SQLite's own handle for the
    /// file, `SQLITE_FCNTL_JOURNAL_POINTER`), making every transaction committed so far
    /// durable. Used with `synchronous=NORMAL`, where commits themselves do not sync: one sync
    /// then covers many commits (group commit). Nothing to do when no WAL is open yet.
    /// - Throws: ``StoreError`` when the sync fails (an I/O error of the disk).
    package func syncJournal() throws {
        var file: UnsafeMutablePointer<sqlite3_file>?
        let rc = sqlite3_file_control(handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file)
        guard rc == SQLITE_OK else { throw error(rc, "finding the write-ahead log to sync") }
        guard let file, let methods = file.pointee.pMethods, let xSync = methods.pointee.xSync else { return }
        let synced = xSync(file, SQLITE_SYNC_NORMAL)
        guard synced == SQLITE_OK else {
            throw StoreError.sqlite(code: synced, message: "fsync of the write-ahead log failed", context: "syncing \(path)-wal")
        }
    }

    /// Whether a transaction opened by ``transaction(_:)`` is in progress.
    package var inTransaction: Bool { transactionDepth > 0 }

    /// A ``StoreError`` for result code `rc`, with SQLite's message and what we were doing.
    package func error(_ rc: Int32, _ context: String) -> StoreError {
        StoreError.sqlite(code: rc, message: String(cString: sqlite3_errmsg(handle)), context: context)
    }
}
