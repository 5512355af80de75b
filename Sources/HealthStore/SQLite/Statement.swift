import CSQLite
import Foundation

/// A prepared SQLite statement (`sqlite3_stmt*`) with typed binds and column reads.
///
/// Same thread rules as the ``Connection`` that prepared it: one thread at a time. Binding
/// indexes and column indexes are 1-based and 0-based respectively, as in SQLite's C API.
package final class Statement: @unchecked Sendable {
    package let handle: OpaquePointer
    private unowned let connection: Connection

    init(_ handle: OpaquePointer, connection: Connection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement so it can run again and clears its bindings.
    package func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Binding (1-based)

    package func bind(_ i: Int32, _ v: Int64) { sqlite3_bind_int64(handle, i, v) }
    package func bind(_ i: Int32, _ v: Int) { sqlite3_bind_int64(handle, i, Int64(v)) }
    package func bind(_ i: Int32, _ v: Double) { sqlite3_bind_double(handle, i, v) }
    package func bind(_ i: Int32, _ v: String) { sqlite3_bind_text(handle, i, v, -1, sqliteTransient) }
    package func bindNull(_ i: Int32) { sqlite3_bind_null(handle, i) }

    package func bind(_ i: Int32, _ v: Int64?) { if let v { bind(i, v) } else { bindNull(i) } }
    package func bind(_ i: Int32, _ v: Int?) { if let v { bind(i, v) } else { bindNull(i) } }
    package func bind(_ i: Int32, _ v: Double?) { if let v { bind(i, v) } else { bindNull(i) } }
    package func bind(_ i: Int32, _ v: String?) { if let v { bind(i, v) } else { bindNull(i) } }

    /// Binds bytes as a BLOB (copied by SQLite).
    package func bind(_ i: Int32, bytes: UnsafeRawBufferPointer) {
        sqlite3_bind_blob(handle, i, bytes.baseAddress, Int32(bytes.count), sqliteTransient)
    }
    package func bind(_ i: Int32, _ v: Data?) {
        guard let v else { bindNull(i); return }
        v.withUnsafeBytes { bind(i, bytes: $0) }
    }
    /// Binds a UUID as its 16 raw bytes.
    package func bind(_ i: Int32, _ v: UUID) {
        withUnsafeBytes(of: v.uuid) { bind(i, bytes: $0) }
    }

    /// Binds a heterogenous list of values in order, starting at index 1.
    package func bind(all values: [SQLValue]) {
        for (k, v) in values.enumerated() {
            let i = Int32(k + 1)
            switch v {
            case .null: bindNull(i)
            case .int(let x): bind(i, x)
            case .double(let x): bind(i, x)
            case .text(let x): bind(i, x)
            case .blob(let x): bind(i, Data?.some(x))
            }
        }
    }

    // MARK: Stepping

    /// Advances one row: true when a row is available, false when done. When done (or on an
    /// error) the statement is reset, keeping its bindings, so it can run again at once and
    /// holds no read snapshot open.
    /// - Throws: ``StoreError`` on any other result (constraint, busy, I/O, full disk).
    @discardableResult
    package func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE {
            sqlite3_reset(handle)
            return false
        }
        let sql = sqlite3_sql(handle).map { String(cString: $0) } ?? "?"
        sqlite3_reset(handle)
        throw connection.error(rc, sql)
    }

    /// Runs a statement that returns no rows.
    package func run() throws {
        while try step() {}
    }

    // MARK: Columns (0-based)

    package func isNull(_ c: Int32) -> Bool { sqlite3_column_type(handle, c) == SQLITE_NULL }
    package func int64(_ c: Int32) -> Int64 { sqlite3_column_int64(handle, c) }
    package func int(_ c: Int32) -> Int { Int(sqlite3_column_int64(handle, c)) }
    package func double(_ c: Int32) -> Double { sqlite3_column_double(handle, c) }
    package func optionalInt(_ c: Int32) -> Int? { isNull(c) ? nil : int(c) }
    package func optionalDouble(_ c: Int32) -> Double? { isNull(c) ? nil : double(c) }
    package func string(_ c: Int32) -> String? {
        guard let p = sqlite3_column_text(handle, c) else { return nil }
        return String(cString: p)
    }
    package func data(_ c: Int32) -> Data? {
        if isNull(c) { return nil }
        let n = Int(sqlite3_column_bytes(handle, c))
        guard n > 0, let p = sqlite3_column_blob(handle, c) else { return Data() }
        return Data(bytes: p, count: n)
    }
    package func uuid(_ c: Int32) -> UUID? {
        guard sqlite3_column_bytes(handle, c) == 16, let p = sqlite3_column_blob(handle, c) else { return nil }
        var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &u) { $0.copyMemory(from: UnsafeRawBufferPointer(start: p, count: 16)) }
        return UUID(uuid: u)
    }
}

/// A value to bind when the statement's parameters are built dynamically (query filters).
package enum SQLValue: Sendable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
    case blob(Data)
}
