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
final class DaemonLock {
    private let fd: Int32

    private init(fd: Int32) { self.fd = fd }
    deinit { close(fd) }

    /// The lock file for the store at `databasePath`.
    static func path(forDatabase databasePath: String) -> String { databasePath + ".daemon" }

    /// Takes the lock for a daemon on `databasePath` that keeps `straps` connected.
    /// - Throws: ``CLIFailure`` (exit 75) when another `healthgate run` already holds it.
    static func acquire(databasePath: String, straps: [String]) throws -> DaemonLock {
        let file = path(forDatabase: databasePath)
        let fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CLIFailure("cannot create \(file) (\(String(cString: strerror(errno)))): check that the database's directory is writable.", code: .ioError)
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let owner = readOwner(fd)
            close(fd)
            throw CLIFailure("another `healthgate run`\(owner.map { " (pid \($0.pid))" } ?? "") already owns \(databasePath): stop it first, or give this one its own --db.", code: .tempFail)
        }
        let body = JSONOutput.string(["pid": Int(getpid()), "straps": straps]) + "\n"
        _ = ftruncate(fd, 0)
        _ = body.withCString { pwrite(fd, $0, strlen($0), 0) }
        return DaemonLock(fd: fd)
    }

    /// Who owns the store at `databasePath`: the running daemon's pid and straps, or nil when no
    /// daemon runs (no file, or a stale file whose lock nobody holds).
    static func owner(ofDatabase databasePath: String) -> (pid: Int, straps: [String])? {
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
