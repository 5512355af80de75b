import CSQLite
import Foundation
import HealthModel
@testable import HealthStore

/// A store in a fresh temporary directory, removed when the value is dropped.
final class TempStore {
    let dir: URL
    let store: HealthStore
    var path: String { store.path }

    init() throws {
        dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("healthstore-tests-\(UUID().uuidString)", isDirectory: true)
        store = try HealthStore(path: dir.appendingPathComponent("nested/health.sqlite").path)
    }

    deinit { try? FileManager.default.removeItem(at: dir) }
}

/// 2026-11-02T00:00:00Z plus `seconds`.
func t(_ seconds: Double) -> Date { Date(timeIntervalSince1970: 1_793_577_600 + seconds) }

func sample(_ type: QuantityType, _ value: Double, _ unit: HealthUnit? = nil, from: Double, to: Double? = nil,
            source: Source = Source(name: "Watch", identifier: "com.example.watch"), device: Device? = nil,
            metadata: Metadata = Metadata(), rr: RRIntervals? = nil, uuid: UUID = UUID.timeOrdered()) throws -> QuantitySample {
    try QuantitySample(uuid: uuid, type: type, quantity: Quantity(value, unit ?? type.canonicalUnit),
                       start: t(from), end: t(to ?? from), source: source, device: device,
                       metadata: metadata, rrIntervals: rr)
}

/// Runs a SQL scalar query against the store's connection (for checking rows directly).
func scalar(_ store: HealthStore, _ sql: String) throws -> Int {
    try store.withConnection { db in
        let st = try db.prepare(sql, cached: false)
        _ = try st.step()
        return st.int(0)
    }
}

/// `sqlite3_open_v2` for the tests that reach a file through the C API, outside HealthStore.
/// The store's process-wide SQLite settings are applied first: SQLite takes them only before
/// the process's first open, and these tests run in the same process as the store's.
func rawOpen(_ path: String, _ db: inout OpaquePointer?, _ flags: Int32) -> Int32 {
    _ = sqliteProcessConfiguration
    return sqlite3_open_v2(path, &db, flags, nil)
}

/// Runs SQL on a file through the C API, outside HealthStore (another application's writes).
func sqliteExec(_ path: String, _ sql: String) throws {
    var db: OpaquePointer?
    guard rawOpen(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) == SQLITE_OK else {
        throw StoreError.cannotOpen(path: path, reason: "test open", code: 1)
    }
    defer { sqlite3_close(db) }
    var message: UnsafeMutablePointer<CChar>?
    let rc = sqlite3_exec(db, sql, nil, nil, &message)
    if rc != SQLITE_OK {
        defer { sqlite3_free(message) }
        throw StoreError.sqlite(code: rc, message: message.map { String(cString: $0) } ?? "", context: sql)
    }
}

/// One integer a query returns, read through the C API.
func sqliteInt(_ path: String, _ sql: String) throws -> Int64 {
    var db: OpaquePointer?
    guard rawOpen(path, &db, SQLITE_OPEN_READONLY) == SQLITE_OK else { return -1 }
    defer { sqlite3_close(db) }
    var st: OpaquePointer?
    guard sqlite3_prepare_v2(db, sql, -1, &st, nil) == SQLITE_OK else { return -1 }
    defer { sqlite3_finalize(st) }
    return sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1
}

