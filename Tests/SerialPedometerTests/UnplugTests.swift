import Foundation
import Testing
@testable import SerialPedometer
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Unplug (the pty master closed) is one clean event; a re-plug continues the same count.
@Suite(.serialized) struct UnplugTests {
    @Test func unplugEndsTheReaderOnceAndReplugContinuesExactly() throws {
        let first = try PtyPeer()
        defer { withExtendedLifetime(first) {} }  // the master must outlive the reads
        let rig = try PtyRig(path: first.path, session: makeSession())
        var sent = 0
        for c in [0, 4, 9] {
            let line = "{\"steps\":\(c),\"boot\":\"A\"}\n"
            first.send(line)
            sent += line.utf8.count
        }
        #expect(rig.wait { $0.readings.count == 3 })
        first.send("{\"steps\":12")            // half a line, then the cable is pulled —
        sent += 11
        // once the reader has it (a hang-up discards what the tty still buffers).
        #expect(rig.wait { $0.bytesReceived == sent })
        first.unplug()
        #expect(rig.wait { $0.goneReason != nil })
        rig.reader.wait()                         // the thread really ended: no busy loop
        #expect(rig.eventsAfterEnd == 0)
        #expect(rig.rejections.count == 1)        // the truncated line, counted
        let state = rig.session.counter.state
        rig.port.close()

        // Re-plug: a new pty (a new tty node), the counter state carried over.
        let second = try PtyPeer()
        defer { withExtendedLifetime(second) {} }  // the master must outlive the reads
        let rig2 = try PtyRig(path: second.path, session: makeSession(state: state))
        defer { rig2.stop() }
        for c in [15, 20] { second.send("{\"steps\":\(c),\"boot\":\"A\"}\r\n") }
        #expect(rig2.wait { $0.readings.count == 2 })
        let total = (rig.samples + rig2.samples).reduce(0) { $0 + $1.steps }
        #expect(total == 20)
        #expect(rig2.samples.first?.steps == 6)
    }

    @Test func stopIsCleanWhileIdle() throws {
        let pty = try PtyPeer()
        defer { withExtendedLifetime(pty) {} }  // the master must outlive the reads
        let rig = try PtyRig(path: pty.path, session: makeSession())
        rig.stop()
        #expect(rig.goneReason == nil)
        #expect(rig.eventsAfterEnd == 0)
    }
}
