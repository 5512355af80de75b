import BluetoothLinux
import Foundation
import HealthModel
import HeartRateProfile

// The JSON shapes of the strap commands' events and summaries (`live --json`, `pair --json`,
// `scan --json`),
// defined once beside the events so every front-end prints the same objects. Absent values are
// JSON null; `t` is Unix seconds.

extension StrapSession.Event {
    /// One `live --json` line: `event` is connected, heartRate, battery, disconnected,
    /// connectFailed or storeFailed; `straps` are the session's straps in its order (their
    /// addresses and names).
    package func jsonObject(straps: [StrapTarget]) -> [String: Any] {
        func v(_ x: Any?) -> Any { x ?? NSNull() }
        switch self {
        case .connected(let k, let c):
            return ["event": "connected", "address": straps[k].address.description, "name": v(straps[k].name), "connection": c.number,
                    "sensorLocation": v(c.sensorLocation?.name), "battery": v(c.battery), "t": c.at.timeIntervalSince1970]
        case .reading(let r):
            var o: [String: Any] = ["event": "heartRate", "address": straps[r.strap].address.description, "t": r.receivedAt.timeIntervalSince1970,
                                    "hex": Hex.string(r.payload), "connection": r.connection]
            if let m = r.measurement { o.merge(m.jsonObject) { _, new in new } } else { o["rejected"] = v(r.rejection) }
            return o
        case .battery(let k, let level, let at):
            return ["event": "battery", "address": straps[k].address.description, "battery": level, "t": at.timeIntervalSince1970]
        case .disconnected(let k, let reason):
            return ["event": "disconnected", "address": straps[k].address.description, "reason": reason, "t": Date().timeIntervalSince1970]
        case .connectFailed(let k, let reason, let pause):
            return ["event": "connectFailed", "address": straps[k].address.description, "reason": reason, "retryIn": pause]
        case .storeFailed(let why):
            return ["event": "storeFailed", "reason": why]
        }
    }
}

extension StrapSessionSummary {
    /// `live --json`'s last line (`"event": "summary"`): the session's figures, then one object
    /// per strap of `straps` (the session's, in its order).
    package func jsonObject(straps targets: [StrapTarget]) -> [String: Any] {
        func v(_ x: Any?) -> Any { x ?? NSNull() }
        return ["event": "summary", "duration": duration, "notifications": notifications,
                "samplesStored": samplesStored, "batches": batches, "unsaved": unsaved,
                "minBPM": v(minBPM), "avgBPM": v(averageBPM), "maxBPM": v(maxBPM),
                "straps": straps.enumerated().map { k, st -> [String: Any] in
                    ["address": targets[k].address.description, "notifications": st.notifications, "rejected": st.rejected,
                     "connections": st.connections, "minBPM": v(st.minBPM), "avgBPM": v(st.averageBPM), "maxBPM": v(st.maxBPM)]
                }]
    }
}

extension PairResult {
    /// `pair --json`: the strap's address, names, what it said about itself (Device
    /// Information, location, battery, control point) and the link's security.
    package var jsonObject: [String: Any] {
        func v(_ x: Any?) -> Any { x ?? NSNull() }
        return [
            "address": target.address.description, "addressType": target.addressType.rawValue,
            "name": v(device.name), "alias": v(alias), "sensorLocation": v(info.sensorLocation?.name),
            "sensorLocationRaw": v(info.sensorLocationRaw.map { Int($0) }),
            "manufacturer": v(info.manufacturer), "model": v(info.model), "serialNumber": v(info.serialNumber),
            "hardwareVersion": v(info.hardwareRevision), "firmwareVersion": v(info.firmwareRevision),
            "softwareVersion": v(info.softwareRevision), "battery": v(info.battery.map { Int($0) }),
            "hasControlPoint": info.hasControlPoint,
            "securityLevel": v(security.map { Int($0.level) }), "keySize": v(security.map { Int($0.keySize) }),
        ]
    }
}

extension ScannedDevice {
    /// One `scan --json` line: `address`, `addressType`, `name`, `rssi`, `services` (16-bit
    /// UUIDs as hex), `heartRate`, `connectable`, `txPower`, `reports`, `lastSeen`, and the first
    /// `manufacturer`'s company and data.
    package var jsonObject: [String: Any] {
        var o: [String: Any] = [
            "address": address.description,
            "addressType": addressType?.rawValue ?? NSNull(),
            "name": data.localName ?? NSNull(),
            "rssi": rssi.map { Int($0) } ?? NSNull(),
            "services": data.serviceUUIDs16.map { String(format: "%04X", $0) },
            "heartRate": data.isHeartRateSensor(),
            "connectable": connectable,
            "txPower": data.txPower.map { Int($0) } ?? NSNull(),
            "reports": reports,
            "lastSeen": ISO8601.string(lastSeen),
        ]
        if let m = data.manufacturerData.first {
            o["manufacturer"] = ["company": Int(m.company), "name": companyName(m.company).map { $0 as Any } ?? NSNull(),
                                 "data": Hex.string(m.data)]
        }
        return o
    }
}
