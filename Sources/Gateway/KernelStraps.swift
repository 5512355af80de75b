import Platform
import BluetoothLinux
import Foundation
import GATT

extension BluetoothError: SourceFailure {
    /// Errors a retry cannot fix: no Bluetooth in the kernel, no adapter, missing permissions,
    /// a device that is not what was asked for, a failed pairing.
    package var isPermanent: Bool {
        switch kind {
        case .notInKernel, .noAdapter, .permissionDenied, .notSupported, .pairingFailed: true
        default: false
        }
    }

    /// After a connect that timed out, the policy's settle pause (2 s by default) before the
    /// strap is tried again, not at once. The kernel is still
    /// cancelling that connect (the controller may complete the link meanwhile; the kernel drops
    /// it about 2 s later), and a new connect to the same strap in that window met a kernel bug:
    /// on Debian 12's 6.1 kernel the next close of that socket corrupted a list in
    /// `hci_chan_del`, and the kernel killed the calling thread — the strap's source thread,
    /// silently, leaving the strap connected and never subscribed (the real-stack
    /// `many-straps` scenario: seven straps started at once, the last one's connect timing out
    /// while the kernel connected the others one at a time; docs/bluetooth-linux.md).
    package var needsSettling: Bool { kind == .connectTimeout }
}

extension StrapSession.Strap {
    /// A strap reached over the kernel's L2CAP ATT socket (the product's path).
    package static func kernel(_ target: StrapTarget, adapter: Adapter?, timeout: Double) -> StrapSession.Strap {
        StrapSession.Strap(name: target.description, localIdentifier: target.localIdentifier, alias: target.name,
                           address: target.address.description, addressType: target.addressType.rawValue,
                           connect: { [connector = kernelConnector(adapter: adapter, timeout: timeout)] in try connector(target, $0) })
    }
}

extension StrapConnection {
    /// Connects to `target` with `connector` (on a thread of its own: a kernel connect blocks
    /// for seconds; `stop` cancels it) and opens the connection (`pair`, `reset-energy`).
    package static func connect(_ target: StrapTarget, connector: @escaping StrapConnector, stop: StopSignal,
                               transactionTimeout: Duration = .seconds(30)) async throws -> StrapConnection {
        let bearer = try await withCheckedThrowingContinuation { (c: CheckedContinuation<any ATTBearer, any Error>) in
            let t = Thread { c.resume(with: Result { try connector(target, stop) }) }
            t.name = "ble-connect"
            t.start()
        }
        return try await open(target.description, bearer: bearer, transactionTimeout: transactionTimeout)
    }
}
