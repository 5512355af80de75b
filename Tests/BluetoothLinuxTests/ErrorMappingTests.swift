import Glibc
import Testing
@testable import BluetoothLinux

@Suite("Kernel errors as sentences and exit codes")
struct ErrorMappingTests {
    static let strap = BluetoothAddress("C4:7C:8D:6A:1F:02")!
    static let connect = BluetoothError.Operation.connect(strap, timeoutSeconds: 10)

    struct Case: Sendable, CustomTestStringConvertible {
        let errno: Int32
        let op: BluetoothError.Operation
        let kind: BluetoothError.Kind
        let exit: Int32
        let mentions: String
        var testDescription: String { "errno \(errno) \(op) → \(kind)" }
    }

    static let cases: [Case] = [
        Case(errno: EAFNOSUPPORT, op: .open(adapter: nil), kind: .notInKernel, exit: 69, mentions: "modprobe bluetooth"),
        Case(errno: EPROTONOSUPPORT, op: .open(adapter: "hci0"), kind: .notInKernel, exit: 69, mentions: "no Bluetooth support"),
        Case(errno: ENODEV, op: .open(adapter: "hci1"), kind: .noAdapter, exit: 69, mentions: "hci1"),
        Case(errno: ENODEV, op: connect, kind: .noAdapter, exit: 69, mentions: "No Bluetooth adapter"),
        Case(errno: ENETDOWN, op: .hciCommand("LE Set Scan Enable", adapter: "hci0"), kind: .adapterDown, exit: 69, mentions: "power on"),
        Case(errno: ERFKILL, op: .open(adapter: "hci0"), kind: .adapterDown, exit: 69, mentions: "rfkill unblock"),
        Case(errno: EPERM, op: .hciCommand("LE Set Scan Parameters", adapter: "hci0"), kind: .permissionDenied, exit: 77, mentions: "CAP_NET_RAW"),
        Case(errno: EACCES, op: .open(adapter: "hci0"), kind: .permissionDenied, exit: 77, mentions: "setcap"),
        Case(errno: EACCES, op: .secure(strap), kind: .pairingFailed, exit: 69, mentions: "agent"),
        Case(errno: EACCES, op: connect, kind: .pairingFailed, exit: 69, mentions: "C4:7C:8D:6A:1F:02"),
        Case(errno: ETIMEDOUT, op: connect, kind: .connectTimeout, exit: 75, mentions: "within 10 s"),
        Case(errno: ETIMEDOUT, op: .io(strap), kind: .linkLost, exit: 74, mentions: "timed out"),
        Case(errno: EHOSTDOWN, op: connect, kind: .deviceNotFound, exit: 69, mentions: "healthgate scan"),
        Case(errno: EHOSTUNREACH, op: connect, kind: .deviceNotFound, exit: 69, mentions: "address"),
        Case(errno: ECONNREFUSED, op: connect, kind: .connectionRefused, exit: 69, mentions: "refused"),
        Case(errno: EBUSY, op: connect, kind: .busy, exit: 75, mentions: "busy"),
        Case(errno: EALREADY, op: connect, kind: .busy, exit: 75, mentions: "try again"),
        Case(errno: ECONNRESET, op: .io(strap), kind: .linkLost, exit: 74, mentions: "lost"),
        Case(errno: ENOTCONN, op: .io(strap), kind: .linkLost, exit: 74, mentions: "lost"),
        Case(errno: EIO, op: .io(strap), kind: .system, exit: 74, mentions: "errno 5"),
    ]

    @Test(arguments: cases)
    func mapping(_ c: Case) {
        let e = BluetoothError(errno: c.errno, during: c.op)
        #expect(e.kind == c.kind)
        #expect(e.exitCode == c.exit)
        #expect(e.errno == c.errno)
        #expect(e.message.contains(c.mentions), "\(e.message)")
        // One sentence on one line, ending with a full stop, saying what to do after a colon.
        #expect(!e.message.contains("\n"))
        #expect(e.message.hasSuffix("."))
        #expect(e.message.contains(":"))
    }

    @Test func exitCodesAreTheAgreedOnes() {
        var byCode: [Int32: Set<BluetoothError.Kind>] = [:]
        for k in BluetoothError.Kind.allCases { byCode[BluetoothError.exitCode(for: k), default: []].insert(k) }
        #expect(byCode[77] == [.permissionDenied])  // 77 only for missing capabilities
        #expect(byCode[69]?.isSuperset(of: [.notInKernel, .noAdapter, .adapterDown, .deviceNotFound]) == true)
        #expect(byCode[75] == [.connectTimeout, .busy])
        #expect(Set(byCode.keys).isSubset(of: [69, 74, 75, 77]))
    }

    @Test func controllerStatus() {
        let e = BluetoothError.controller(status: 0x0C, command: "LE Set Scan Enable", adapter: "hci0")
        #expect(e.kind == .controllerRejected)
        #expect(e.exitCode == 69)
        #expect(e.message.contains("Command Disallowed (0x0C)"))
        #expect(e.message.contains("btmgmt --index 0"))
    }

    @Test func errnoTextIsTheKernelsWording() {
        #expect(BluetoothError.errnoText(EAFNOSUPPORT) == String(cString: strerror(EAFNOSUPPORT)))
    }
}
