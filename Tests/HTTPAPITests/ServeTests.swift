import Foundation
import HealthGateTesting
import HealthModel
import HealthStore
import Testing

@Suite("healthgate serve: listening, public endpoints, graceful stop, refused addresses", .serialized)
struct ServeTests {
    @Test("healthz and the OpenAPI document need no token; SIGTERM stops it with status 0")
    func startAndStop() async throws {
        let db = TempStore()
        let server = try await ServeProcess.start(db: db.path)
        let health = try await server.get("/healthz", token: nil)
        #expect(health.status == 200)
        #expect(health.body == #"{"status":"ok"}"# + "\n")
        let doc = try await server.get("/v1/openapi.json", token: nil)
        #expect(doc.status == 200)
        #expect(doc.object?["openapi"] as? String == "3.1.0")
        let status = await offThread { server.stop() }
        #expect(status == 0, "\(server.stderr)")
        #expect(server.stderr.contains("SIGTERM: finishing requests in flight"))
    }

    @Test("SIGTERM while a request is in flight: it is read, saved and answered in full, then serve exits 0")
    func inFlightRequestFinishes() async throws {
        let db = TempStore()
        let server = try await ServeProcess.start(db: db.path)
        let token = try await makeToken(db.path, ["--name", "w", "--read", "all", "--write", "all"])
        // About 24 KB of samples, uploaded at 6 KB/s: the request is in flight for about 4 s.
        let minute = 60.0
        let samples = (0..<200).map { i in
            #"{"type":"stepCount","value":\#(i + 1),"start":"\#(ISO8601.string(at(Double(i) * minute)))","end":"\#(ISO8601.string(at(Double(i + 1) * minute)))"}"#
        }
        let body = Data(("[" + samples.joined(separator: ",") + "]").utf8)
        // curl runs on a thread of its own and SIGTERM goes once the server holds its
        // connection. (After a fixed second, as before, a loaded full run once had no answer at
        // all: curl had not connected when the listener stopped. A thread of its own starts curl
        // whatever the cooperative pool is doing.)
        final class Outcome: @unchecked Sendable { var reply: Result<ServeProcess.Reply, any Error>? }
        let (answered, status, accepted) = try await offThread { () throws -> (ServeProcess.Reply, Int32, Bool) in
            let outcome = Outcome(), done = DispatchSemaphore(value: 0)
            Thread {
                outcome.reply = Result { try server.requestBlocking("POST", "/v1/samples", token: token, body: body, curlOptions: ["--limit-rate", "6k"]) }
                done.signal()
            }.start()
            let accepted = server.waitForAcceptedConnection(deadline: Date().addingTimeInterval(60))
            Thread.sleep(forTimeInterval: 0.5)
            let status = server.stop()
            done.wait()
            return (try outcome.reply!.get(), status, accepted)
        }
        #expect(accepted, "the server never held curl's connection")
        #expect(answered.status == 200, "\(answered.body) \(server.stderr)")
        #expect(answered.object?["inserted"] as? Int == 200, "\(answered.body)")
        #expect(status == 0, "\(server.stderr)")
        #expect(try db.open().samples(SampleQuery(type: .stepCount)).count == 200)
    }

    @Test("a non-loopback address without --allow-plain-http is refused (64); with it, a warning is logged")
    func plainHTTP() async throws {
        let db = TempStore()
        let refused = try await CLI.run(["serve", "--db", db.path, "--listen", "0.0.0.0:0"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--allow-plain-http"))
        let bad = try await CLI.run(["serve", "--db", db.path, "--listen", "localhost"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("is not HOST:PORT"))
        let server = try await ServeProcess.start(db: db.path, ["--allow-plain-http", "--listen", "0.0.0.0:0"])
        #expect(server.stderr.contains("serving plain HTTP"))
        #expect(await offThread { server.stop() } == 0)
    }

    @Test("--certificate and --key serve HTTPS, off loopback without --allow-plain-http; one alone is 64, an unreadable file 66, a bad PEM 65")
    func tls() async throws {
        let db = TempStore()
        let dir = db.dir.path
        let made = try await offThread {
            try HealthGateExecutable.run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                          "-keyout", dir + "/key.pem", "-out", dir + "/cert.pem", "-days", "1",
                                          "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                                         timeout: .seconds(60), launcher: URL(fileURLWithPath: "/usr/bin/openssl"))
        }
        #expect(made.status == 0, "\(made.stderr)")
        let tls = ["--certificate", dir + "/cert.pem", "--key", dir + "/key.pem"]
        let server = try await ServeProcess.start(db: db.path, ["--listen", "0.0.0.0:0"] + tls)
        #expect(server.base.hasPrefix("https://0.0.0.0:"), "\(server.stderr)")
        #expect(!server.stderr.contains("serving plain HTTP"))
        let base = server.base.replacingOccurrences(of: "0.0.0.0", with: "127.0.0.1")
        let token = try await makeToken(db.path, ["--name", "coach", "--read", "all"])
        func curl(_ args: [String]) async throws -> String {
            try await offThread {
                try HealthGateExecutable.run(["-s", "-S", "--max-time", "20"] + args, timeout: .seconds(40),
                                             launcher: URL(fileURLWithPath: "/usr/bin/curl")).stdout
            }
        }
        #expect(try await curl(["--cacert", dir + "/cert.pem", base + "/healthz"]) == #"{"status":"ok"}"# + "\n")
        let types = try await curl(["--cacert", dir + "/cert.pem", "-H", "Authorization: Bearer \(token)", base + "/v1/types"])
        #expect(types.contains("heartRate"), "\(types.prefix(300))")
        // Plain HTTP to the TLS port is not served.
        let plain = try await curl(["-o", "/dev/null", "-w", "%{http_code}", base.replacingOccurrences(of: "https://", with: "http://") + "/healthz"])
        #expect(plain != "200")
        #expect(await offThread { server.stop() } == 0, "\(server.stderr)")

        let half = try await CLI.run(["serve", "--db", db.path, "--listen", "127.0.0.1:0", "--certificate", dir + "/cert.pem"])
        #expect(half.status == 64 && half.stderr.contains("go together"), "\(half.stderr)")
        let missing = try await CLI.run(["serve", "--db", db.path, "--listen", "127.0.0.1:0", "--certificate", dir + "/none.pem", "--key", dir + "/key.pem"])
        #expect(missing.status == 66 && missing.stderr.contains("--certificate \(dir)/none.pem cannot be read"), "\(missing.stderr)")
        try "not a certificate\n".write(toFile: dir + "/bad.pem", atomically: true, encoding: .utf8)
        let bad = try await CLI.run(["serve", "--db", db.path, "--listen", "127.0.0.1:0", "--certificate", dir + "/bad.pem", "--key", dir + "/key.pem"])
        #expect(bad.status == 65 && bad.stderr.contains("cannot be used"), "\(bad.stderr)")
    }

    @Test("unknown paths are 404 and wrong methods 405, as JSON errors")
    func unknownPaths() async throws {
        let db = TempStore()
        let server = try await ServeProcess.start(db: db.path)
        let token = try await makeToken(db.path, ["--name", "all", "--read", "all"])
        let missing = try await server.get("/v1/nothing", token: token)
        #expect(missing.status == 404)
        #expect(missing.error.contains("no such endpoint"))
        let root = try await server.get("/nothing", token: nil)
        #expect(root.status == 404)
        let method = try await server.request("PUT", "/v1/types", token: token)
        #expect(method.status == 405 || method.status == 404, "\(method.body)")
        #expect(!method.error.isEmpty)
        #expect(await offThread { server.stop() } == 0, "\(server.stderr)")
    }
}
