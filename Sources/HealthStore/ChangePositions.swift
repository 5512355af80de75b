/// The change feed's positions (docs/change-feed.md): sample ids and series' change positions
/// are one sequence, so one anchor number orders both. Sample rows take theirs from the
/// samples' AUTOINCREMENT counter (`sqlite_sequence`); a series' growth takes the next number
/// past every position already handed out, read from where the positions are kept, and writes
/// the counter nowhere (docs/store.md, "Writes"): a commit that only grows series then writes
/// its chunk rows alone, not the `sqlite_sequence` page as well. Two rules keep the sequence
/// one: a transaction raises the counter past that head before it inserts a sample row
/// (``StoreWriter/raiseSamplePositions()``), and deleting a series raises it past the
/// series' positions (the trigger `series_positions`), so no number is handed out twice.
enum ChangePositions {
    /// The largest position handed out: the counter, the largest sample id, the largest
    /// position a series row holds (index `series_change`), and for an open series (index
    /// `series_open`) its pending chunks' (whose row is rewritten only when a chunk fills).
    static let headSQL = """
        max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'samples'), 0),
            coalesce((SELECT max(id) FROM samples), 0),
            coalesce((SELECT max(change_seq) FROM series), 0),
            coalesce((SELECT max(c.change_seq) FROM series o JOIN series_chunks c ON c.series_id = o.id
                      WHERE o.open = 1 AND c.seq >= o.pending_seq), 0))
        """

    /// The largest position handed out (``headSQL``), in `db`'s transaction or snapshot.
    static func head(_ db: Connection) throws -> Int64 {
        let st = try db.prepare("SELECT \(headSQL)")
        defer { st.reset() }
        _ = try st.step()
        return st.int64(0)
    }
}

extension StoreWriter {
    /// The first of `count` new positions for series created or grown in this transaction
    /// (each takes one as its chunks' `change_seq`): the head plus one. Nothing is written; a
    /// sample row inserted later in the transaction is first raised past them.
    func reservePositions(count: Int) throws -> Int64 {
        store.samplePositionsMayLag = true
        return try ChangePositions.head(connection) + 1
    }

    /// Raises the samples' AUTOINCREMENT counter past every position handed out, before a
    /// sample row takes the next one (AUTOINCREMENT takes max(counter, largest id) + 1, which
    /// knows nothing of the series' positions). Once per transaction, and again after a series
    /// took positions in it; writes nothing when the counter is already past them.
    func raiseSamplePositions() throws {
        guard store.samplePositionsMayLag else { return }
        let db = connection
        let head = try ChangePositions.head(db)
        let up = try db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'samples' AND seq < ?")
        up.bind(1, head); up.bind(2, head)
        try up.run()
        if db.changes == 0, head > 0 {
            let ins = try db.prepare("""
                INSERT INTO sqlite_sequence(name, seq) SELECT 'samples', ?
                WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'samples')
                """)
            ins.bind(1, head)
            try ins.run()
        }
        store.samplePositionsMayLag = false
    }
}
