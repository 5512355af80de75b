import Crypto
import Foundation

/// The UUIDs an import gives what the export names no UUID for: derived from content, so the
/// same sample in this export, a re-export or a newer export gets the same UUID, and the store's
/// "UUID already stored → duplicate" rule drops it (docs/apple-health.md, "Identity").
///
/// A UUID is the first 16 bytes of the SHA-256 of a tagged list of fields, with RFC 9562's
/// version 8 (custom) and variant bits; a sample's UUID under
/// ``AppleHealthExportReader/SampleIdentity/timeOrdered`` then has its first 48 bits replaced
/// by its start in milliseconds, big-endian, as a version 7 UUID lays out its time.
///
/// The fields are those an export writes the same way every time: not the device text (its
/// object address changes per export), not the unit or the value as written (a phone's locale
/// turns `kcal` into `Cal`: the value in the canonical unit is hashed, to a millionth), not
/// metadata (keys come and go between iOS versions).
enum ContentIdentity {
    /// Fields are appended as length-prefixed bytes and little-endian integers, so no two
    /// different field lists give the same bytes.
    struct Fields {
        private(set) var bytes: [UInt8] = []

        init(_ tag: StaticString) {
            bytes.reserveCapacity(160)
            append(tag)
        }

        mutating func append(_ s: StaticString) {
            append(UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
        }

        mutating func append(_ s: String) {
            var copy = s
            copy.withUTF8 { append($0) }
        }

        mutating func append(_ b: UnsafeBufferPointer<UInt8>) {
            append(Int64(b.count))
            bytes.append(contentsOf: b)
        }

        mutating func append(_ v: Int64) {
            withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
        }

        /// Milliseconds since 1970, rounded.
        mutating func append(_ date: Date) {
            append(Int64((date.timeIntervalSince1970 * 1000).rounded()))
        }

        /// A value in a canonical unit, to a millionth (clamped far outside any plausible range).
        mutating func append(value: Double) {
            append(Int64((max(-9e12, min(9e12, value)) * 1e6).rounded()))
        }

        /// The version 8 UUID of these fields.
        var uuid: UUID {
            // Hashed from the buffer and read from the digest in place: no array is made on the
            // way (one sample each, on the reading thread).
            var hasher = SHA256()
            bytes.withUnsafeBytes { hasher.update(bufferPointer: $0) }
            var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            hasher.finalize().withUnsafeBytes { digest in
                withUnsafeMutableBytes(of: &u) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: digest.prefix(16))) }
            }
            u.6 = (u.6 & 0x0F) | 0x80   // version 8
            u.8 = (u.8 & 0x3F) | 0x80   // variant 10
            return UUID(uuid: u)
        }
    }

    /// A sample: its HealthGate type, source name, start, end and value in the canonical unit,
    /// under `scheme` (time-ordered: ``timeOrdered(_:start:)`` of the content hash).
    static func sample(type: String, source: String, start: Date, end: Date, canonicalValue: Double,
                       scheme: AppleHealthExportReader.SampleIdentity = .timeOrdered) -> UUID {
        var f = Fields("apple-health-sample/1")
        f.append(type)
        f.append(source)
        f.append(start)
        f.append(end)
        f.append(value: canonicalValue)
        return scheme == .timeOrdered ? timeOrdered(f.uuid, start: start) : f.uuid
    }

    /// `uuid` with its first six bytes replaced by `start`'s milliseconds since 1970, big-endian
    /// (clamped to 0…2⁴⁸ − 1), so the 74 bits of the hash left tell apart samples that start in
    /// the same millisecond.
    static func timeOrdered(_ uuid: UUID, start: Date) -> UUID {
        var u = uuid.uuid
        let ms = UInt64(max(0, min(Double((1 as UInt64) << 48 - 1), (start.timeIntervalSince1970 * 1000).rounded())))
        (u.0, u.1, u.2) = (UInt8(truncatingIfNeeded: ms >> 40), UInt8(truncatingIfNeeded: ms >> 32), UInt8(truncatingIfNeeded: ms >> 24))
        (u.3, u.4, u.5) = (UInt8(truncatingIfNeeded: ms >> 16), UInt8(truncatingIfNeeded: ms >> 8), UInt8(truncatingIfNeeded: ms))
        return UUID(uuid: u)
    }

    /// A workout: its activity as written, source name, start and end.
    static func workout(activity: String, source: String, start: Date, end: Date) -> UUID {
        var f = Fields("apple-health-workout/1")
        f.append(activity)
        f.append(source)
        f.append(start)
        f.append(end)
        return f.uuid
    }

    /// Run `index` of the beats listed with the SDNN sample `sdnn`, starting at `start`, under
    /// `scheme` (the SDNN's UUID is already its scheme's).
    static func beats(of sdnn: UUID, run index: Int, start: Date,
                      scheme: AppleHealthExportReader.SampleIdentity = .timeOrdered) -> UUID {
        var f = Fields("apple-health-beats/1")
        f.append(sdnn.uuidString)
        f.append(Int64(index))
        return scheme == .timeOrdered ? timeOrdered(f.uuid, start: start) : f.uuid
    }
}
