import Dispatch
import Foundation
import HealthModel
import HealthStore
import Logging

/// Logs a strap's ``StrapSource/Event``s for the daemon's journal: one info line per
/// connection, subscription and disconnect (battery notifications at debug), so
/// `journalctl -u healthgate` shows when each strap came and went.
package struct StrapEventLog: Sendable {
    private let logger: Logger

    /// Log lines go to `logger`.
    package init(logger: Logger) { self.logger = logger }

    /// Logs `event` of the strap called `name` (the source's name, `strap chest (AA:BB:…)`).
    package func log(_ event: StrapSource.Event, strap name: String) {
        switch event {
        case .connected(let c):
            var about = [c.device.manufacturer, c.device.model].compactMap { $0 }.joined(separator: " ")
            if let b = c.battery { about += (about.isEmpty ? "" : ", ") + "battery \(b) %" }
            if let l = c.sensorLocation { about += (about.isEmpty ? "" : ", ") + l.name }
            logger.info("\(name): \(c.number == 1 ? "connected" : "reconnected (connection \(c.number))")\(about.isEmpty ? "" : " (\(about))")")
        case .subscribed(let n):
            logger.info("\(name): subscribed to heart rate notifications\(n == 1 ? "" : " (connection \(n))")")
        case .battery(let level, _):
            logger.debug("\(name): battery \(level) %")
        case .signal(let dBm, _):
            logger.debug("\(name): signal \(dBm) dBm")
        case .disconnected(let reason):
            var why = reason
            while why.hasSuffix(".") || why.hasSuffix(" ") { why.removeLast() }
            logger.info("\(name): disconnected (\(why)); reconnecting")
        case .hrvRefused(let w, let limit):
            logger.info("\(name): no SDNN/RMSSD for the \(Int((w.end - w.start).rounded())) s from \(ISO8601.string(Date(timeIntervalSince1970: w.start))): \(w.corrected) of its \(w.intervals) beats were artefacts (more than the \(Int((limit * 100).rounded())) % allowed; a loose or dry strap, or an irregular rhythm)")
        }
    }
}

/// Keeps the device registry current for the daemon's straps, as `pair` does: on every
/// connection the strap's record (kind, address and type, Device Information, location,
/// battery, last seen), and every Battery Level notification. Writes happen on a queue of their
/// own, off the GATT reader threads; a failure is logged, never fatal (samples do not depend on it).
///
/// Every strap is filed as kind `ble`, including one reached over a Unix socket (it speaks the
/// same ATT bytes; its registry key is `socket:<path>` and it has no Bluetooth address), so
/// `healthgate devices` lists every strap the daemon knows.
package final class StrapRegistry: Sendable {
    private let store: HealthStore
    private let logger: Logger
    private let queue = DispatchQueue(label: "healthgate.registry")

    /// A registry writing to `store`, logging failures to `logger`.
    package init(store: HealthStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Records `event`: the strap's record on a connection (with `address` and `addressType`
    /// when it has a Bluetooth address, and `alias`, the user's name for it, when given; nil
    /// keeps the one `pair` stored), its battery level and last seen on a Battery Level
    /// notification. Other events change nothing here.
    package func record(_ event: StrapSource.Event, localIdentifier: String, address: String? = nil, addressType: String? = nil,
                       alias: String? = nil) {
        switch event {
        case .connected(let c):
            queue.async { [store, logger] in
                do {
                    try store.upsertDevice(DeviceRecord(device: c.device, kind: .ble, address: address, addressType: addressType,
                                                        alias: alias, lastSeen: c.at, battery: c.battery, sensorLocation: c.sensorLocation))
                } catch {
                    logger.warning("could not update the device registry for \(c.device.localIdentifier ?? "a strap"): \(error)")
                }
            }
        case .battery(let level, let at):
            queue.async { [store, logger] in
                do { try store.markDeviceSeen(localIdentifier: localIdentifier, at: at, battery: level) } catch {
                    logger.warning("could not record the battery level of \(localIdentifier): \(error)")
                }
            }
        case .subscribed, .disconnected, .signal, .hrvRefused:
            break
        }
    }

    /// Waits until every registry write queued so far is done (tests, shutdown).
    package func flush() { queue.sync {} }
}

extension StrapRegistry {
    /// ``markSeen(_:in:)`` for the store at `path`, if there is one: a scan never creates a
    /// store, and a store problem does not fail it.
    package static func markSeen(_ heard: [(address: String, at: Date)], storeAt path: String) {
        guard !heard.isEmpty, FileManager.default.fileExists(atPath: path), let db = try? HealthStore(path: path) else { return }
        markSeen(heard, in: db)
    }

    /// Updates "last seen" of the remembered devices among `heard` (address, when), as `scan`
    /// does. Best effort: a device that is not remembered, or a store error, is skipped.
    package static func markSeen(_ heard: [(address: String, at: Date)], in store: HealthStore) {
        for (address, at) in heard {
            guard let known = try? store.device(address: address), let local = known.device.localIdentifier else { continue }
            try? store.markDeviceSeen(localIdentifier: local, at: at)
        }
    }
}
