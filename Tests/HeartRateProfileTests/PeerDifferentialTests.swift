import Foundation
import HealthModel
import HeartRateProfile
import Testing

/// Differential testing against independent decoders (../shared/peers/peers.py): bumble,
/// bluetooth-sig, Wireshark (spec-following) and pycycling, bleakheart, Adafruit, blehrm
/// (known-buggy: reported, never trusted).
///
/// `scripts/test.sh` creates `.venv-peers/` with the pinned peers and setup.sh installs
/// tshark. Without them the test fails under `CI=true` and says so (and skips, loudly, on a
/// developer machine).
@Suite(.serialized) struct PeerDifferentialTests {
    static let specPeers = ["bumble", "bluetooth_sig", "wireshark"]
    static let buggyPeers = ["pycycling", "bleakheart", "adafruit", "blehrm.h10", "blehrm.pro"]

    /// A peer's normalised answer.
    struct PeerResult: Equatable {
        var ok: Bool
        var bpm: Int?
        var contact: String?   // "detected" / "notDetected" / "notSupported"
        var energy: Int?
        var rr: [Int]?
        var error: String?
    }

    /// Every flag byte × every length of 0…19 bytes after it (payloads of 1…20 bytes), with
    /// varied content, plus the empty payload.
    static func generatedPayloads() -> [String] {
        var out = [""]
        for flags in 0..<256 {
            for n in 0..<20 {
                let body = (0..<n).map { String(format: "%02x", (flags &* 7 &+ $0 &* 13 &+ 5) & 0xFF) }.joined()
                out.append(String(format: "%02x", flags) + body)
            }
        }
        return out
    }

    /// Runs peers.py on a plain thread: waiting 10–20 s for a subprocess must not hold one of
    /// the cooperative pool's threads (there are only two here, shared by every test).
    static func runPeers(_ hexes: [String]) async throws -> [String: [String: PeerResult]]? {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try runPeersBlocking(hexes) })
            }
            thread.start()
        }
    }

    static func runPeersBlocking(_ hexes: [String]) throws -> [String: [String: PeerResult]]? {
        let python = Fixtures.repoRoot.appendingPathComponent(".venv-peers/bin/python")
        guard let shared = Fixtures.sharedDirectory,
              FileManager.default.isExecutableFile(atPath: python.path) else { return nil }
        let list = FileManager.default.temporaryDirectory.appendingPathComponent("hg-peers-\(UUID().uuidString).txt")
        try hexes.map { $0.isEmpty ? "''" : $0 }.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: list) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "xargs -a \"$1\" \"$2\" \"$3\"", "sh", list.path, python.path,
                       shared.appendingPathComponent("peers/peers.py").path]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw CocoaError(.executableLoad) }
        var result: [String: [String: PeerResult]] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            guard let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let hex = o["hex"] as? String, let peer = o["peer"] as? String else { continue }
            let contact: String? = switch o["contact"] {
            case let b as Bool: b ? "detected" : "notDetected"
            default: "notSupported"
            }
            var rr = (o["rr_1024"] as? [Int])
            if rr == nil, let ms = o["rr_ms"] as? [Double] { rr = ms.map { Int(($0 * 1.024).rounded()) } }
            result[hex, default: [:]][peer] = PeerResult(
                ok: o["ok"] as? Bool ?? false, bpm: o["bpm"] as? Int, contact: contact,
                energy: o["energy_kj"] as? Int, rr: rr, error: o["error"] as? String)
        }
        return result
    }

    static func ours(_ hex: String) -> PeerResult {
        do {
            let m = try decode(hex)
            return PeerResult(ok: !m.truncated, bpm: Int(m.beatsPerMinute), contact: m.sensorContact.name,
                              energy: m.energyExpendedKJ.map(Int.init), rr: m.rrIntervals.map(Int.init), error: nil)
        } catch {
            return PeerResult(ok: false, error: "\(error)")
        }
    }

    static func same(_ a: PeerResult, _ b: PeerResult) -> Bool {
        a.bpm == b.bpm && a.contact == b.contact && a.energy == b.energy && (a.rr ?? []) == (b.rr ?? [])
    }

    @Test func agreesWithTheSpecFollowingPeers() async throws {
        let vectors = (try? Vector.load())?.map(\.hex) ?? []
        let payloads = Array(Set(vectors + Self.generatedPayloads())).sorted()
        guard let results = try await Self.runPeers(payloads) else {
            let why = "the peer decoders are not installed (.venv-peers/ from scripts/test.sh, ../shared/peers, tshark from scripts/setup.sh)"
            if Fixtures.isCI { Issue.record("CI=true: \(why)") } else { print("PeerDifferentialTests: SKIPPED: \(why)") }
            return
        }
        // Every peer must be present and working, or the comparison means nothing.
        let probe = try #require(results["164d1603"])
        for peer in Self.specPeers + Self.buggyPeers {
            let r = probe[peer]
            #expect(r?.ok == true, "peer \(peer) did not decode a well-formed payload: \(r?.error ?? "missing")")
        }

        var agreed = 0, malformed = 0, undecided: [String] = []
        var buggy: [String: [String]] = [:]
        for hex in payloads {
            guard let peers = results[hex] else { Issue.record("no peer output for \(hex)"); continue }
            let us = Self.ours(hex)
            let spec = Self.specPeers.compactMap { peers[$0] }
            guard spec.count == Self.specPeers.count else { Issue.record("a spec peer is missing for \(hex)"); continue }
            let wireshark = peers["wireshark"]!
            if spec.allSatisfy({ $0.ok && $0.bpm != nil }), spec.dropFirst().allSatisfy({ Self.same($0, spec[0]) }) {
                // The spec-following peers agree on a well-formed payload: so must we.
                agreed += 1
                #expect(us.ok && Self.same(us, spec[0]), "\(hex): peers say \(spec[0]), we say \(us)")
            } else if !wireshark.ok || wireshark.bpm == nil {
                // Wireshark flags it malformed (or finds no value): we reject or mark truncated,
                // and whatever Wireshark still decoded, we decoded identically.
                malformed += 1
                #expect(!us.ok, "\(hex): Wireshark says malformed, we accepted \(us)")
                if wireshark.bpm != nil, us.bpm != nil {
                    #expect(Self.same(us, wireshark), "\(hex): valid prefix differs: Wireshark \(wireshark), we \(us)")
                } else if wireshark.bpm == nil {
                    #expect(us.error != nil, "\(hex): Wireshark found no value, we decoded \(us)")
                }
            } else {
                undecided.append(hex)
            }
            for peer in Self.buggyPeers {
                guard let r = peers[peer] else { continue }
                let comparable = peer.hasPrefix("blehrm") ? (r.rr ?? []) == (us.rr ?? []) : Self.same(r, us)
                if r.ok != us.ok || (r.ok && !comparable) { buggy[peer, default: []].append(hex.isEmpty ? "(empty)" : hex) }
            }
        }
        print("PeerDifferentialTests: \(payloads.count) payloads; spec peers agreed on \(agreed) (we match all), Wireshark flagged \(malformed) malformed (we reject or mark truncated), \(undecided.count) undecided (spec peers disagree among themselves: not asserted)")
        for peer in Self.buggyPeers {
            let bad = buggy[peer] ?? []
            print("  known-buggy peer \(peer): differs from us on \(bad.count) payloads, e.g. \(bad.prefix(4).joined(separator: " "))")
        }
        #expect(agreed > 1000, "too few payloads where the spec peers agree: the harness is probably broken")
    }
}
