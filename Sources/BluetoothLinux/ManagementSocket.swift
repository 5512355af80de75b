import CBlueZ
#if canImport(Glibc)
import Glibc
#endif
import Platform

/// The kernel's Bluetooth management channel (`HCI_CHANNEL_CONTROL`, BlueZ doc/mgmt-api.txt),
/// for what only the kernel should ask the controller: here, a connection's RSSI. Each call opens
/// its own socket: they are rare (one per strap every few seconds) and a socket shared between
/// threads would mix their replies.
enum ManagementSocket {
    private static let getConnectionInformation: UInt16 = 0x0031
    private static let commandComplete: UInt16 = 0x0001
    private static let commandStatus: UInt16 = 0x0002

    /// Get Connection Information for `address` (`type`: 1 LE public, 2 LE random) on adapter
    /// `index`: its RSSI in dBm, or nil (refused, not connected, not available, no answer within
    /// `timeout` seconds).
    static func connectionRSSI(index: UInt16, address: BluetoothAddress, type: UInt8, timeout: Double = 1) -> Int? {
        let fd = socket(PF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var addr = sockaddr_hci(hci_family: sa_family_t(AF_BLUETOOTH), hci_dev: UInt16(HCI_DEV_NONE), hci_channel: UInt16(HCI_CHANNEL_CONTROL))
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
        }
        guard bound == 0 else { return nil }
        // Header (opcode, index, length: little-endian), then the address in wire order and its type.
        var command = [UInt8]()
        for v in [getConnectionInformation, index, 7] { command += [UInt8(v & 0xFF), UInt8(v >> 8)] }
        command += address.littleEndianBytes + [type]
        guard command.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == command.count else { return nil }
        let deadline = SystemCall.monotonicSeconds() + timeout
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            guard SystemCall.poll(&fds, timeout: deadline - SystemCall.monotonicSeconds()) > 0 else { return nil }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n >= 6 else { return nil }
            func u16(_ i: Int) -> UInt16 { UInt16(buffer[i]) | UInt16(buffer[i + 1]) << 8 }
            let (event, eventIndex) = (u16(0), u16(2))
            // Other sockets' events and other adapters' are not this call's answer.
            guard eventIndex == index, n >= 9, u16(6) == getConnectionInformation else { continue }
            if event == commandStatus { return nil }
            guard event == commandComplete else { continue }
            // opcode(2) status(1) address(6) type(1) rssi(1) tx_power(1) max_tx_power(1)
            guard buffer[8] == 0, n >= 6 + 3 + 7 + 1 else { return nil }
            let rssi = Int8(bitPattern: buffer[6 + 3 + 7])
            return rssi == 127 ? nil : Int(rssi)
        }
    }
}
