import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The advisory lock `healthgate run` holds beside its database (`<db>.daemon`), so other commands
/// know a daemon owns the straps and the store.
///
/// The file holds one JSON object, `{"pid": …, "straps": ["AA:BB:…", …]}`, and `run` keeps an
/// exclusive `flock(2)` on it for as long as it lives. The kernel drops the lock when the process
/// ends, however it ends (SIGKILL, power loss), so a stale file left behind is recognised as
/// stale: nobody holds its lock. Access follows the file's mode (0600, like the database).
package final class DaemonLock: Sendable {
    private let fd: Int32

    private init(fd: Int32) { self.fd = fd }
    deinit { close(fd) }

    /// The lock file for the store at `databasePath`.
    package static func path(forDatabase databasePath: String) -> String { databasePath + ".daemon" }

    /// Takes the lock for a daemon on `databasePath` that keeps `straps` connected.
    /// - Throws: ``DaemonLockError``: the file cannot be created, or another `healthgate run`
    ///   already holds it.
    package static func acquire(databasePath: String, straps: [String]) throws -> DaemonLock {
        let file = path(forDatabase: databasePath)
        let fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw DaemonLockError.cannotCreate(file, reason: String(cString: strerror(errno)))
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let owner = readOwner(fd)
            close(fd)
            throw DaemonLockError.owned(databasePath, pid: owner?.pid)
        }
        let json = (try? JSONSerialization.data(withJSONObject: ["pid": Int(getpid()), "straps": straps] as [String: Any], options: [.sortedKeys])) ?? Data()
        let body = String(decoding: json, as: UTF8.self) + "\n"
        _ = ftruncate(fd, 0)
        _ = body.withCString { pwrite(fd, $0, strlen($0), 0) }
        return DaemonLock(fd: fd)
    }

    /// Who owns the store at `databasePath`: the running daemon's pid and straps, or nil when no
    /// daemon runs (no file, or a stale file whose lock nobody holds).
    package static func owner(ofDatabase databasePath: String) -> (pid: Int, straps: [String])? {
        let fd = open(path(forDatabase: databasePath), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {   // nobody holds it: stale
            _ = flock(fd, LOCK_UN)
            return nil
        }
        return readOwner(fd) ?? (pid: 0, straps: [])
    }

    private static func readOwner(_ fd: Int32) -> (pid: Int, straps: [String])? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = pread(fd, &buffer, buffer.count, 0)
        guard n > 0,
              let object = try? JSONSerialization.jsonObject(with: Data(buffer[0..<n])) as? [String: Any],
              let pid = (object["pid"] as? NSNumber)?.intValue
        else { return nil }
        return (pid, object["straps"] as? [String] ?? [])
    }
}

/// Why `healthgate run` could not take its store.
package enum DaemonLockError: Error, CustomStringConvertible, Equatable {
    /// The lock file beside the database cannot be created.
    case cannotCreate(String, reason: String)
    /// Another `healthgate run` (pid, when its file says) owns the store.
    case owned(String, pid: Int?)

    package var description: String {
        switch self {
        case .cannotCreate(let file, let reason):
            "cannot create \(file) (\(reason)): check that the database's directory is writable."
        case .owned(let db, let pid):
            "another `healthgate run`\(pid.map { " (pid \($0))" } ?? "") already owns \(db): stop it first, or give this one its own --db."
        }
    }
}
