import Foundation
import HealthModel
import HealthStore

/// One uplink destination of a store: a gateway name on a server. Its anchor and status live in
/// the store's `state` table under keys derived from it.
package struct UplinkTarget: Sendable, Hashable {
    /// Every anchor key starts with this; `HealthStore`'s tombstone pruning keeps every
    /// tombstone such an anchor has not passed (docs/uplink.md, "Tombstones").
    package static let anchorPrefix = HealthStore.tombstoneHoldPrefix + "uplink:"
    static let statusPrefix = "uplink.status:"

    package let gateway: String
    /// The server, without password: `user@host:port/db` or `user@/socket/path/db`.
    package let server: String

    package init(gateway: String, url: UplinkURL) {
        self.gateway = gateway
        self.server = url.display
    }

    init(gateway: String, server: String) {
        self.gateway = gateway
        self.server = server
    }

    var name: String { "postgres:\(gateway)@\(server)" }
    package var anchorKey: String { Self.anchorPrefix + name }
    package var statusKey: String { Self.statusPrefix + name }
}

/// What `uplink status` reports beside the anchor, kept as JSON in the store's `state`.
struct UplinkTargetStatus: Codable, Sendable {
    var gateway: String
    var server: String
    var lastPush: Double?
    var caughtUpAt: Double?
    var lastError: String?
    var lastErrorAt: Double?
}

/// `healthgate uplink status`: every uplink target recorded in a store, how far behind it is.
package struct UplinkStatus: Sendable, Hashable {
    package var gateway: String
    package var server: String
    /// The anchor the server last committed (as the store recorded it), nil before the first push.
    package var anchor: String?
    /// Change-feed positions (additions, series growths, deletions) committed locally and not yet sent.
    package var behind: Int64
    /// Seconds since the uplink was last caught up, 0 when nothing is behind.
    package var secondsBehind: Double?
    /// When the last push ended without error.
    package var lastPush: Date?
    /// The last push's failure, cleared by a push that succeeds.
    package var lastError: String?
    package var lastErrorAt: Date?

    /// The targets recorded in `store`, by name.
    package static func all(in store: HealthStore, now: Date = Date()) throws -> [UplinkStatus] {
        let head = try store.currentAnchor()
        var byName: [String: UplinkStatus] = [:]
        for (key, value) in try store.stateEntries(prefix: UplinkTarget.statusPrefix) {
            guard let s = try? JSONDecoder().decode(UplinkTargetStatus.self, from: value) else { continue }
            let name = String(key.dropFirst(UplinkTarget.statusPrefix.count))
            byName[name] = UplinkStatus(gateway: s.gateway, server: s.server, anchor: nil, behind: 0, secondsBehind: nil,
                                        lastPush: s.lastPush.map(Date.init(timeIntervalSince1970:)), lastError: s.lastError,
                                        lastErrorAt: s.lastErrorAt.map(Date.init(timeIntervalSince1970:)))
            byName[name]?.secondsBehind = s.caughtUpAt.map { max(0, now.timeIntervalSince1970 - $0) }
        }
        for (key, value) in try store.stateEntries(prefix: UplinkTarget.anchorPrefix) {
            let name = String(key.dropFirst(UplinkTarget.anchorPrefix.count))
            let text = String(decoding: value, as: UTF8.self)
            var s = byName[name] ?? UplinkStatus(gateway: name, server: "", anchor: nil, behind: 0, secondsBehind: nil,
                                                  lastPush: nil, lastError: nil, lastErrorAt: nil)
            s.anchor = text
            byName[name] = s
        }
        return byName.keys.sorted().compactMap { name in
            guard var s = byName[name] else { return nil }
            if let a = s.anchor.flatMap({ try? ChangeAnchor(string: $0) }), a.storeID == head.storeID {
                s.behind = max(0, head.sampleID - a.sampleID) + max(0, head.tombstone - a.tombstone)
            } else {
                s.behind = head.sampleID + head.tombstone
            }
            if s.behind == 0 { s.secondsBehind = 0 }
            return s
        }
    }

    /// `uplink status`'s lines for people: where to, the anchor, how far behind, the last
    /// push and error.
    package var lines: [String] {
        var out = ["\(gateway) → \(server)", "  anchor: \(anchor ?? "none (never committed)")",
                   "  behind: \(behind) changes" + (secondsBehind.map { String(format: ", %.0f s", $0) } ?? "")]
        if let p = lastPush { out.append("  last push: \(ISO8601.string(p))") }
        if let e = lastError { out.append("  last error: \(e)") }
        return out
    }

    /// The `--json` object.
    package var jsonObject: [String: Any] {
        var o: [String: Any] = ["gateway": gateway, "server": server, "behind": behind]
        o["anchor"] = anchor ?? NSNull()
        o["secondsBehind"] = secondsBehind ?? NSNull()
        o["lastPush"] = lastPush.map { ISO8601DateFormatter().string(from: $0) } ?? NSNull()
        o["lastError"] = lastError ?? NSNull()
        o["lastErrorAt"] = lastErrorAt.map { ISO8601DateFormatter().string(from: $0) } ?? NSNull()
        return o
    }
}
