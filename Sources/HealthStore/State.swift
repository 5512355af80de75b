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

extension HealthStore {
    /// Carries a value over from keys an earlier version used: when `key` has no value and some of
    /// `oldKeys` do, the one `pick` chooses (an index into the found entries, in `oldKeys` order)
    /// becomes `key`'s value, and every old key found is removed — in one transaction, so the
    /// value is neither lost nor left behind for another device to pick up. Nothing happens when
    /// `key` already has a value or no old key has one.
    /// - Returns: the old key the value came from, or nil.
    @discardableResult
    public func moveState(to key: String, fromAny oldKeys: [String],
                          pick: ([(key: String, value: Data)]) -> Int?) throws -> String? {
        try write { w in
            let db = w.connection
            let get = try db.prepare("SELECT value FROM state WHERE key = ?")
            func value(_ k: String) throws -> Data? {
                get.bind(1, k)
                defer { get.reset() }
                return try get.step() ? get.data(0) ?? Data() : nil
            }
            guard try value(key) == nil else { return nil }
            var found: [(key: String, value: Data)] = []
            for k in oldKeys where k != key {
                if let v = try value(k), !found.contains(where: { $0.key == k }) { found.append((k, v)) }
            }
            guard !found.isEmpty, let i = pick(found), found.indices.contains(i) else { return nil }
            try w.setState(key, found[i].value)
            for f in found { try w.setState(f.key, nil) }
            return found[i].key
        }
    }
}
