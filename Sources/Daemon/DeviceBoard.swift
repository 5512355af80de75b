import Foundation
import Gateway
import HTTPAPI
import HealthModel
import HealthStore
import Ingest
import Synchronization
import Uplink
import Locking

/// The daemon's devices as `/v1/devices`, `/metrics` and the live stream show them: each strap's
/// connection, battery and sensor contact from its events, each device's last committed sample
/// from the pipeline's commit tap; each pedometer's connection from its source's events. Device events go to ``onDeviceEvent`` as they happen
/// (connected, disconnected, battery, contact changes).
final class DeviceBoard: DaemonStatus {
    private let entries = Lock<[String: ManagedDevice]>([:])
    private let order = Lock<[String]>([])
    private let pipelineStats: @Sendable () -> IngestStats
    private let sink = Lock<(@Sendable ([String: Any]) -> Void)?>(nil)

    /// Where device events go (the live stream).
    var onDeviceEvent: (@Sendable ([String: Any]) -> Void)? {
        get { sink.withLock { $0 } }
        set { sink.withLock { $0 = newValue } }
    }

    init(daemon: GatewayDaemon) {
        let pipeline = daemon.runtime.pipeline
        pipelineStats = { pipeline.stats }
        for s in daemon.straps {
            remember(ManagedDevice(localIdentifier: s.localIdentifier, name: s.name, kind: "strap", connected: false))
        }
        daemon.onStrapEvent { [self] event, local, alias in strap(event, local: local, alias: alias) }
        daemon.onPedometerEvent { [self] event, device in pedometer(event, device: device) }
    }

    private func remember(_ d: ManagedDevice) {
        entries.withLock { e in
            if e[d.localIdentifier] == nil { order.withLock { $0.append(d.localIdentifier) } }
            e[d.localIdentifier] = d
        }
    }

    func devices() -> [ManagedDevice] {
        let ids = order.withLock { $0 }
        return entries.withLock { e in ids.compactMap { e[$0] } }
    }

    func pipeline() -> IngestStats { pipelineStats() }

    /// Every uplink that pushed from `store` (`uplink status`'s figures).
    func uplinks(in store: HealthStore) -> [UplinkLag] {
        ((try? UplinkStatus.all(in: store)) ?? []).map {
            UplinkLag(gateway: $0.gateway, server: $0.server, behind: $0.behind, secondsBehind: $0.secondsBehind, failing: $0.lastError != nil)
        }
    }

    private func publish(_ kind: String, _ d: ManagedDevice, _ extra: [String: Any] = [:]) {
        var o: [String: Any] = ["event": kind, "localIdentifier": d.localIdentifier, "name": d.name, "kind": d.kind,
                                "at": ISO8601.string(Date())]
        o.merge(extra) { _, new in new }
        sink.withLock { $0 }?(o)
    }

    private func strap(_ event: StrapSource.Event, local: String, alias: String?) {
        var d = entries.withLock { $0[local] } ?? ManagedDevice(localIdentifier: local, name: alias ?? local, kind: "strap", connected: false)
        switch event {
        case .connected(let c):
            d.connected = true
            d.name = alias ?? c.device.name ?? d.name
            if let b = c.battery { d.battery = b }
            remember(d)
            var extra: [String: Any] = ["connection": c.number]
            if let b = c.battery { extra["battery"] = b }
            publish("connected", d, extra)
        case .battery(let level, _):
            d.battery = level
            remember(d)
            publish("battery", d, ["battery": level])
        case .signal(let dBm, _):
            d.rssi = dBm
            remember(d)
        case .disconnected(let reason):
            // Nothing of the link's stays as if current: no signal strength, and no heart rate or
            // contact (a strap out of range must not show its last bpm as its bpm); its last
            // sample's time stays (`lastSample`), which is what happened.
            d.connected = false
            d.rssi = nil
            d.heartRate = nil
            d.contact = nil
            remember(d)
            publish("disconnected", d, ["reason": reason])
        case .subscribed, .hrvRefused:   // the journal says why a window gave no HRV (StrapEventLog)
            break
        }
    }

    /// A pedometer is connected from its port's opening to its stream's end (unplugged, or the
    /// daemon stopping it); its battery is not known.
    private func pedometer(_ event: PedometerEvent, device: Device) {
        guard let local = device.localIdentifier else { return }
        var d = entries.withLock { $0[local] } ?? ManagedDevice(localIdentifier: local, name: device.name ?? local, kind: "pedometer", connected: nil)
        switch event {
        case .opened:
            d.connected = true
            d.name = device.name ?? d.name
            remember(d)
            publish("connected", d)
        case .ended(let gone, _):
            d.connected = false
            remember(d)
            publish("disconnected", d, ["reason": gone ?? "stopped by the daemon"])
        case .openFailed, .session:
            break
        }
    }

    /// Notes a committed batch (the writer thread: short).
    func committed(_ batch: CommittedBatch, heartRateSlot: UInt16?) {
        var changes: [(ManagedDevice, Bool)] = []
        entries.withLock { e in
            for r in batch.records {
                guard let device = batch.slots.device(r.deviceSlot), let local = device.localIdentifier else { continue }
                var d = e[local] ?? ManagedDevice(localIdentifier: local, name: device.name ?? local,
                                                   kind: r.typeSlot == heartRateSlot ? "strap" : "pedometer", connected: nil)
                if e[local] == nil { order.withLock { $0.append(local) } }
                let end = Date(timeIntervalSince1970: r.end)
                if d.lastSample.map({ end > $0 }) ?? true { d.lastSample = end }
                // A batch committed after the link went down (up to a flush interval later) does
                // not bring its last bpm back as current.
                if r.typeSlot == heartRateSlot, d.connected != false {
                    d.heartRate = r.value
                    let contact: Bool? = r.flags.contains(.contactSupported) ? r.flags.contains(.contactDetected) : nil
                    if contact != d.contact, let contact {
                        changes.append((d, contact))
                    }
                    d.contact = contact
                }
                e[local] = d
            }
        }
        for (d, contact) in changes { publish("contact", d, ["contact": contact]) }
    }
}
