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
}

extension IngestStop {
    /// A ``BluetoothLinux/StopSignal`` (a pollable wake-up for the transport's blocking
    /// connect and scan loops) triggered when this stop is raised: the one bridge from the one
    /// stop mechanism to the kernel transport. Cancel the hook once the blocking call returned.
    package func transportSignal() -> (signal: StopSignal, hook: IngestStop.Hook) {
        let signal = StopSignal()
        let hook = onRaise { signal.trigger() }
        return (signal, hook)
    }
}

extension StrapSession.Strap {
    /// A strap reached over the kernel's L2CAP ATT socket (the product's path).
    package static func kernel(_ target: StrapTarget, adapter: Adapter?, timeout: Double) -> StrapSession.Strap {
        StrapSession.Strap(name: target.description, localIdentifier: target.localIdentifier, alias: target.name,
                           address: target.address.description, addressType: target.addressType.rawValue,
                           connect: kernelStrapConnect(target, connector: kernelConnector(adapter: adapter, timeout: timeout)))
    }
}

/// `connector` as the connect closure of a ``StrapSource``: one attempt per call, given up when
/// the source's stop is raised.
package func kernelStrapConnect(_ target: StrapTarget, connector: @escaping StrapConnector) -> @Sendable (IngestStop) throws -> any ATTBearer {
    { stop in
        let (signal, hook) = stop.transportSignal()
        defer { hook.cancel() }   // connected or failed: nothing left to cancel
        return try connector(target, signal)
    }
}

extension StrapConnection {
    /// Connects to `target` with `connector` (on a thread of its own: a kernel connect blocks
    /// for seconds; `stop` cancels it) and opens the connection (`pair`, `reset-energy`).
    package static func connect(_ target: StrapTarget, connector: @escaping StrapConnector, stop: IngestStop,
                               transactionTimeout: Duration = .seconds(30)) async throws -> StrapConnection {
        let connect = kernelStrapConnect(target, connector: connector)
        let bearer = try await withCheckedThrowingContinuation { (c: CheckedContinuation<any ATTBearer, any Error>) in
            let t = Thread { c.resume(with: Result { try connect(stop) }) }
            t.name = "ble-connect"
            t.start()
        }
        return try await open(target.description, bearer: bearer, transactionTimeout: transactionTimeout)
    }
}
