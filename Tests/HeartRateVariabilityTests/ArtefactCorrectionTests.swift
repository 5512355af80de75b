import Foundation
import HealthGateTesting
@testable import HeartRateVariability
import Testing

/// Lipponen & Tarvainen's artefact correction and the time-domain measures, checked beat for beat
/// against an independent implementation: neurokit2 (signal_fixpeaks(method="Kubios"), hrv_time),
/// pinned from PyPI in .venv-hrv/ by scripts/test.sh.
@Suite("HRV: artefact correction and SDNN/RMSSD/pNN50 agree with neurokit2 beat for beat")
struct ArtefactCorrectionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let python = root.appendingPathComponent(".venv-hrv/bin/python")

    /// A resting series: 800 ticks (≈ 781 ms) with a breathing rhythm and a little noise (seeded).
    static func rr(_ count: Int, seed: UInt64) -> [Int64] {
        var x = seed
        return (0..<count).map { i in
            x = x &* 6364136223846793005 &+ 1442695040888963407
            let noise = Double(x >> 33) / Double(1 << 31) * 16 - 8
            return Int64(800 + 40 * sin(Double(i) * 2 * .pi / 4.5) + noise)
        }
    }

    static func beats(_ rr: [Int64]) -> [Int64] { rr.reduce(into: [0]) { $0.append($0.last! + $1) } }

    /// The cases: clean series, each artefact class injected, several together, a constant one.
    static var cases: [(name: String, rr: [Int64])] {
        var ectopic = rr(300, seed: 2); ectopic[100] = ectopic[100] * 6 / 10; ectopic[101] += ectopic[100] * 4 / 6
        var missed = rr(300, seed: 3); missed[150] += missed.remove(at: 151)
        var extra = rr(300, seed: 4); let e = extra[200]; extra[200] = e * 3 / 10; extra.insert(e - e * 3 / 10, at: 201)
        var long = rr(300, seed: 5); long[120] = long[120] * 15 / 10
        var mixed = rr(600, seed: 6)
        mixed[50] = mixed[50] * 6 / 10; mixed[51] += mixed[50] * 4 / 6
        mixed[200] += mixed.remove(at: 201)
        let m = mixed[400]; mixed[400] = m / 2; mixed.insert(m - m / 2, at: 401)
        mixed[500] = mixed[500] * 16 / 10
        return [("clean", rr(300, seed: 1)), ("clean short", rr(40, seed: 7)), ("ectopic", ectopic), ("missed", missed),
                ("extra", extra), ("long", long), ("mixed", mixed), ("constant", Array(repeating: 800, count: 100))]
    }

    @Test("each case: the same artefacts, the same corrected beats, the same measures as neurokit2")
    func agreesWithNeurokit() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python.path) else {
            let note = "HeartRateVariabilityTests: \(Self.python.path) is missing: run scripts/test.sh (it installs neurokit2)"
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record(Comment(rawValue: note)) } else { print("note: \(note); skipped") }
            return
        }
        let cases = Self.cases
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hrv-cases-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try JSONSerialization.data(withJSONObject: cases.map { ["beats": Self.beats($0.rr)] }).write(to: file)
        let r = try HealthGateExecutable.run([Self.root.appendingPathComponent("Tests/HeartRateVariabilityTests/neurokit_hrv.py").path, file.path],
                                             launcher: Self.python)
        try #require(r.status == 0, "neurokit2 failed: \(r.stderr)")
        let peers = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        for (c, peer) in zip(cases, peers) {
            let ours = ArtefactCorrection.correct(Self.beats(c.rr))
            let theirs = try #require(peer["artefacts"] as? [String: [Int]])
            #expect(ours.artefacts.ectopic == theirs["ectopic"] && ours.artefacts.missed == theirs["missed"]
                    && ours.artefacts.extra == theirs["extra"] && ours.artefacts.longShort == theirs["longshort"],
                    "\(c.name): ours \(ours.artefacts), neurokit2 \(theirs)")
            #expect(ours.beats.map(Int.init) == peer["beats"] as? [Int], "\(c.name): corrected beats differ")
            let nn = zip(ours.beats, ours.beats.dropFirst()).map { Double($1 - $0) * 1000 / 1024 }
            let m = try #require(TimeDomain(runs: [nn]))
            for (name, value) in [("rmssd", m.rmssd), ("sdnn", m.sdnn), ("pnn50", m.pnn50), ("meanNN", m.meanNN)] {
                let other = try #require(peer[name] as? Double)
                #expect(abs(value - other) <= 1e-9 * max(1, abs(other)), "\(c.name) \(name): ours \(value), neurokit2 \(other)")
            }
        }
    }

    @Test("injected artefacts are found and corrected: the ectopic pair, the missed beat, the extra beat, the long interval")
    func injectedArtefactsAreFound() throws {
        let found = Dictionary(uniqueKeysWithValues: Self.cases.map { ($0.name, ArtefactCorrection.correct(Self.beats($0.rr))) })
        #expect(found["clean"]?.corrected.count == 0 && found["constant"]?.corrected.count == 0)
        #expect(found["ectopic"]?.corrected.ectopic.isEmpty == false)
        #expect(found["missed"]?.corrected.missed == [151], "\(found["missed"]!.corrected)")
        #expect(found["extra"]?.corrected.extra == [201], "\(found["extra"]!.corrected)")
        #expect(found["long"]?.corrected.count ?? 0 > 0)
        // A missed beat is put back: one beat more; an extra one removed: one fewer.
        #expect(found["missed"]?.beats.count == 301 && found["extra"]?.beats.count == 301)
        // Correction brings RMSSD back near the clean series' (same seed without the artefact).
        let clean = try #require(TimeDomain(runs: [Self.rr(300, seed: 3).map { Double($0) * 1000 / 1024 }]))
        let fixed = try #require(found["missed"]).beats
        let m = try #require(TimeDomain(runs: [zip(fixed, fixed.dropFirst()).map { Double($1 - $0) * 1000 / 1024 }]))
        #expect(abs(m.rmssd - clean.rmssd) < 0.1 * clean.rmssd, "corrected \(m.rmssd), clean \(clean.rmssd)")
    }

    @Test("edges: no beats, one, two (nothing to detect); a gap splits runs: no difference is taken across it")
    func edges() throws {
        for beats in [[], [0], [0, 800]] as [[Int64]] { #expect(ArtefactCorrection.correct(beats).beats == beats) }
        #expect(TimeDomain(runs: [[800]]) == nil && TimeDomain(runs: [[800], [900]]) == nil)
        // Two runs: the 800→1000 jump across the gap is not a successive difference.
        let m = try #require(TimeDomain(runs: [[800, 810, 800], [1000, 1060]]))
        #expect(m.intervals == 5 && m.differences == 3)
        #expect(abs(m.rmssd - ((100.0 + 100 + 3600) / 3).squareRoot()) < 1e-12)
        #expect(m.pnn50 == 100.0 / 5)   // one difference over 50 ms, of five intervals
    }
}
