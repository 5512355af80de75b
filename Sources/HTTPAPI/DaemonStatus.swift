import Foundation
import HealthModel
import HealthStore
import Ingest

/// What `healthgate run` knows beyond the store, for `/v1/devices` and `/metrics` when it serves
/// the API (docs/http-api.md, "Serving from run"): each managed device's live state and the
/// ingest pipeline's counters. `serve` has none.
package protocol DaemonStatus: Sendable {
    /// The devices the daemon manages, now.
    func devices() -> [ManagedDevice]
    /// The pipeline's counters now.
    func pipeline() -> IngestStats
    /// How far each uplink of the daemon is behind `store` (read on the store's queue).
    func uplinks(in store: HealthStore) -> [UplinkLag]
}

extension DaemonStatus {
    /// No uplinks.
    package func uplinks(in store: HealthStore) -> [UplinkLag] { [] }
}

/// How far one uplink is behind the store it pushes from, for `/metrics`.
package struct UplinkLag: Sendable, Equatable {
    /// The gateway name it pushes as.
    package var gateway: String
    /// The server, as `uplink status` shows it (never with a password).
    package var server: String
    /// Changes committed locally that the server has not committed yet.
    package var behind: Int64
    /// Seconds since it was last caught up (nil: never).
    package var secondsBehind: Double?
    /// Whether its last push failed.
    package var failing: Bool

    package init(gateway: String, server: String, behind: Int64, secondsBehind: Double?, failing: Bool) {
        (self.gateway, self.server, self.behind, self.secondsBehind, self.failing) = (gateway, server, behind, secondsBehind, failing)
    }
}

/// A device the daemon manages and what it knows of it now.
package struct ManagedDevice: Sendable, Equatable {
    /// The registry's key for it (`socket:/path`, a Bluetooth address, a pedometer id).
    package var localIdentifier: String
    /// Its name for people (the configured alias, else the device's name).
    package var name: String
    /// `strap` or `pedometer`.
    package var kind: String
    /// Whether it is connected (a strap's link, a pedometer's open port; nil where the daemon knows
    /// the device only from its samples).
    package var connected: Bool?
    /// Battery level in percent, when the device reports it.
    package var battery: Int?
    /// The link's last signal strength in dBm while connected (a strap over Bluetooth; nil for
    /// a Unix-socket strap, a pedometer, or a controller that does not say).
    package var rssi: Int?
    /// When its last sample was committed (its end time).
    package var lastSample: Date?
    /// The sensor contact its last heart-rate sample reported while connected (nil: the strap
    /// does not say, or its link is down).
    package var contact: Bool?
    /// Its last heart rate while connected, count/min (nil once its link is down: a strap out of
    /// range has no current heart rate).
    package var heartRate: Double?

    package init(localIdentifier: String, name: String, kind: String, connected: Bool?, battery: Int? = nil,
                 lastSample: Date? = nil, contact: Bool? = nil, heartRate: Double? = nil) {
        self.localIdentifier = localIdentifier
        self.name = name
        self.kind = kind
        self.connected = connected
        self.battery = battery
        self.lastSample = lastSample
        self.contact = contact
        self.heartRate = heartRate
    }

    /// The type of the samples its live values come from: a strap's heart rate, a pedometer's steps.
    package var sampleType: QuantityType { kind == "strap" ? .heartRate : .stepCount }

    /// The `connection` object `/v1/devices` adds to the device's registry entry. What comes from
    /// its samples (`lastSample`, `contact`, `heartRate`) is there only when `mayRead` allows
    /// ``sampleType``: as in HealthKit, a token that may not read a type sees none of its data.
    package func jsonObject(mayRead: (QuantityType) -> Bool) -> [String: Any] {
        var o: [String: Any] = ["kind": kind, "name": name]
        if let connected { o["connected"] = connected }
        if let battery { o["battery"] = battery }
        if let rssi { o["rssi"] = rssi }
        guard mayRead(sampleType) else { return o }
        if let lastSample { o["lastSample"] = ISO8601.string(lastSample) }
        if let contact { o["contact"] = contact }
        if let heartRate { o["heartRate"] = heartRate }
        return o
    }
}
