import HealthModel

/// One sample as it travels the ingest hot path: a fixed-size, trivially copyable record.
///
/// Sources decode straight into a `SampleRecord` and push it into their ``SampleRing``; nothing
/// in it refers to the heap, so copying it into and out of the ring is a plain memory copy and a
/// push never allocates. Everything variable-sized a ``QuantitySample`` carries (type, source,
/// device) is named by a small slot id registered once in the ``SlotTable`` before the source
/// starts; beat-to-beat intervals live inline (``rr``, up to ``maxRR`` of them, which is more
/// than a 23-byte ATT notification can carry).
///
/// Times are Unix seconds (`Double`), values are in the type's canonical unit.
@frozen
package struct SampleRecord: BitwiseCopyable, Sendable, Equatable {
    /// How many RR intervals fit inline. A Heart Rate Measurement in a default-MTU notification
    /// carries at most 9 (20 bytes of payload minus the flags and a one-byte heart rate).
    package static let maxRR = 9

    /// The value in the type's canonical unit (count/min for heart rate, count for steps).
    package var value: Double
    /// Start of the measured span, Unix seconds.
    package var start: Double
    /// End of the measured span (for a notification: its receipt time), Unix seconds.
    package var end: Double
    /// A number the source gives the sample (a sequence number or a hash of its identity):
    /// carried to observers unchanged, never stored. Tests use it to follow every sample.
    /// For a record pushed with ``SampleRing/push(_:attachment:)`` (flag ``Flags/attached``)
    /// the ring sets it to the attachment's sequence number in ``SampleAttachments``.
    package var tag: UInt64
    /// The quantity type's slot in the ``SlotTable``.
    package var typeSlot: UInt16
    /// The source's slot in the ``SlotTable``.
    package var sourceSlot: UInt16
    /// The device's slot in the ``SlotTable`` (``SlotTable/noDevice`` when there is none).
    package var deviceSlot: UInt16
    /// ``Flags`` bits.
    package var flags: Flags
    /// How many entries of ``rr`` are valid.
    package var rrCount: UInt8
    /// The body sensor location of a heart-rate sample, as `HeartRateSensorLocation.rawValue + 1`
    /// (0: none known). Use ``heartRateSensorLocation``.
    package var sensorLocationCode: UInt8 = 0
    /// RR intervals in 1/1024 s, oldest first; only the first ``rrCount`` are meaningful.
    package var rr: (UInt16, UInt16, UInt16, UInt16, UInt16, UInt16, UInt16, UInt16, UInt16)

    /// Per-sample bits a source can set (mirroring HRM metadata HealthKit keeps).
    @frozen
    package struct Flags: OptionSet, BitwiseCopyable, Sendable, Hashable {
        package let rawValue: UInt16
        package init(rawValue: UInt16) { self.rawValue = rawValue }
        /// The sensor reported skin contact detection as supported.
        package static let contactSupported = Flags(rawValue: 1 << 0)
        /// Skin contact was detected (meaningful with ``contactSupported``).
        package static let contactDetected = Flags(rawValue: 1 << 1)
        /// Beats may be missing before the first RR interval (after a reconnect).
        package static let rrPrecededByGap = Flags(rawValue: 1 << 2)
        /// Decoded from a truncated payload (its valid prefix was used); stored as the user
        /// metadata key ``HealthModel/Metadata/payloadTruncatedKey`` = 1, as `live` stores it
        /// (records with an attachment carry their metadata there instead).
        package static let payloadTruncated = Flags(rawValue: 1 << 3)
        /// An energy interval ending at a saturated reading (0xFFFF): the true value may be
        /// larger; stored as ``HealthModel/Metadata/energySaturatedKey`` = 1.
        package static let energySaturated = Flags(rawValue: 1 << 4)
        /// The record has a ``SampleAttachment`` (metadata, state to persist) on the pipeline's
        /// side channel, numbered by ``SampleRecord/tag``. Set by the ring, not by sources.
        package static let attached = Flags(rawValue: 1 << 15)
    }

    /// A record with no RR intervals.
    @inlinable
    package init(typeSlot: UInt16, value: Double, start: Double, end: Double,
                sourceSlot: UInt16, deviceSlot: UInt16 = SlotTable.noDevice,
                flags: Flags = [], tag: UInt64 = 0) {
        self.value = value
        self.start = start
        self.end = end
        self.tag = tag
        self.typeSlot = typeSlot
        self.sourceSlot = sourceSlot
        self.deviceSlot = deviceSlot
        self.flags = flags
        self.rrCount = 0
        self.rr = (0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// Appends one RR interval (1/1024 s ticks); returns false (and stores nothing) when the
    /// inline storage is full.
    @inlinable
    @discardableResult
    package mutating func appendRR(_ ticks: UInt16) -> Bool {
        guard Int(rrCount) < Self.maxRR else { return false }
        withUnsafeMutableBytes(of: &rr) { raw in
            raw.storeBytes(of: ticks, toByteOffset: Int(rrCount) * 2, as: UInt16.self)
        }
        rrCount += 1
        return true
    }

    /// The body sensor location stored with the sample (nil: none known).
    @inlinable
    package var heartRateSensorLocation: HeartRateSensorLocation? {
        get { sensorLocationCode == 0 ? nil : HeartRateSensorLocation(rawValue: Int(sensorLocationCode) - 1) }
        set { sensorLocationCode = newValue.map { UInt8($0.rawValue + 1) } ?? 0 }
    }

    /// The valid RR intervals as an array (allocates: for the writer and observers, not the
    /// hot path).
    package var rrTicks: [UInt16] {
        withUnsafeBytes(of: rr) { raw in
            (0..<Int(rrCount)).map { raw.load(fromByteOffset: $0 * 2, as: UInt16.self) }
        }
    }

    package static func == (a: SampleRecord, b: SampleRecord) -> Bool {
        a.value == b.value && a.start == b.start && a.end == b.end && a.tag == b.tag
            && a.typeSlot == b.typeSlot && a.sourceSlot == b.sourceSlot && a.deviceSlot == b.deviceSlot
            && a.flags == b.flags && a.rrTicks == b.rrTicks && a.sensorLocationCode == b.sensorLocationCode
    }
}
