import Foundation
import Testing
@testable import BluetoothLinux

/// An adapter powered off or removed under a connect or a link: the kernel says only "no route
/// to host" or "connection reset"; ``BluetoothError/blamingAdapter(_:)`` says which, and what to
/// do, instead of sending the user after the strap.
@Suite("Errors name the adapter when it was powered off or removed")
struct AdapterPresenceTests {
    static let strap = BluetoothAddress("F0:48:47:00:00:0A")!
    static var unreachable: BluetoothError { BluetoothError(errno: EHOSTUNREACH, during: .connect(strap, timeoutSeconds: 10)) }
    static var reset: BluetoothError { BluetoothError(errno: ECONNRESET, during: .io(strap)) }

    @Test func aConnectWithNoPoweredAdapterSaysPoweredOff() {
        let e = Self.unreachable.blamingAdapter { .poweredOff("hci0") }
        #expect(e.kind == .adapterDown)
        #expect(e.message.contains("hci0 is powered off") && e.message.contains("power on"))
        #expect(!e.message.contains("wear the strap"))
        #expect(BluetoothError.exitCode(for: e.kind) == 69)
    }

    @Test func aConnectWithNoAdapterAtAllSaysSo() {
        let e = Self.unreachable.blamingAdapter { .absent }
        #expect(e.kind == .noAdapter)
        #expect(e.message.contains("No Bluetooth adapter"))
    }

    @Test func aConnectThroughAPoweredAdapterStillBlamesTheStrap() {
        let e = Self.unreachable.blamingAdapter { .up }
        #expect(e.kind == .deviceNotFound)
        #expect(e.message.contains("wear the strap"))
    }

    @Test func aLinkEndedByPowerOffNamesTheAdapter() {
        let e = Self.reset.blamingAdapter { .poweredOff("hci1") }
        #expect(e.kind == .linkLost)
        #expect(e.message.contains("hci1 was powered off") && e.message.contains("btmgmt --index 1 power on"))
        #expect(!e.message.contains("closer"))
    }

    @Test func aLinkEndedByARemovedAdapterSaysItWentAway() {
        let e = Self.reset.blamingAdapter { .absent }
        #expect(e.kind == .linkLost)
        #expect(e.message.contains("went away"))
        #expect(!e.message.contains("closer"))
    }

    @Test func aLinkLostWhileTheAdapterIsUpIsTheStrapsRange() {
        let e = Self.reset.blamingAdapter { .up }
        #expect(e.message.contains("closer"))
    }

    /// Only the two errors an adapter going away looks like ask the kernel about adapters.
    @Test func otherErrorsDoNotAskAboutTheAdapter() {
        var asked = 0
        for e in [BluetoothError(errno: EACCES, during: .connect(Self.strap, timeoutSeconds: 1)),
                  BluetoothError(errno: ETIMEDOUT, during: .connect(Self.strap, timeoutSeconds: 1)),
                  BluetoothError(errno: ECONNREFUSED, during: .connect(Self.strap, timeoutSeconds: 1))] {
            let again = e.blamingAdapter { asked += 1; return .absent }
            #expect(again.kind == e.kind && again.message == e.message)
        }
        #expect(asked == 0)
    }

    /// The probe itself, against this machine's kernel: whatever it finds, it is consistent with
    /// what ``Adapter/resolve(_:)`` says (CI machines have no adapter; a laptop has one).
    @Test func presenceAgreesWithResolve() {
        let presence = Adapter.presence(nil)
        switch Result(catching: { try Adapter.resolve(nil) }) {
        case .success: #expect(presence == .up)
        case .failure(let e as BluetoothError) where e.kind == .adapterDown: #expect(presence != .up && presence != .absent)
        case .failure: #expect(presence == .absent)
        }
        #expect(Adapter.presence(15) == .absent)   // an id no machine here has
    }
}

/// `pair --bond` that timed out says why in terms of bluetoothd (the real-stack `bluetoothd`
/// scenario sees the "no agent" case against Debian's bluetoothd).
@Suite("A pairing that timed out says what to do about bluetoothd's agent")
struct PairingTimeoutMessageTests {
    static let strap = BluetoothAddress("F0:48:47:00:00:0B")!

    @Test func besideBluetoothdItAsksForAnAgent() {
        let m = BluetoothError.pairingTimedOutMessage(Self.strap, seconds: 15, bluetoothdRunning: true)
        #expect(m.contains("bluetoothd is running") && m.contains("agent NoInputNoOutput") && m.contains("default-agent"))
        #expect(m.contains("F0:48:47:00:00:0B") && m.contains("15 s"))
    }

    @Test func withoutBluetoothdItSaysNobodyAnswered() {
        let m = BluetoothError.pairingTimedOutMessage(Self.strap, seconds: 15, bluetoothdRunning: false)
        #expect(m.contains("nothing confirmed") && m.contains("Start bluetoothd"))
        #expect(!m.contains("bluetoothd is running"))
    }

    /// A connect refused as busy beside bluetoothd says how to free the strap's link; without
    /// bluetoothd, and for other errors, nothing changes.
    @Test func aBusyStrapBesideBluetoothdIsFreedWithBluetoothctl() {
        let busy = BluetoothError(errno: EBUSY, during: .connect(Self.strap, timeoutSeconds: 10))
        let beside = busy.blamingBluetoothd(Self.strap) { true }
        #expect(beside.kind == .busy && beside.message.contains("bluetoothctl disconnect F0:48:47:00:00:0B"))
        #expect(busy.blamingBluetoothd(Self.strap) { false }.message == busy.message)
        let refused = BluetoothError(errno: ECONNREFUSED, during: .connect(Self.strap, timeoutSeconds: 10))
        #expect(refused.blamingBluetoothd(Self.strap) { true }.message == refused.message)
    }

    /// The probe finds a process by its name: a copy of `sleep` named `bluetoothd` is seen while
    /// it runs, and not after (when no real bluetoothd runs on this machine).
    @Test func theProbeSeesAProcessNamedBluetoothd() throws {
        let before = BlueZDaemon.isRunning
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hg-bluez-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let fake = dir.appendingPathComponent("bluetoothd")
        try FileManager.default.copyItem(atPath: "/bin/sleep", toPath: fake.path)
        // Another test's child forked while the copy was open for writing holds its fd until it
        // execs, and exec then fails with ETXTBSY ("Text file busy", Linux): try again shortly.
        var p = Process()
        for attempt in 1... {
            p = Process()
            p.executableURL = fake
            p.arguments = ["30"]
            do {
                try p.run()
                break
            } catch let error as NSError where attempt < 100
                        && (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(ETXTBSY) {
                usleep(20_000)
            }
        }
        #expect(BlueZDaemon.isRunning)
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(BlueZDaemon.isRunning == before)
    }
}
