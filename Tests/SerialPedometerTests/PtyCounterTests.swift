import Foundation
import Testing
@testable import SerialPedometer

/// Counter cases end to end through a real pty: wraps at each width, resets with and without
/// `boot`, duplicates, reordering and a gap, with the exact totals.
@Suite(.serialized) struct PtyCounterTests {
    private func run(_ lines: [String], bits: Int? = nil) throws -> PtyRig {
        let pty = try PtyPeer()
        defer { withExtendedLifetime(pty) {} }  // the master must outlive the reads
        let rig = try PtyRig(path: pty.path, session: makeSession(bits: bits))
        for l in lines { pty.send(l + "\n") }
        #expect(rig.wait { $0.readings.count + $0.rejections.count == lines.count })
        rig.stop()
        return rig
    }

    private func total(_ rig: PtyRig) -> UInt64 { rig.samples.reduce(0) { $0 + $1.steps } }
    private func notes(_ rig: PtyRig) -> [String] {
        rig.events.compactMap { if case .counter(let e) = $0 { e.code } else { nil } }
    }

    @Test(arguments: [16, 24, 32])
    func wrapAtEachWidth(_ bits: Int) throws {
        let top = UInt64(1) << UInt64(bits)
        let rig = try run(["\(top - 5)", "\(top - 2)", "1", "4"], bits: bits)
        #expect(total(rig) == 9)
        #expect(notes(rig).contains("wrap"))
    }

    @Test func resetWithAndWithoutBoot() throws {
        let withBoot = try run([#"{"steps":500,"boot":"x1"}"#, #"{"steps":510,"boot":"x1"}"#,
                                #"{"steps":20,"boot":"x2"}"#, #"{"steps":22,"boot":"x2"}"#])
        #expect(total(withBoot) == 10 + 20 + 2)
        #expect(withBoot.events.contains(.counter(.reset(certain: true))))
        let without = try run(["steps:500", "steps:510", "steps:6", "steps:9"])
        #expect(total(without) == 10 + 6 + 3)
        #expect(without.events.contains(.counter(.reset(certain: false))))
    }

    @Test func duplicatesReorderingAndAGap() throws {
        let rig = try run(["steps=10,seq=1", "steps=12,seq=2", "steps=12,seq=2", "steps=20,seq=4",
                           "steps=15,seq=3", "steps=30,seq=9", "steps=31,seq=10"])
        #expect(total(rig) == 21)
        let n = notes(rig)
        #expect(n.filter { $0 == "duplicate" }.count == 1)
        #expect(n.filter { $0 == "out-of-order" }.count == 1)
        #expect(n.filter { $0 == "seq-gap" }.count == 2)
        #expect(!n.contains("reset"))
    }
}
