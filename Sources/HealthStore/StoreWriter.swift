import Foundation
import HealthModel

/// Writes rows inside one ``HealthStore/write(_:)`` transaction, with the store's lock held.
///
/// Package-visible so the Ingest module can build its bulk path on the same statements, id
/// caches and sync rules as ``HealthStore/save(_:state:)``. Valid only inside the closure it
/// was passed to.
package struct StoreWriter {
    let store: HealthStore

    /// The connection, for statements of the caller's own (same transaction).
    package var connection: Connection { store.withConnectionUnlocked }

    /// The one-row sample insert (``SampleColumns``); `ON CONFLICT(uuid) DO NOTHING` makes
    /// re-saves harmless.
    static let insertSQL = SampleColumns.insertSQL(rows: 1)

    /// The row id of a type (throws for a type not in the registry).
    package func typeID(_ t: QuantityType) throws -> Int64 { try store.typeID(t) }
    /// The row id of a source, created with its default priority on first sight.
    package func sourceID(_ s: Source) throws -> Int64 { try store.sourceID(s) }
    /// The row id of a device, created on first sight.
    package func deviceID(_ d: Device) throws -> Int64 { try store.deviceID(d) }

    /// Inserts one sample, applying the sync-identifier rules.
    package func insert(_ s: QuantitySample) throws -> SaveOutcome {
        try insert(s, using: try statements())
    }

    /// The statements ``insert(_:using:)`` runs, prepared once for a whole batch.
    package struct InsertStatements {
        let insert: Statement
        let findSync: Statement
        let deleteByID: Statement
    }

    /// Prepares (or takes from the cache) the statements a batch of inserts needs.
    package func statements() throws -> InsertStatements {
        let db = connection
        return InsertStatements(insert: try db.prepare(Self.insertSQL),
                                findSync: try db.prepare("SELECT id, sync_version FROM samples WHERE sync_identifier = ?"),
                                deleteByID: try db.prepare("DELETE FROM samples WHERE id = ?"))
    }

    /// Inserts one sample with statements prepared by ``statements()``.
    package func insert(_ s: QuantitySample, using st: InsertStatements) throws -> SaveOutcome {
        try raiseSamplePositions()
        var outcome = SaveOutcome.inserted
        if let sync = s.metadata.syncIdentifier {
            let version = s.metadata.syncVersion ?? 0
            let find = st.findSync
            find.bind(1, sync)
            if try find.step() {
                let id = find.int64(0), old = find.optionalInt(1) ?? 0
                find.reset()
                guard version > old else { return .ignored }
                st.deleteByID.bind(1, id)   // the trigger writes the tombstone
                try st.deleteByID.run()
                outcome = .replaced
            } else {
                find.reset()
            }
        }
        try bindSample(st.insert, s)
        try st.insert.run()
        return connection.changes == 0 ? .duplicate : outcome
    }

    /// Binds all columns of ``insertSQL`` for `s` (through ``SampleColumns``, as the bulk writer).
    func bindSample(_ ins: Statement, _ s: QuantitySample) throws {
        let m = s.metadata
        let row = SampleRow(typeID: try typeID(s.type), sourceID: try sourceID(s.source),
                            deviceID: try s.device.map { try deviceID($0) }, value: s.canonicalValue,   // canonicalUnit is a cached lookup (HealthModel)
                            start: s.startDate.timeIntervalSince1970, end: s.endDate.timeIntervalSince1970,
                            sensorLocation: m.heartRateSensorLocation, sensorContact: m.sensorContact,
                            motionContext: m.heartRateMotionContext,
                            flags: s.rrIntervals?.precededByGap == true ? .rrPrecededByGap : [])
        let ticks = s.rrIntervals?.ticks ?? []
        withUnsafeBytes(of: s.uuid.uuid) { u in
            ticks.withUnsafeBufferPointer { rr in
                SampleColumns.bind(ins.handle, offset: 0, uuid: u, row, rrTicks: rr, metadata: MetadataColumn.encode(m),
                                   sync: m.syncIdentifier.map { ($0, m.syncVersion) })
            }
        }
    }

    /// Sets (or, with nil, removes) a state value in this transaction.
    package func setState(_ key: String, _ value: Data?, at date: Date = Date()) throws {
        let db = connection
        if let value {
            let s = try db.prepare("""
                INSERT INTO state(key, value, updated_at) VALUES (?, ?, ?)
                ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
                """)
            s.bind(1, key); s.bind(2, value); s.bind(3, date.timeIntervalSince1970)
            try s.run()
        } else {
            let s = try db.prepare("DELETE FROM state WHERE key = ?")
            s.bind(1, key)
            try s.run()
        }
    }
}

extension HealthStore {
    /// The connection without taking the lock: only for code already inside `write`/`read`.
    var withConnectionUnlocked: Connection { unsafeConnection }
}

/// RR intervals as a BLOB: each tick count as a little-endian UInt16, oldest first.
enum RRColumn {
    static func encode(_ ticks: [UInt16]) -> Data {
        var d = Data(capacity: ticks.count * 2)
        for t in ticks { d.append(UInt8(t & 0xFF)); d.append(UInt8(t >> 8)) }
        return d
    }
    static func decode(_ d: Data) -> [UInt16] {
        let b = [UInt8](d)
        return stride(from: 0, to: b.count - 1, by: 2).map { UInt16(b[$0]) | UInt16(b[$0 + 1]) << 8 }
    }
}

/// The `metadata` column: JSON for what has no column of its own (wasUserEntered, user keys).
/// `{"wasUserEntered": true, "user": {"k": "text", "n": 1.5, "d": {"date": 1790000000.5}}}`;
/// NULL when there is nothing to keep.
enum MetadataColumn {
    static func encode(_ m: Metadata) -> String? {
        if m.wasUserEntered == nil && m.user.isEmpty { return nil }
        var obj: [String: Any] = [:]
        if let w = m.wasUserEntered { obj["wasUserEntered"] = w }
        if !m.user.isEmpty {
            var u: [String: Any] = [:]
            for (k, v) in m.user {
                switch v {
                case .string(let s): u[k] = s
                case .number(let n): u[k] = n
                case .date(let d): u[k] = ["date": d.timeIntervalSince1970]
                }
            }
            obj["user"] = u
        }
        guard let data = try? JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys]) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    static func decode(_ text: String, into m: inout Metadata) {
        guard let obj = (try? ExactJSON.value(Data(text.utf8))) as? [String: Any] else { return }
        if let w = obj["wasUserEntered"] as? Bool { m.wasUserEntered = w }
        if let u = obj["user"] as? [String: Any] {
            for (k0, v) in u {
                // Before reserved keys were refused, `add --metadata syncIdentifier=…` stored one
                // as a user key; keep it readable under a name that is not reserved.
                let k = Metadata.reservedKeys[k0] == nil ? k0 : "user." + k0
                if let s = v as? String { m.user[k] = .string(s) }
                else if let d = v as? [String: Any], let t = (d["date"] as? NSNumber)?.doubleValue {
                    m.user[k] = .date(Date(timeIntervalSince1970: t))
                } else if let n = v as? NSNumber { m.user[k] = .number(n.doubleValue) }
            }
        }
    }
}
