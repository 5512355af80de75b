import ChildProcess
import Foundation
import Synchronization
import Locking

/// A throwaway PostgreSQL cluster for the uplink's tests and benchmark: `initdb` in a temporary directory,
/// `pg_ctl` serving on a Unix socket in that directory and on a loopback port (password-only
/// there, for the login-refused test). One per test process, started on first use and stopped
/// at exit. As root the server programs run as the `postgres` account (initdb refuses root).
/// Blocking: call from off the cooperative pool (`offThread`).
package final class PostgresCluster: Sendable {
    /// Debian's server programs (the `postgresql` package; .ci/run and scripts/setup.sh install it).
    package static let binDirectory: String = {
        let env = ProcessInfo.processInfo.environment["HEALTHGATE_PG_BIN"]
        if let env { return env }
        let base = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []).compactMap(Int.init).sorted()
        return "\(base)/\(versions.last ?? 15)/bin"
    }()

    static let shared = Lock<PostgresCluster?>(nil)

    /// The process-wide cluster, started on first use.
    package static func get() throws -> PostgresCluster {
        try shared.withLock { c in
            if let c { return c }
            let made = try PostgresCluster()
            c = made
            atexit { PostgresCluster.shared.withLock { $0?.stopAtExit() } }
            return made
        }
    }

    package let directory: String
    package let port: Int
    package let startSeconds: Double

    private init() throws {
        let t0 = Date()
        let template = NSTemporaryDirectory() + "hg-pg-XXXXXX"
        var buf = Array(template.utf8CString)
        guard mkdtemp(&buf) != nil else { throw Failure("mkdtemp failed: \(String(cString: strerror(errno)))") }
        directory = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if geteuid() == 0 {
            guard let pw = getpwnam("postgres") else { throw Failure("running as root and there is no postgres account to run the server as (install Debian's postgresql package)") }
            chown(directory, pw.pointee.pw_uid, pw.pointee.pw_gid)
        }
        port = try Self.freePort()
        try Self.server(["initdb", "-D", directory + "/data", "-U", "postgres", "-A", "trust", "--auth-host=scram-sha-256",
                         "--no-sync", "-E", "UTF8", "--locale=C"])
        try Self.start(directory: directory, port: port)
        startSeconds = Date().timeIntervalSince(t0)
        print("PostgreSQL test cluster: initdb + start took \(String(format: "%.2f", startSeconds)) s (\(directory), port \(port))")
    }

    /// Starts the server (again).
    package func start() throws { try Self.start(directory: directory, port: port) }

    private static func start(directory: String, port: Int) throws {
        try server(["pg_ctl", "-D", directory + "/data", "-l", directory + "/log", "-w", "-t", "60", "-o",
                    "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=50",
                    "start"])
    }

    /// Stops it at once (`immediate`: like a crash; the next start recovers).
    package func stop(mode: String = "immediate") throws {
        try Self.server(["pg_ctl", "-D", directory + "/data", "-w", "-t", "60", "-m", mode, "stop"])
    }

    private func stopAtExit() {
        _ = try? Self.server(["pg_ctl", "-D", directory + "/data", "-m", "immediate", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A URL for database `db` over the Unix socket, as the superuser (trusted there).
    package func url(_ db: String) -> String { "postgres://postgres@/\(db)?host=\(directory)&port=\(port)" }

    /// A URL over TCP (password authentication) with `password`.
    package func tcpURL(_ db: String, password: String) -> String { "postgres://postgres:\(password)@127.0.0.1:\(port)/\(db)?sslmode=disable" }

    /// Starts the server when it is not running (a test that stopped it failed before its
    /// restart), so one failure does not fail every later test; says so on stdout.
    package func ensureRunning() throws {
        let r = try Self.run((geteuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : [])
                             + ["\(Self.binDirectory)/pg_ctl", "-D", directory + "/data", "status"], outputToFiles: true)
        if r.status != 0 {
            print("PostgreSQL test cluster was not running (pg_ctl status \(r.status)); starting it again")
            try start()
        }
    }

    /// Makes a new empty database and returns its name.
    package func createDatabase(_ name: String) throws -> String {
        try ensureRunning()
        _ = try psql("postgres", "CREATE DATABASE \(name)")
        return name
    }

    /// Runs `sql` with psql (an independent client) on `db`; rows as lines, columns split by '|'.
    package func psql(_ db: String, _ sql: String) throws -> [String] {
        let r = try Self.run(["\(Self.binDirectory)/psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", directory,
                              "-p", "\(port)", "-U", "postgres", "-d", db, "-c", sql])
        guard r.status == 0 else { throw Failure("psql failed (\(r.status)) on \(sql.prefix(80)): \(r.stderr)") }
        return r.stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        package init(_ d: String) { description = d }
    }

    private static func server(_ arguments: [String]) throws {
        var args = arguments
        args[0] = "\(binDirectory)/\(args[0])"
        if geteuid() == 0 { args = ["/usr/sbin/runuser", "-u", "postgres", "--"] + args }
        // The server pg_ctl starts inherits pg_ctl's stdout and stderr: never pipes this process
        // reads to their end (they would stay open as long as the server runs).
        let r = try run(args, outputToFiles: true)
        guard r.status == 0 else { throw Failure("\(arguments.prefix(2).joined(separator: " ")) failed (\(r.status)): \(r.stdout) \(r.stderr)") }
    }

    package static func run(_ arguments: [String], outputToFiles: Bool = false) throws -> (status: Int32, stdout: String, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: arguments[0])
        p.arguments = Array(arguments.dropFirst())
        p.currentDirectoryURL = URL(fileURLWithPath: "/")
        if outputToFiles {
            // posix_spawn + waitpid (ChildProcess), output to files.
            let base = NSTemporaryDirectory() + "hg-pg-out-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: base + ".out"); try? FileManager.default.removeItem(atPath: base + ".err") }
            let child = try WatchedChild(arguments, stdout: .file(base + ".out"), stderr: .file(base + ".err"))
            let status = try child.wait(timeout: 120, interval: 20)
            return (status, (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? "",
                    (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? "")
        }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let errData = Lock(Data())
        let reader = Thread { let d = err.fileHandleForReading.readDataToEndOfFile(); errData.withLock { $0 = d } }
        reader.start()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        while !reader.isFinished { usleep(1000) }
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: errData.withLock { $0 }, as: UTF8.self))
    }

    /// A TCP port nothing listens on now (the kernel's pick).
    package static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard ok else { throw Failure("cannot pick a free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}
