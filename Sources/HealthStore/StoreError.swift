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
                return "the health store is not writable (\(message)); check the file's permissions."
            case SQLITE_CORRUPT, SQLITE_NOTADB:
                return "the health store file is damaged or not a HealthGate database (\(message))."
            default:
                return "SQLite error \(code) (\(message)) while running: \(context.prefix(120))."
            }
        case .schemaTooNew(let found, let supported):
            return "the health store has schema version \(found) but this HealthGate knows up to \(supported); upgrade HealthGate."
        case .corruptRow(let what):
            return "a stored row is unreadable: \(what)."
        case .notFound(let what):
            return "\(what)."
        case .invalidQuery(let what), .notFinite(let what):
            return "\(what)."
        }
    }
}
