import Platform
import BluetoothLinux
import Foundation
import GATT

extension BluetoothError: SourceFailure {
    /// Errors a retry cannot fix: no Bluetooth in the kernel, missing permissions, a device
    /// that is not what was asked for, a failed pairing.
    ///
    /// No adapter is *not* one of them: once a source runs, an adapter that is not there yet
    /// or any more comes back by itself — a Raspberry Pi's built-in controller is registered
    /// by `hciuart.service`, often after the daemon started; a USB dongle re-enumerates after
    /// a reset or a brown-out (the real-stack `adapter-reset` scenario). The source retries
    /// with the usual backoff and says so once. Front-ends that must fail fast without an
    /// adapter (`scan`, `pair`, `live`) check for one before they start.
    package var isPermanent: Bool {
        switch kind {
        case .notInKernel, .permissionDenied, .notSupported, .pairingFailed: true
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

    /// An adapter that was powered off or missing is asked for while the runner pauses: the
    /// strap is tried again as soon as one is powered (the real-stack `adapter-reset`
    /// scenario holds the daemon to 5 s from power-on to notifications; with the policy's 2 s
    /// pauses and the kernel connecting straps one at a time, waiting out the pause came close).
    /// When some adapter is powered already (the failure is about another one, named with
    /// `--adapter`), there is nothing to wait for: the pause is waited in full.
    package var causeCleared: (@Sendable () -> Bool)? {
        guard kind == .adapterDown || kind == .noAdapter, !Adapter.anyPowered else { return nil }
        return { Adapter.anyPowered }
    }
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
