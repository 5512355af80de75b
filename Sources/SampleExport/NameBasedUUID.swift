import Crypto
import Foundation

/// UUIDs derived from a name (RFC 9562 version 8, from SHA-256), so an export names what has no
/// UUID of its own — a device, a quantity of a series, one RR interval — the same way every time:
/// two exports of the same data are equal, and a receiver can recognise what it already has.
enum NameBasedUUID {
    /// The UUID for `name` (the first 16 bytes of its SHA-256 with the version and variant set).
    static func make(_ name: String) -> UUID {
        var b = Array(SHA256.hash(data: Data(name.utf8)).prefix(16))
        b[6] = (b[6] & 0x0F) | 0x80   // version 8: custom
        b[8] = (b[8] & 0x3F) | 0x80   // variant 10
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                           b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    /// The UUID that names `sample` alone: its own, or for a quantity of a series one derived
    /// from the series' UUID and its index (they all carry the series' UUID).
    static func of(_ uuid: UUID, seriesIndex: Int?) -> UUID {
        guard let i = seriesIndex else { return uuid }
        return make("healthgate-series-quantity:\(uuid.uuidString.lowercased()):\(i)")
    }
}
