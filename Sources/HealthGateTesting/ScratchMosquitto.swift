import ChildProcess
import Foundation

/// A throwaway MQTT broker for tests: Debian's `mosquitto` on a free loopback port, anonymous,
/// without persistence (a restart forgets retained messages, as a broker that lost its disk
/// would), and `mosquitto_sub` as the independent client that reads what reached it.
package final class ScratchMosquitto {
    /// Why the broker could not be had.
    package struct Failure: Error, CustomStringConvertible { package let description: String }

    /// The loopback port it listens on.
    package let port: Int
    private let directory: String
    private var broker: WatchedChild?
    /// The PEM certificate clients trust when the broker speaks TLS (nil: plain MQTT).
    package let certificate: String?

    /// Starts a broker on a free port; with `tls`, over TLS with a self-signed certificate for
    /// 127.0.0.1 made by openssl (``certificate``).
    /// - Throws: when `mosquitto` is missing (scripts/setup.sh installs it) or does not listen.
    package init(tls: Bool = false) throws {
        directory = NSTemporaryDirectory() + "hg-mqtt-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try Self.freePort()
        if tls {
            let made = try WatchedChild(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                         "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem", "-days", "1",
                                         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"])
            guard try made.wait(timeout: 60) == 0 else { throw Failure(description: "openssl could not make a certificate") }
            // mosquitto drops root for its own account: it must be able to read the key.
            chmod(directory, 0o755)
            for f in ["/key.pem", "/cert.pem"] { chmod(directory + f, 0o644) }
            certificate = directory + "/cert.pem"
        } else {
            certificate = nil
        }
        try start()
    }

    deinit {
        broker?.kill()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts the broker (again) on ``port``.
    package func start() throws {
        let conf = directory + "/mosquitto.conf"
        var text = "listener \(port) 127.0.0.1\nallow_anonymous true\npersistence false\n"
        if certificate != nil { text += "certfile \(directory)/cert.pem\nkeyfile \(directory)/key.pem\n" }
        try text.write(toFile: conf, atomically: true, encoding: .utf8)
        let child = try WatchedChild(["mosquitto", "-c", conf], stderr: .file(directory + "/mosquitto.log"))
        broker = child
        for _ in 0..<100 {
            if Self.accepts(port) { return }
            guard try child.poll() else { break }
            usleep(50_000)
        }
        let log = (try? String(contentsOfFile: directory + "/mosquitto.log", encoding: .utf8)) ?? ""
        throw Failure(description: "mosquitto did not listen on 127.0.0.1:\(port): \(log)")
    }

    /// Stops the broker (SIGTERM, then a bounded wait).
    package func stop() throws {
        broker?.signal()
        _ = try broker?.wait(timeout: 10)
        broker = nil
    }

    /// `mosquitto_sub` on `topics` printing `topic payload` lines into a file until stopped;
    /// ``Subscriber/lines`` reads what arrived so far.
    package func subscribe(_ topics: [String], retainedOnly: Bool = false) throws -> Subscriber {
        let file = directory + "/sub-\(UUID().uuidString.prefix(8)).log"
        var args = ["mosquitto_sub", "-h", "127.0.0.1", "-p", String(port), "-q", "1", "-v"]
        if let certificate { args += ["--cafile", certificate] }
        if retainedOnly { args += ["--retained-only", "-W", "3"] }
        for t in topics { args += ["-t", t] }
        return Subscriber(child: try WatchedChild(args, stdout: .file(file)), file: file, endsItself: retainedOnly)
    }

    /// A running `mosquitto_sub`.
    package final class Subscriber {
        let child: WatchedChild
        let file: String
        let endsItself: Bool
        init(child: WatchedChild, file: String, endsItself: Bool) { (self.child, self.file, self.endsItself) = (child, file, endsItself) }
        deinit { child.kill() }

        /// `(topic, payload)` of every message received so far.
        package var messages: [(topic: String, payload: String)] {
            let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map { line in
                let parts = line.split(separator: " ", maxSplits: 1)
                return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
            }
        }

        /// Waits until `condition` holds for the messages (polling), at most `seconds`.
        @discardableResult
        package func wait(seconds: Double, until condition: ([(topic: String, payload: String)]) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if condition(messages) { return true }
                usleep(100_000)
            }
            return condition(messages)
        }

        /// Ends it (or waits for a `--retained-only` one to end by itself).
        package func finish() throws {
            if !endsItself, (try? child.poll()) == true { child.signal(SIGTERM) }
            _ = try child.wait(timeout: 10)
        }
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard bound else { throw Failure(description: "no free loopback port") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
