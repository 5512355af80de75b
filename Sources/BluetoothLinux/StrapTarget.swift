import Platform
import Foundation
import GATT

/// A heart-rate strap to connect to over the kernel: where it is, and how HealthGate names it.
package struct StrapTarget: Sendable, Hashable, CustomStringConvertible {
    /// The strap's address.
    package var address: BluetoothAddress
    /// Public or random: both are needed to connect.
    package var addressType: AddressType
    /// The user's name for it (its alias), or its advertised name, if known.
    package var name: String?

    package init(address: BluetoothAddress, addressType: AddressType, name: String? = nil) {
        self.address = address
        self.addressType = addressType
        self.name = name
    }

    /// The registry and sample key for a BLE device: its address (`AA:BB:CC:DD:EE:FF`).
    package var localIdentifier: String { address.description }

    /// `chest (C4:7C:8D:6A:1F:02)`, or just the address.
    package var description: String { name.map { "\($0) (\(address))" } ?? address.description }

    /// The address type to use when none is given: the stored one if known, else random for a
    /// static random address (top two bits `11`, what straps without a public address use),
    /// else public. A wrong guess shows up as a connect timeout; `--address-type` overrides it.
    package static func guessAddressType(_ address: BluetoothAddress) -> AddressType {
        address.randomKind == .staticAddress ? .random : .public
    }
}

/// Makes a connected ATT bearer to a strap: one attempt, given up when `stop` fires. The
/// kernel's is ``kernelConnector(adapter:security:timeout:)``; tests pass one that connects to
/// a simulated strap over a socket pair.
package typealias StrapConnector = @Sendable (StrapTarget, StopSignal) throws -> any ATTBearer

/// Connects over the kernel's L2CAP ATT socket.
package func kernelConnector(adapter: Adapter?, security: SecurityLevel = .low, timeout: Double = 10) -> StrapConnector {
    { target, stop in
        let socket = try L2CAPSocket.connect(to: target.address, type: target.addressType, adapter: adapter,
                                             security: security, timeout: timeout, stop: stop)
        if security != .low {
            // The kernel pairs as soon as the link is up; make sure the level was reached.
            try socket.raiseSecurity(to: security, timeout: 15)
        }
        return socket
    }
}
