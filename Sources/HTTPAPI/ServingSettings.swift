import Foundation
import HealthStore
import Logging
import Sysexits

/// How the API is served — what `serve`'s flags and `run`'s `[http]` table both give — and the
/// one set of rules both are checked by: the address, TLS files given as a pair and readable,
/// plain HTTP off loopback only when allowed, the body and live-buffer bounds.
package struct ServingSettings: Sendable, Equatable {
    /// `HOST:PORT` to listen on (port 0: any free port).
    package var listen = "127.0.0.1:8080"
    /// PEM certificate chain and its private key: both for HTTPS, or neither.
    package var certificate: String?
    package var key: String?
    /// Whether a non-loopback address may be served without TLS.
    package var allowPlainHTTP = false
    /// The largest request body accepted (larger: 413).
    package var maxBodyBytes = APIServer.maxBodyBytes
    /// Events a `/v1/live` client may have waiting before its stream is closed.
    package var liveClientBuffer = APIServer.defaultLiveClientBuffer

    package static let maxBodyRange = 1024...(1 << 30)
    package static let liveClientBufferRange = 16...1_000_000

    package init() {}

    /// How one front-end names each setting in a message: `--listen`, or `health.toml: [http] listen`.
    package struct Names: Sendable {
        var listen, certificate, key, allowPlainHTTP, maxBodyBytes, liveClientBuffer: String

        /// `serve`'s options.
        package static let flags = Names(listen: "--listen", certificate: "--certificate", key: "--key",
                                         allowPlainHTTP: "--allow-plain-http", maxBodyBytes: "--max-body-bytes",
                                         liveClientBuffer: "--live-client-buffer")

        /// The keys of a configuration file's `[http]` table (the caller names the file).
        package static let table = Names(listen: "[http] listen", certificate: "[http] certificate", key: "[http] key",
                                         allowPlainHTTP: "allow_plain_http = true", maxBodyBytes: "[http] max_body_bytes",
                                         liveClientBuffer: "[http] live_client_buffer")
    }

    /// Why the settings cannot be served. Its exit code is for `serve`'s flags (64, 66, 65);
    /// `run` exits 78 for any of them, a configuration error.
    package struct Problem: Error, CustomStringConvertible, SysexitConvertible {
        /// What kind of mistake: a value that breaks a rule, a file that cannot be read, TLS
        /// files that do not hold a usable certificate and key.
        package enum Kind: Sendable { case invalid, unreadable, badTLS }
        package let kind: Kind
        /// The sentence: what, why, what to do.
        package let description: String

        package var sysexit: Sysexit {
            switch kind {
            case .invalid: .usage
            case .unreadable: .noInput
            case .badTLS: .dataError
            }
        }
    }

    /// Checks every rule and makes the server; a plain listen off loopback that is allowed is
    /// logged as a warning.
    /// - Throws: ``Problem``, its sentence naming the settings as `names` spells them.
    package func server(store: HealthStore, status: (any DaemonStatus)? = nil, names: Names, logger: Logger) throws(Problem) -> APIServer {
        let address: ListenAddress
        do { address = try ListenAddress(parsing: listen) } catch {
            throw Problem(kind: .invalid, description: "\(names.listen) '\(listen)' is not HOST:PORT: use e.g. 127.0.0.1:8080, [::1]:8080 or 0.0.0.0:8443 (port 0 picks a free one).")
        }
        guard Self.maxBodyRange.contains(maxBodyBytes) else {
            throw Problem(kind: .invalid, description: "\(names.maxBodyBytes) \(maxBodyBytes) is outside 1024…\(Self.maxBodyRange.upperBound) bytes (a sample needs about 300): use e.g. the default, \(APIServer.maxBodyBytes).")
        }
        guard Self.liveClientBufferRange.contains(liveClientBuffer) else {
            throw Problem(kind: .invalid, description: "\(names.liveClientBuffer) \(liveClientBuffer) is outside 16…1,000,000 events: use e.g. the default, \(APIServer.defaultLiveClientBuffer).")
        }
        var tls: APIServer.TLSFiles?
        switch (certificate, key) {
        case (nil, nil): tls = nil
        case let (certificate?, key?):
            for (name, path) in [(names.certificate, certificate), (names.key, key)] where !FileManager.default.isReadableFile(atPath: path) {
                throw Problem(kind: .unreadable, description: "\(name) \(path) cannot be read: give the path of a readable PEM file.")
            }
            tls = APIServer.TLSFiles(certificate: certificate, key: key)
        default:
            throw Problem(kind: .invalid, description: "\(names.certificate) and \(names.key) go together: give both PEM files to serve HTTPS, or neither for plain HTTP.")
        }
        if !address.isLoopback, tls == nil {
            guard allowPlainHTTP else {
                throw Problem(kind: .invalid, description: "\(names.listen) \(address) is reachable from other machines, and without TLS tokens and health data would cross the network in clear text: give \(names.certificate) and \(names.key) to serve HTTPS, or \(names.allowPlainHTTP) to accept that (e.g. on a trusted LAN), or listen on 127.0.0.1.")
            }
            logger.warning("serving plain HTTP on \(address): tokens and health data cross the network unencrypted (\(names.allowPlainHTTP))")
        }
        do {
            return try APIServer(store: store, listen: address, maxBodyBytes: maxBodyBytes, liveClientBuffer: liveClientBuffer,
                                 tls: tls, status: status, logger: logger)
        } catch {
            throw Problem(kind: .badTLS, description: "\(error)")
        }
    }
}
