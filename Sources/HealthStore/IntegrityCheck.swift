import Foundation

extension HealthStore {
    /// SQLite's own check of every page, index and constraint of the file as readers see it
    /// (the main file with its write-ahead log): what to run after a power cut or an SD card's
    /// complaint. Returns the problems SQLite names, at most `limit` of them; empty when the
    /// store is intact. `quick` runs `quick_check` (no index-against-table comparison: about ten
    /// times faster on a year of data, still reads every page).
    public func integrityProblems(quick: Bool = false, limit: Int = 20) throws -> [String] {
        try read { db in
            var lines: [String] = []
            do {
                let st = try db.prepare("PRAGMA \(quick ? "quick_check" : "integrity_check")(\(max(1, limit)))", cached: false)
                while try st.step() { if let line = st.string(0) { lines.append(line) } }
            } catch let e as StoreError where e.kind == .corrupt {
                // Damage bad enough to stop the check itself (SQLITE_CORRUPT) is a finding too.
                lines.append("\(e)")
            }
            return lines == ["ok"] ? [] : lines
        }
    }
}
