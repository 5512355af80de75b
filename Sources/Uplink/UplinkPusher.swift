import Foundation
import HealthModel
import HealthStore
import Logging
import Platform
import PostgresNIO
import Sysexits

/// Store-and-forward of one store's change feed to a PostgreSQL server (docs/uplink.md).
///
/// Each batch is one server transaction that applies the batch's tombstones as deletes, upserts
/// its samples and series quantities (keyed by gateway + UUID, and + index for a series), and
/// records the batch's anchor in `healthgate.gateways` — the server commits data and anchor
/// together. Only after the COMMIT answered does the gateway write the anchor into its own
/// store (`state`), where it holds back tombstone pruning and feeds `uplink status`. A push
/// resumes from the anchor the server holds (it covers everything the server has), so a batch
/// whose COMMIT was lost, a gateway killed after the commit and before its own write, or a
/// server restored from a backup all resume at the right place: at-least-once delivery of
/// idempotent upserts — exactly-once effect.
package struct UplinkPusher: Sendable {
    /// What one push did.
    package struct Report: Sendable, Hashable {
        /// Batches committed by the server.
        package var batches = 0
        /// Individually stored samples sent (added or replaced).
        package var samples = 0
        /// Series quantities sent (a grown series' open chunk is sent again whole).
        package var quantities = 0
        /// Tombstones applied as deletes.
        package var deletions = 0
        /// Workouts sent (new or changed) and deleted.
        package var workouts = 0
        package var workoutDeletions = 0
        /// True when the push started over from scratch (first push, or the server's anchor was
        /// missing or could not be answered without a gap).
        package var fullSync = false
        /// The anchor the server and the store hold now.
        package var anchor = ""

        /// `uplink push --json`: what was sent to `server` as `gateway`, and the anchor.
        package func jsonObject(gateway: String, server: String) -> [String: Any] {
            ["gateway": gateway, "server": server, "batches": batches, "samples": samples, "quantities": quantities,
             "deletions": deletions, "workouts": workouts, "workoutDeletions": workoutDeletions, "fullSync": fullSync, "anchor": anchor]
        }
    }

    /// Progress of a running push, for a terminal.
    package struct Progress: Sendable {
        /// Items (samples, quantities, deletions) sent so far.
        package var sent: Int
        /// Change-feed positions left, roughly (additions and deletions not yet sent).
        package var remaining: Int64
    }

    /// Items per server transaction unless told otherwise (see ``init(store:url:gateway:batchSize:logger:)``).
    package static let defaultBatchSize = 5000

    package let store: HealthStore
    package let url: UplinkURL
    package let gateway: String
    package let batchSize: Int
    package let logger: Logger

    /// - Parameters:
    ///   - batchSize: change-feed items per server transaction: each sample, series quantity and
    ///     deletion counts one (a long series goes in pieces), so it also bounds the push's memory.
    package init(store: HealthStore, url: UplinkURL, gateway: String, batchSize: Int = UplinkPusher.defaultBatchSize,
                 logger: Logger = Logger(label: "healthgate.uplink")) throws {
        guard !gateway.isEmpty, gateway.count <= 200, !gateway.contains(where: { $0.isNewline }) else {
            throw UplinkError("'\(gateway.prefix(40))' cannot name a gateway: use 1 to 200 characters on one line (the default is the host name).", .usage)
        }
        guard batchSize >= 1 else {
            throw UplinkError("an uplink batch size must be at least 1 (got \(batchSize)).", .usage)
        }
        self.store = store
        self.url = url
        self.gateway = gateway
        self.batchSize = batchSize
        self.logger = logger
    }

    /// The key under which this target's anchor is kept in the store's `state` table.
    package var target: UplinkTarget { UplinkTarget(gateway: gateway, url: url) }

    /// Pushes everything committed to the store when the push starts (and whatever commits
    /// meanwhile) over a connection of its own, then returns. On failure the store's anchor
    /// still names the last batch the server committed; the error is recorded for `uplink
    /// status` and thrown as an ``UplinkError``.
    package func push(progress: (@Sendable (Progress) -> Void)? = nil) async throws -> Report {
        let connection = try await connect()
        do {
            let report = try await push(on: connection, progress: progress)
            await ServerDeadline.close(connection)
            return report
        } catch {
            await ServerDeadline.close(connection)
            throw error
        }
    }

    /// A connection to the server with the central schema created or migrated and this
    /// gateway registered; keep it for several ``push(on:progress:)`` calls (`run` does).
    /// - Throws: ``UplinkError`` (recorded for `uplink status`).
    package func connect() async throws -> PostgresConnection {
        do {
            let store = self.store
            let storeID = try await onOwnThread { try store.currentAnchor().storeID }
            let connection = try await PostgresConnection.connect(configuration: try url.configuration(), id: 1, logger: logger)
            do {
                let (logger, display, gateway) = (self.logger, url.display, self.gateway)
                try await bounded(connection) {
                    try await CentralSchema.migrate(connection, logger: logger, target: display)
                    try await connection.query("""
                        INSERT INTO healthgate.gateways(name, store_id) VALUES (\(gateway), \(storeID))
                        ON CONFLICT (name) DO NOTHING
                        """, logger: logger)
                }
                _ = try await centralAnchor(connection, storeID: storeID)   // refuses a name another store uses
                return connection
            } catch {
                await ServerDeadline.close(connection)
                throw error
            }
        } catch {
            let e = UplinkError.from(error, target: url.display)
            try? await recordOutcome(error: e.message, caughtUp: false)
            throw e
        }
    }

    /// ``push(progress:)`` over a connection from ``connect()``.
    package func push(on connection: PostgresConnection, progress: (@Sendable (Progress) -> Void)? = nil) async throws -> Report {
        do {
            let store = self.store
            let storeID = try await onOwnThread { try store.currentAnchor().storeID }
            var report = try await send(on: connection, storeID: storeID, progress: progress)
            try await sendWorkouts(on: connection, storeID: storeID, into: &report)
            try? await recordOutcome(error: nil, caughtUp: true)
            return report
        } catch {
            let e = UplinkError.from(error, target: url.display)
            try? await recordOutcome(error: e.message, caughtUp: false)
            throw e
        }
    }

    /// One page of the change feed made ready to send: read from the store and laid out as the
    /// server's column arrays, off the cooperative pool.
    private struct Prepared: Sendable {
        var page: ChangeSet
        var batch: UplinkBatch
    }

    private func prepare(since anchor: ChangeAnchor?) async throws -> Prepared {
        let (store, batchSize, gateway) = (self.store, self.batchSize, self.gateway)
        return try await onOwnThread {
            let page = try store.changes(since: anchor, limit: batchSize)
            return Prepared(page: page, batch: UplinkBatch(page, gateway: gateway))
        }
    }

    /// Sends batch after batch. While the server applies batch N, batch N+1 is read and laid
    /// out (the two sides take turns otherwise); the read-ahead is dropped when N does not commit.
    private func send(on connection: PostgresConnection, storeID: String,
                      progress: (@Sendable (Progress) -> Void)?) async throws -> Report {
        var report = Report()
        var serverAnchor = try await centralAnchor(connection, storeID: storeID)
        var since = try await usableAnchor(serverAnchor)
        var fullSync = since == nil
        report.fullSync = fullSync
        let store = self.store
        var ahead: Task<Prepared, any Error>?
        defer { ahead?.cancel() }
        while true {
            let prepared: Prepared
            do {
                if let next = ahead {
                    ahead = nil
                    prepared = try await next.value
                } else {
                    prepared = try await prepare(since: since)
                }
            } catch let e as ChangeFeedError where e.requiresResync {
                logger.warning("uplink: \(e); sending the whole store again to \(url.display) (\(gateway))")
                since = nil
                fullSync = true
                report.fullSync = true
                continue
            }
            let page = prepared.page
            if page.isEmpty, !page.hasMore, page.anchor.description == serverAnchor, !fullSync {
                report.anchor = page.anchor.description
                try await persistLocally(page.anchor)
                return report
            }
            if page.hasMore {
                let from = page.anchor
                ahead = Task { try await self.prepare(since: from) }
            }
            let expected = serverAnchor
            let clear = fullSync
            let committed = try await bounded(connection) { try await commit(prepared.batch, anchor: page.anchor, on: connection, expecting: expected, clearFirst: clear) }
            if !committed {
                // Another push of this gateway committed meanwhile: continue from what the server holds.
                ahead?.cancel()
                ahead = nil
                logger.notice("uplink: another push of gateway \(gateway) moved the server's anchor; continuing from it")
                serverAnchor = try await centralAnchor(connection, storeID: storeID)
                since = try await usableAnchor(serverAnchor)
                fullSync = since == nil
                continue
            }
            // The server committed this batch and its anchor: only now does the store record it.
            try await persistLocally(page.anchor)
            serverAnchor = page.anchor.description
            since = page.anchor
            fullSync = false
            report.batches += 1
            report.deletions += page.deleted.count
            for s in page.samples { if s.seriesIndex == nil { report.samples += 1 } else { report.quantities += 1 } }
            report.anchor = page.anchor.description
            if let progress {
                let now = try await onOwnThread { try store.currentAnchor() }
                progress(Progress(sent: report.samples + report.quantities + report.deletions,
                                  remaining: max(0, now.sampleID - page.anchor.sampleID) + max(0, now.tombstone - page.anchor.tombstone)))
            }
            if !page.hasMore { return report }
        }
    }

    /// Mirrors the workouts: their changes since the anchor the server holds for this gateway
    /// (`workout_anchor`, ``HealthStore/workoutChanges(since:limit:)``), a page per server transaction that upserts the
    /// changed workouts, deletes the deleted and moves the anchor together, as sample batches do.
    /// An anchor of another store, or ahead of this one (a restored file), sends them all again.
    private func sendWorkouts(on c: PostgresConnection, storeID: String, into report: inout Report) async throws {
        let (store, gateway, logger, batchSize) = (self.store, self.gateway, self.logger, self.batchSize)
        while true {
            let held = try await bounded(c) { () async throws -> String? in
                var found: String?
                for try await a in try await c.query("SELECT workout_anchor FROM healthgate.gateways WHERE name = \(gateway)",
                                                     logger: logger).decode(String?.self) { found = a }
                return found
            }
            let (page, anchor, full) = try await onOwnThread { () throws -> (WorkoutChanges, String, Bool) in
                do {
                    let (page, anchor) = try store.workoutChanges(since: held, limit: batchSize)
                    return (page, anchor, held == nil)
                } catch let e as ChangeFeedError where e.requiresResync || held != nil {
                    // Another store's anchor, one ahead of a restored file, or text this build
                    // does not read: everything again.
                    let (page, anchor) = try store.workoutChanges(since: nil, limit: batchSize)
                    return (page, anchor, true)
                }
            }
            if !full, page.workouts.isEmpty, page.deleted.isEmpty, anchor == held { return }
            let committed = try await bounded(c) { () async throws -> Bool in
                try await c.query("BEGIN", logger: logger)
                do {
                    var current: String?? = .none
                    for try await a in try await c.query("SELECT workout_anchor FROM healthgate.gateways WHERE name = \(gateway) FOR UPDATE",
                                                         logger: logger).decode(String?.self) { current = .some(a) }
                    guard case .some(let now) = current, now == held else {
                        try await c.query("ROLLBACK", logger: logger)
                        return false
                    }
                    if full { try await c.query("DELETE FROM healthgate.workouts WHERE gateway = \(gateway)", logger: logger) }
                    if !page.deleted.isEmpty {
                        try await c.query("DELETE FROM healthgate.workouts WHERE gateway = \(gateway) AND uuid = ANY(\(page.deleted))", logger: logger)
                    }
                    for w in page.workouts {
                        let events = String(decoding: try JSONSerialization.data(withJSONObject: w.events.map {
                            ["kind": $0.kind.rawValue, "at": $0.date.timeIntervalSince1970] as [String: Any]
                        }), as: UTF8.self)
                        let devices = String(decoding: try JSONSerialization.data(withJSONObject: w.devices), as: UTF8.self)
                        try await c.query("""
                            INSERT INTO healthgate.workouts(gateway, uuid, activity, start_s, end_s, events, devices, source)
                            VALUES (\(gateway), \(w.uuid), \(w.activity.rawValue), \(w.start.timeIntervalSince1970),
                                    \(w.end?.timeIntervalSince1970), \(events)::jsonb, \(devices)::jsonb, \(w.source.name))
                            ON CONFLICT (gateway, uuid) DO UPDATE SET activity = EXCLUDED.activity, start_s = EXCLUDED.start_s,
                                end_s = EXCLUDED.end_s, events = EXCLUDED.events, devices = EXCLUDED.devices, source = EXCLUDED.source
                            """, logger: logger)
                    }
                    try await c.query("UPDATE healthgate.gateways SET workout_anchor = \(anchor) WHERE name = \(gateway)", logger: logger)
                    try await c.query("COMMIT", logger: logger)
                    return true
                } catch {
                    _ = try? await c.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
            guard committed else {
                logger.notice("uplink: another push of gateway \(gateway) moved the server's workout anchor; continuing from it")
                continue
            }
            report.workouts += page.workouts.count
            report.workoutDeletions += page.deleted.count
            if !page.hasMore { return }
        }
    }

    /// How long one exchange with the server (a batch, the schema check, an anchor read) may
    /// take before its connection is closed: a server or link that died, with or without closing
    /// the socket, must not stall the uplink forever.
    package static let batchDeadline: Duration = .seconds(30)

    /// Runs `body`; if it has not finished within ``batchDeadline`` the connection is closed
    /// (which fails the pending query) and the push fails with 69 — nothing is lost: the
    /// server rolls the open batch back and the next push sends it again. The caller is resumed
    /// at the deadline even if the query never returns (``ServerDeadline``).
    private func bounded<T: Sendable>(_ connection: PostgresConnection, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let display = url.display
        return try await ServerDeadline.run(connection, within: Self.batchDeadline, timeout: {
            UplinkError("PostgreSQL at \(display) did not answer within \(Self.batchDeadline); the connection was closed and nothing committed is lost — push again.", .unavailable)
        }, closed: {
            UplinkError("PostgreSQL at \(display) closed the connection before answering (a restart or a network cut?); nothing committed is lost and nothing is sent twice — push again when the server is back.", .unavailable)
        }, body)
    }

    /// The anchor the server holds for this gateway, refusing a gateway name another store uses.
    private func centralAnchor(_ connection: PostgresConnection, storeID: String) async throws -> String? {
        let (gateway, logger) = (self.gateway, self.logger)
        let row = try await bounded(connection) { () async throws -> [(String, String?)] in
            let rows = try await connection.query("SELECT store_id, anchor FROM healthgate.gateways WHERE name = \(gateway)", logger: logger)
            var found: [(String, String?)] = []
            for try await row in rows.decode((String, String?).self) { found.append(row) }
            return found
        }.first
        guard let (owner, anchor) = row else { return nil }
        guard owner == storeID else {
            throw UplinkError("the gateway name '\(gateway)' at \(url.display) already belongs to another store (\(owner), this one is \(storeID)); give this gateway its own name (--gateway, or gateway in [uplink.postgres]).", .config)
        }
        return anchor
    }

    /// The server's anchor as a place to continue the feed from, or nil to start over (none yet,
    /// or it cannot be answered without a gap: expired, from before a restore).
    private func usableAnchor(_ text: String?) async throws -> ChangeAnchor? {
        guard let text, let anchor = try? ChangeAnchor(string: text) else { return nil }
        let store = self.store
        do {
            try await onOwnThread { try store.validate(anchor) }
            return anchor
        } catch let e as ChangeFeedError where e.requiresResync {
            logger.warning("uplink: the server's anchor for \(gateway) is unusable (\(e)); sending the whole store again")
            return nil
        }
    }

    /// One server transaction: check the anchor it holds is the one this batch continues, apply
    /// the batch, move the anchor. Returns false (rolled back) when another push moved it.
    private func commit(_ batch: UplinkBatch, anchor: ChangeAnchor, on c: PostgresConnection, expecting: String?, clearFirst: Bool) async throws -> Bool {
        try await c.query("BEGIN", logger: logger)
        do {
            var current: String?? = .none
            for try await anchor in try await c.query(
                "SELECT anchor FROM healthgate.gateways WHERE name = \(gateway) FOR UPDATE", logger: logger).decode(String?.self) {
                current = .some(anchor)
            }
            guard case .some(let held) = current, held == expecting else {
                try await c.query("ROLLBACK", logger: logger)
                return false
            }
            if clearFirst {
                try await c.query("DELETE FROM healthgate.series_quantities WHERE gateway = \(gateway)", logger: logger)
                try await c.query("DELETE FROM healthgate.samples WHERE gateway = \(gateway)", logger: logger)
            }
            try await batch.apply(on: c, logger: logger)
            try await c.query("""
                UPDATE healthgate.gateways SET anchor = \(anchor.description), last_push = now() WHERE name = \(gateway)
                """, logger: logger)
            try await c.query("COMMIT", logger: logger)
            return true
        } catch {
            _ = try? await c.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    private func persistLocally(_ anchor: ChangeAnchor) async throws {
        let store = self.store
        let key = target.anchorKey
        try await onOwnThread { try store.setState(key, string: anchor.description) }
    }

    private func recordOutcome(error: String?, caughtUp: Bool) async throws {
        let store = self.store
        let target = self.target
        try await onOwnThread {
            var status = (try? store.state(target.statusKey)).flatMap { try? JSONDecoder().decode(UplinkTargetStatus.self, from: $0) }
                ?? UplinkTargetStatus(gateway: target.gateway, server: target.server)
            let now = Date().timeIntervalSince1970
            if let error {
                status.lastError = error
                status.lastErrorAt = now
            } else {
                status.lastPush = now
                if caughtUp { status.caughtUpAt = now }
                status.lastError = nil
                status.lastErrorAt = nil
            }
            try store.setState(target.statusKey, try JSONEncoder().encode(status))
        }
    }
}
