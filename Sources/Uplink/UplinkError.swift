import Foundation
import PostgresNIO
import Sysexits

/// Why an uplink push failed: one sentence (what, why, what to do) and its sysexits code.
package struct UplinkError: Error, Sendable, CustomStringConvertible, SysexitConvertible {
    /// The sentence a user reads.
    package let message: String
    /// The exit code: 64 bad URL, 78 configuration (no such database, gateway name taken),
    /// 69 server unreachable, 77 authentication or permission, 75 a transient server failure,
    /// 65 data the server refused.
    package let sysexit: Sysexit

    package init(_ message: String, _ code: Sysexit) {
        self.message = message
        self.sysexit = code
    }

    package var description: String { message }

    /// True when trying again later may succeed (the daemon's loop retries these with backoff;
    /// a bad URL or a refused password is reported and retried only at the long backoff).
    package var isTransient: Bool { sysexit == .unavailable || sysexit == .tempFail }

    /// Maps what postgres-nio threw to a sentence and a code, naming the server `target`.
    package static func from(_ error: any Error, target: String) -> UplinkError {
        if let e = error as? UplinkError { return e }
        if let e = error as? PSQLError {
            if let info = e.serverInfo {
                let state = info[.sqlState] ?? ""
                let text = info[.message] ?? "no message"
                switch state {
                case "28P01", "28000":
                    return UplinkError("PostgreSQL at \(target) refused the login (\(text)); check the user and password in the URL (or PGPASSWORD) and pg_hba.conf.", .noPermission)
                case "42501":
                    return UplinkError("PostgreSQL at \(target) denied a permission the uplink needs (\(text)); grant the uplink's role CREATE on the database (first run) and write access to schema healthgate.", .noPermission)
                case "3D000":
                    return UplinkError("PostgreSQL at \(target) has no such database (\(text)); create it (createdb) or fix the database name in the URL.", .config)
                case "57P01", "57P02", "57P03":
                    return UplinkError("PostgreSQL at \(target) is shutting down or starting (\(text)); nothing committed is lost and nothing is sent twice — push again when the server is back.", .unavailable)
                case _ where state.hasPrefix("08") || state.hasPrefix("57") || state.hasPrefix("53") || state == "40001" || state == "40P01":
                    return UplinkError("PostgreSQL at \(target) failed for a reason that may pass (\(state): \(text)); nothing was lost, the next push resends from the last committed anchor.", .tempFail)
                default:
                    return UplinkError("PostgreSQL at \(target) refused the upload (\(state): \(text)); nothing was lost locally — fix the cause and push again.", .dataError)
                }
            }
            switch e.code {
            case .connectionError:
                let why = e.underlying.map { "\($0)" } ?? "no answer"
                return UplinkError("cannot reach PostgreSQL at \(target) (\(why)); check that the server runs and the host, port or socket in the URL; samples stay queued locally and are sent on the next push.", .unavailable)
            case .serverClosedConnection, .uncleanShutdown, .clientClosedConnection:
                return UplinkError("the connection to PostgreSQL at \(target) was lost mid-upload; nothing committed is lost and nothing is sent twice — push again when the server is back.", .unavailable)
            case .sslUnsupported:
                return UplinkError("PostgreSQL at \(target) does not offer TLS but the URL requires it (sslmode); enable ssl on the server or use sslmode=prefer or disable.", .config)
            case .unsupportedAuthMechanism, .authMechanismRequiresPassword, .saslError:
                return UplinkError("PostgreSQL at \(target) asks for an authentication the uplink cannot give (\(e.code)); put a password in the URL or PGPASSWORD, or allow scram-sha-256/md5 in pg_hba.conf.", .noPermission)
            default:
                return UplinkError("PostgreSQL at \(target) failed (\(e.code)); push again, and check the server's log if it persists.", .unavailable)
            }
        }
        if let e = error as? PostgresDecodingError {
            return UplinkError("PostgreSQL at \(target) answered with a value of an unexpected type (\(e.code)); is healthgate's schema there changed by hand?", .dataError)
        }
        if error is ChannelError || error is IOError {
            return UplinkError("cannot reach PostgreSQL at \(target) (\(error)); check that the server runs and the host, port or socket in the URL; samples stay queued locally.", .unavailable)
        }
        return UplinkError("cannot reach PostgreSQL at \(target) (\(error)); check that the server runs and the URL; samples stay queued locally and are sent on the next push.", .unavailable)
    }
}
