import Testing
@testable import BluetoothLinux

@Suite("Bluetooth addresses")
struct AddressTests {
    @Test func parseAndFormat() {
        let a = BluetoothAddress("c4:7c:8d:6a:1f:02")
        #expect(a?.description == "C4:7C:8D:6A:1F:02")
        #expect(a?.bytes == [0xC4, 0x7C, 0x8D, 0x6A, 0x1F, 0x02])
        #expect(BluetoothAddress("C4-7C-8D-6A-1F-02") == a)
        #expect(BluetoothAddress(a!.description) == a)
    }

    @Test(arguments: ["", "C4:7C:8D:6A:1F", "C4:7C:8D:6A:1F:02:03", "C4:7C:8D:6A:1F:0G", "C47C8D6A1F02",
                      "C4:7C:8D:6A:1F:2", "C4:7C:8D:6A:1F:002", "C4:7C-8D:6A:1F:02", ":C4:7C:8D:6A:1F", "+4:7C:8D:6A:1F:02"])
    func rejectsMalformed(_ text: String) {
        #expect(BluetoothAddress(text) == nil)
    }

    @Test func wireOrderIsReversed() {
        let a = BluetoothAddress(littleEndian: [0x02, 0x1F, 0x6A, 0x8D, 0x7C, 0xC4])
        #expect(a?.description == "C4:7C:8D:6A:1F:02")
        #expect(a?.littleEndianBytes == [0x02, 0x1F, 0x6A, 0x8D, 0x7C, 0xC4])
        #expect(BluetoothAddress(littleEndian: [1, 2, 3]) == nil)
        #expect(BluetoothAddress(bytes: [1, 2, 3, 4, 5]) == nil)
    }

    @Test func randomAddressKinds() {
        #expect(BluetoothAddress("C4:00:00:00:00:01")!.randomKind == .staticAddress)
        #expect(BluetoothAddress("44:00:00:00:00:01")!.randomKind == .resolvablePrivate)
        #expect(BluetoothAddress("04:00:00:00:00:01")!.randomKind == .nonResolvablePrivate)
        #expect(BluetoothAddress("84:00:00:00:00:01")!.randomKind == .reserved)
    }

    @Test func addressTypes() {
        #expect(AddressType(hci: 0) == .public)
        #expect(AddressType(hci: 1) == .random)
        #expect(AddressType(hci: 2) == .public)
        #expect(AddressType(hci: 3) == .random)
        #expect(AddressType(hci: 0xFF) == nil)
        #expect(AddressType.public.kernelValue == 1)  // BDADDR_LE_PUBLIC
        #expect(AddressType.random.kernelValue == 2)  // BDADDR_LE_RANDOM
        #expect(AddressType(rawValue: "random") == .random)
    }

    @Test func ordering() {
        #expect(BluetoothAddress("00:00:00:00:00:01")! < BluetoothAddress("00:00:00:00:01:00")!)
    }
}
