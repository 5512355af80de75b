import Foundation
import NIOSSL
import PostgresNIO
import Sysexits

/// Where the uplink connects, read from a libpq-style URL:
/// `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE` or, over a Unix socket,
/// `postgres://USER@/DATABASE?host=/run/postgresql` (the socket directory, as libpq takes it;
/// the socket file is `.s.PGSQL.PORT`). `postgresql://` is the same. Without a user the
/// current account's name is used (as psql does); without a password, `PGPASSWORD`.
/// `sslmode`: `disable`, `prefer` (default over TCP), `require` (encrypted, unverified, as in
/// libpq), `verify-full` (encrypted, the certificate checked against the system's roots and
/// the host name).
package struct UplinkURL: Sendable, Hashable {
    package enum Endpoint: Sendable, Hashable {
        case tcp(host: String, port: Int)
        case unixSocket(path: String)
    }

    package enum SSLMode: String, Sendable, Hashable { case disable, prefer, require, verifyFull = "verify-full" }

    package var endpoint: Endpoint
    package var user: String
    package var password: String?
    package var database: String
    package var sslMode: SSLMode

    /// The server as a user would name it in a message (no password).
    package var display: String {
        switch endpoint {
        case .tcp(let h, let p): return "\(user)@\(h):\(p)/\(database)"
        case .unixSocket(let path): return "\(user)@\(path)/\(database)"
        }
    }

    /// Parses `text`.
    /// - Throws: ``UplinkError`` (64) naming what is wrong with it.
    package init(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        func bad(_ why: String) -> UplinkError {
            UplinkError("'\(Self.redacted(text))' is not a PostgreSQL URL: \(why); write postgres://USER:PASSWORD@HOST:5432/DATABASE (or postgres://USER@/DATABASE?host=/run/postgresql for a Unix socket).", .usage)
        }
        guard let c = URLComponents(string: text) else { throw bad("it cannot be parsed as a URL") }
        guard let scheme = c.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw bad("the scheme must be postgres:// or postgresql://")
        }
        var query: [String: String] = [:]
        for item in c.queryItems ?? [] {
            guard let v = item.value else { throw bad("the parameter '\(item.name)' has no value") }
            query[item.name] = v
        }
        let known: Set<String> = ["host", "port", "sslmode", "user", "password", "dbname", "application_name", "connect_timeout"]
        if let unknown = query.keys.sorted().first(where: { !known.contains($0) }) {
            throw bad("the parameter '\(unknown)' is not supported (supported: \(known.sorted().joined(separator: ", ")))")
        }
        var port = 5432
        if let p = c.port { port = p }
        if let p = query["port"] {
            guard let n = Int(p) else { throw bad("the port '\(p)' is not a number") }
            port = n
        }
        guard (1...65535).contains(port) else { throw bad("the port \(port) is outside 1…65535") }
        let host = c.host.flatMap { $0.isEmpty ? nil : $0 } ?? query["host"]
        if let host, host.hasPrefix("/") {
            endpoint = .unixSocket(path: (host as NSString).appendingPathComponent(".s.PGSQL.\(port)"))
        } else if let host {
            endpoint = .tcp(host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, port: port)
        } else {
            endpoint = .unixSocket(path: "/var/run/postgresql/.s.PGSQL.\(port)")
        }
        let path = c.path.hasPrefix("/") ? String(c.path.dropFirst()) : c.path
        let u = c.user.flatMap { $0.isEmpty ? nil : $0 } ?? query["user"] ?? environment["PGUSER"] ?? Self.accountName()
        guard let u else { throw bad("it names no user and this account's name is unknown") }
        user = u
        password = c.password ?? query["password"] ?? environment["PGPASSWORD"]
        database = query["dbname"] ?? (path.isEmpty ? u : path)
        guard !database.contains("/") else { throw bad("the database name '\(database)' contains '/'") }
        let socket: Bool
        if case .unixSocket = endpoint { socket = true } else { socket = false }
        let mode = query["sslmode"] ?? (socket ? "disable" : "prefer")
        guard let m = SSLMode(rawValue: mode) else {
            throw bad("sslmode '\(mode)' is not one of disable, prefer, require, verify-full")
        }
        guard !(socket && m != .disable && m != .prefer) else { throw bad("a Unix socket carries no TLS (sslmode=\(mode))") }
        sslMode = m
    }

    /// postgres-nio's configuration for this URL.
    /// - Throws: ``UplinkError`` (78) when a TLS context cannot be made.
    package func configuration() throws -> PostgresConnection.Configuration {
        var config: PostgresConnection.Configuration
        switch endpoint {
        case .unixSocket(let path):
            config = .init(unixSocketPath: path, username: user, password: password, database: database)
        case .tcp(let host, let port):
            let tls: PostgresConnection.Configuration.TLS
            do {
                switch sslMode {
                case .disable: tls = .disable
                case .prefer, .require:
                    var t = TLSConfiguration.makeClientConfiguration()
                    t.certificateVerification = .none
                    let ctx = try NIOSSLContext(configuration: t)
                    tls = sslMode == .prefer ? .prefer(ctx) : .require(ctx)
                case .verifyFull:
                    tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                }
            } catch {
                throw UplinkError("cannot set up TLS for \(display) (\(error)); check the system's CA certificates or use sslmode=require.", .config)
            }
            config = .init(host: host, port: port, username: user, password: password, database: database, tls: tls)
        }
        config.options.connectTimeout = .seconds(10)
        return config
    }

    /// `text` with any password replaced by `***`, for messages.
    package static func redacted(_ text: String) -> String {
        guard var c = URLComponents(string: text) else { return "<unparsable URL>" }
        if c.password != nil { c.password = "***" }
        if let items = c.queryItems, items.contains(where: { $0.name == "password" }) {
            c.queryItems = items.map { $0.name == "password" ? URLQueryItem(name: "password", value: "***") : $0 }
        }
        return c.string ?? "<URL>"
    }

    private static func accountName() -> String? {
        guard let pw = getpwuid(geteuid()), let name = pw.pointee.pw_name else { return nil }
        return String(cString: name)
    }
}
