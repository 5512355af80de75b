import Glibc
import Testing
@testable import BluetoothLinux

/// What this machine's kernel says about AF_BLUETOOTH: the tests below check that the library
/// reports exactly that, so they hold on a machine with and without Bluetooth alike.
func kernelBluetoothErrno() -> Int32? {
    let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), BTPROTO_HCI_VALUE)
    if fd >= 0 { close(fd); return nil }
    return errno
}
let BTPROTO_HCI_VALUE: Int32 = 1

@Suite("A machine without Bluetooth")
struct NoBluetoothTests {
    @Test(.enabled(if: kernelBluetoothErrno() == EAFNOSUPPORT, "this kernel has Bluetooth"))
    func everyEntryPointSaysNoBluetooth() throws {
        let resolve = #expect(throws: BluetoothError.self) { try Adapter.resolve(nil) }
        #expect(resolve?.kind == .notInKernel)
        #expect(resolve?.exitCode == 69)
        let named = #expect(throws: BluetoothError.self) { try Adapter.resolve("hci0") }
        #expect(named?.kind == .notInKernel)
        let connect = #expect(throws: BluetoothError.self) {
            try L2CAPSocket.connect(to: BluetoothAddress("C4:7C:8D:6A:1F:02")!, type: .random, timeout: 1)
        }
        #expect(connect?.kind == .notInKernel)
        #expect(connect?.exitCode == 69)
    }

    @Test(.enabled(if: kernelBluetoothErrno() == nil, "this kernel has no Bluetooth"))
    func withBluetoothResolveGivesAnAdapterOrASentence() {
        do {
            let a = try Adapter.resolve(nil)
            #expect(a.isUp)
        } catch let e as BluetoothError {
            #expect([.noAdapter, .adapterDown, .permissionDenied].contains(e.kind))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}
