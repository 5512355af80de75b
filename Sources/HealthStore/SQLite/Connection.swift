import CSQLite
import Foundation

/// SQLite's "the destructor is transient" marker: SQLite copies bound text and blobs at once,
/// so the Swift buffers may go away after the bind call.
let sqliteTransient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

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

    /// Opens (creating if needed) the database at `path`.
    ///
    /// The file is created with mode 0600 (health data is private) and missing parent
    /// directories with 0700. Then the connection is configured: WAL journal,
    /// `synchronous=NORMAL`, `foreign_keys=ON` and a busy timeout.
    /// - Throws: ``StoreError`` when the directory or file cannot be created or opened.
    package init(path: String, busyTimeoutMilliseconds: Int32 = 5000) throws {
        self.path = path
        if path != ":memory:" {
            try Connection.createFile(at: path)
        }
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw StoreError.cannotOpen(path: path, reason: message, code: rc)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        do {
            // journal_mode returns a row; run it through a statement so the result is read.
            let mode = try prepare("PRAGMA journal_mode=WAL", cached: false)
            _ = try mode.step()
            try execute("PRAGMA synchronous=NORMAL")
            try execute("PRAGMA foreign_keys=ON")
        } catch {
            cache.removeAll()
            sqlite3_close_v2(db)
            throw error
        }
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
