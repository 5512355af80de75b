import Foundation

extension HealthStore {
    /// The persisted value for `key` (per-device state such as a pedometer's last counter), or nil.
    public func state(_ key: String) throws -> Data? {
        try read { db in
            let st = try db.prepare("SELECT value FROM state WHERE key = ?")
            st.bind(1, key)
            defer { st.reset() }
            return try st.step() ? st.data(0) ?? Data() : nil
        }
    }

    /// The value for `key` as UTF-8 text, or nil.
    public func stateString(_ key: String) throws -> String? {
        try state(key).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Sets `key` to `value` (nil removes it), in its own transaction. To write state together
    /// with samples, pass it to ``save(_:state:)``.
    public func setState(_ key: String, _ value: Data?) throws {
        try write { w in try w.setState(key, value) }
    }

    /// Sets `key` to UTF-8 text.
    public func setState(_ key: String, string: String) throws {
        try setState(key, Data(string.utf8))
    }

    /// Every key starting with `prefix`, with its value, sorted by key.
    public func stateEntries(prefix: String = "") throws -> [(key: String, value: Data)] {
        try read { db in
            let st = try db.prepare("SELECT key, value FROM state WHERE substr(key, 1, length(?1)) = ?1 ORDER BY key")
            st.bind(1, prefix)
            var out: [(key: String, value: Data)] = []
            while try st.step() { out.append((st.string(0) ?? "", st.data(1) ?? Data())) }
            return out
        }
    }
}
