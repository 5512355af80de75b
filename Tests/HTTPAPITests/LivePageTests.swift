import Foundation
import HealthGateTesting
import HealthStore
import Testing

/// The live page at `/` (docs/http-api.md, "The live page"): served from the binary with a strict
/// content security policy and nothing from another origin, and — in a real browser, Debian's
/// headless Chromium driven by the pinned Selenium of `.venv-browser/` — against `run` with
/// simulated straps and pedometers (Tests/HTTPAPITests/live_page_browser.py).
@Suite("The live page: served from the binary, and checked in a real browser against run", .serialized)
struct LivePageTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("/, /live.css and /live.js are served without a token, from the binary, own origin only; ?token= is never logged")
    func served() async throws {
        let db = TempStore()
        try db.open().save([try heartRate(70, at: 0)])
        let server = try await ServeProcess.start(db: db.path)
        defer { server.stop() }
        let secret = "hg_0123456789abcdef_" + String(repeating: "ab", count: 32)
        let page = try await server.request("GET", "/?token=\(secret)", headers: [])
        #expect(page.status == 200)
        #expect(page.body.contains("<script src=\"/live.js\" defer></script>") && page.body.contains("href=\"/live.css\""), "\(page.body.prefix(500))")
        let headers = try await offThread {
            try HealthGateExecutable.run(["-s", "-D", "-", "-o", "/dev/null", server.base + "/"], timeout: .seconds(30),
                                         launcher: URL(fileURLWithPath: "/usr/bin/curl")).stdout.lowercased()
        }
        #expect(headers.contains("content-security-policy: default-src 'none'; script-src 'self'"), "\(headers)")
        #expect(headers.contains("content-type: text/html"))
        for (path, type, marker) in [("/live.js", "text/javascript", "/v1/live"), ("/live.css", "text/css", ".tile")] {
            let r = try await server.get(path, token: nil)
            #expect(r.status == 200 && r.body.contains(marker), "\(path): \(r.status)")
            let h = try await offThread {
                try HealthGateExecutable.run(["-s", "-D", "-", "-o", "/dev/null", server.base + path], timeout: .seconds(30),
                                             launcher: URL(fileURLWithPath: "/usr/bin/curl")).stdout.lowercased()
            }
            #expect(h.contains("content-type: \(type)"), "\(h)")
        }
        // Nothing from another origin: a gym's Pi has no internet.
        for path in ["/", "/live.js", "/live.css"] {
            // (the SVG namespace is a name, not a place the page loads anything from)
            let body = try await server.get(path, token: nil).body.replacingOccurrences(of: "'http://www.w3.org/2000/svg'", with: "")
            #expect(!body.contains("http://") && !body.contains("https://") && !body.contains("//cdn"), "\(path) names another origin")
        }
        // The page holds no data: the API behind it still needs the token.
        #expect(try await server.get("/v1/devices", token: nil).status == 401)
        server.stop()
        #expect(!server.stderr.contains(secret), "the token in the page's address was logged: \(server.stderr)")
    }

    @Test("in headless Chromium against run with simulated straps: tiles show the last bpm, a halted strap turns stale, step bars equal stats, a workout shows while it runs")
    func browser() async throws {
        let python = Self.root.appendingPathComponent(".venv-browser/bin/python")
        var missing: [String] = []
        if !FileManager.default.isExecutableFile(atPath: python.path) { missing.append(python.path) }
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: tool) {
            missing.append(tool)
        }
        guard missing.isEmpty else {
            let note = "LivePageTests: \(missing.joined(separator: ", ")) missing: run scripts/test.sh (it installs Debian's chromium and chromium-driver and the pinned Selenium)"
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record(Comment(rawValue: note)) } else { print("note: \(note); skipped") }
            return
        }
        let healthgate = try #require(HealthGateExecutable.url)
        let tmp = TempStore()
        let dir = tmp.dir
        // HEALTHGATE_LIVE_PAGE_SCREENSHOTS=docs keeps the screenshots (docs/live-page*.png).
        let shots = ProcessInfo.processInfo.environment["HEALTHGATE_LIVE_PAGE_SCREENSHOTS"].map { URL(fileURLWithPath: $0) } ?? dir
        let script = Self.root.appendingPathComponent("Tests/HTTPAPITests/live_page_browser.py").path
        let arguments = [script, "--healthgate", healthgate.path,
                         "--screenshot", shots.appendingPathComponent("live-page.png").path,
                         "--phone-screenshot", shots.appendingPathComponent("live-page-phone.png").path]
        let r = try await offThread {
            try HealthGateExecutable.run(arguments, timeout: .seconds(300), launcher: python)
        }
        print("live page browser check: \(r.stdout)")
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: shots.appendingPathComponent("live-page.png").path))
    }
}
