import CSQLite

/// Why a store operation failed. ``description`` is one sentence: what failed, why, and what
/// to do about it.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The database file (or its directory) could not be created or opened.
    case cannotOpen(path: String, reason: String, code: Int32)
    /// SQLite returned an error. `code` is the extended result code.
    case sqlite(code: Int32, message: String, context: String)
    /// The file was written by a newer HealthGate whose schema this build does not know.
    case schemaTooNew(found: Int, supported: Int)
    /// A stored row could not be turned back into a sample (unknown type, bad UUID).
    case corruptRow(String)
    /// No source or device matched a name the caller gave.
    case notFound(String)
    /// The query itself is wrong (an unparsable interval, no statistics option, too many buckets).
    case invalidQuery(String)
    /// A computed number overflowed (a statistics sum of implausible stored values): bad data.
    case notFinite(String)
    /// A read-only open found no store: the file is missing, a directory, or empty.
    case storeMissing(path: String, reason: String)
    /// The file is an SQLite database of another application (HealthGate leaves it untouched).
    case notHealthGateStore(path: String, reason: String)
    /// The file has HealthGate's tables but `PRAGMA user_version` 0: which migrations ran is unknown.
    case schemaVersionLost(path: String)
    /// A read-only open found an older schema; only a writing open migrates it.
    case needsMigration(path: String, found: Int, current: Int)
    /// A migration step failed on this file (its tables disagree with its schema version);
    /// the step was rolled back.
    case migrationFailed(path: String, from: Int, message: String)
    /// Quantities of one quantity series that cannot be stored as given (they disagree on the
    /// series' type, source or device, or their indices leave a gap): bad data.
    case invalidSeries(String)

    /// SQLite's primary result code (the low byte of the extended code), or nil.
    public var primaryCode: Int32? {
        switch self {
        case .cannotOpen(_, _, let c), .sqlite(let c, _, _): return c & 0xFF
        default: return nil
        }
    }

    /// The kind of failure, for mapping onto exit codes.
    public var kind: Kind {
        switch self {
        case .cannotOpen(_, _, let c):
            return c & 0xFF == SQLITE_PERM ? .permission : .io
        case .sqlite(let c, _, _):
            switch c & 0xFF {
            case SQLITE_BUSY, SQLITE_LOCKED: return .busy
            case SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN: return .io
            case SQLITE_PERM, SQLITE_READONLY, SQLITE_AUTH: return .permission
            case SQLITE_CORRUPT, SQLITE_NOTADB: return .corrupt
            case SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_TOOBIG: return .data
            default: return .internal
            }
        case .schemaTooNew: return .config
        case .corruptRow: return .corrupt
        case .notFound: return .data
        case .invalidQuery: return .usage
        case .notFinite: return .data
        case .storeMissing: return .noInput
        case .notHealthGateStore, .schemaVersionLost: return .data
        case .migrationFailed: return .corrupt
        case .needsMigration: return .config
        case .invalidSeries: return .data
        }
    }

    /// How a writer that retries should treat the failure (the ingest writer's classes).
    package var writeFailure: WriteFailure {
        switch primaryCode {
        case SQLITE_FULL: return .diskFull
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY: return .io
        case SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_TOOBIG: return .rejected
        default: return .other
        }
    }

    /// ``writeFailure``'s classes: a full disk, a lock held elsewhere, an I/O failure, a row
    /// the schema refused (retrying cannot help), anything else.
    package enum WriteFailure: Sendable {
        case diskFull, busy, io, rejected, other
    }

    /// Broad failure classes (each maps to one sysexits code in the CLI).
    public enum Kind: Sendable {
        case io, busy, permission, corrupt, data, usage, config, `internal`
        /// No store exists where one was to be read (sysexits 66).
        case noInput
    }

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason, _):
            return "cannot open the health store at \(path): \(reason); check the path and its permissions, or pass --db PATH."
        case .sqlite(let code, let message, let context):
            switch code & 0xFF {
            case SQLITE_FULL:
                return "the disk is full while writing the health store (\(message)); the write that failed was rolled back whole (earlier commits are kept); free space and retry."
            case SQLITE_BUSY, SQLITE_LOCKED:
                return "the health store is locked by another writer (\(message)); retry in a moment."
            case SQLITE_READONLY, SQLITE_PERM:
                return "the health store is not writable (\(message)): the user running this needs write permission on the store's file and on its directory (SQLite creates the -wal and -shm files beside it), on a mount that is not read-only; check them, or pass --db with a path that is."
            case SQLITE_CORRUPT, SQLITE_NOTADB:
                return "the health store file is damaged or not a HealthGate database (\(message))."
            case SQLITE_CANTOPEN:
                return "the health store, or a file SQLite keeps beside it (its -wal and -shm), cannot be opened (\(message)): the store's directory must be writable, not on a read-only mount, and have free space; check them, or pass --db with a path that is."
            case SQLITE_IOERR:
                return "a disk error while using the health store (\(message), SQLite code \(code)): the disk may be full, failing or mounted read-only, or the store's directory not writable; check free space, the mount and `dmesg`, then retry."
            default:
                return "SQLite error \(code) (\(message)) while running: \(context.prefix(120))."
            }
        case .schemaTooNew(let found, let supported):
            return "the health store has schema version \(found) but this HealthGate knows up to \(supported); upgrade HealthGate."
        case .corruptRow(let what):
            return "a stored row is unreadable: \(what)."
        case .notFound(let what):
            return "\(what)."
        case .invalidQuery(let what), .notFinite(let what), .invalidSeries(let what):
            return "\(what)."
        case .storeMissing(let path, let reason):
            return "there is no health store at \(path) (\(reason)); this command only reads and never creates one: check --db or $HEALTHGATE_DB, or create the store with a writing command such as `healthgate add` or `healthgate run`."
        case .notHealthGateStore(let path, let reason):
            return "\(path) is not a HealthGate store (\(reason)); HealthGate leaves it untouched: pass --db with the path of a HealthGate store, or a new file name to create one."
        case .schemaVersionLost(let path):
            return "the health store at \(path) has HealthGate's tables but schema version 0 (its PRAGMA user_version was reset), so HealthGate cannot tell which migrations ran and will not touch it; restore the file from a backup, or set the version back with `sqlite3 \(path) 'PRAGMA user_version=N'` if you know it (docs/store.md)."
        case .migrationFailed(let path, let from, let message):
            return "could not upgrade the health store at \(path) from schema version \(from) to \(from + 1) because its tables do not match that version (SQLite: \(message)); the step was rolled back and the file is unchanged: restore it from a backup, or report the message."
        case .needsMigration(let path, let found, let current):
            return "the health store at \(path) has schema version \(found) but this HealthGate reads version \(current), and a read-only command never upgrades a store; run `healthgate migrate --db \(path)` as a user who may write it (any writing command such as `healthgate run` also upgrades it), then retry."
        }
    }
}
