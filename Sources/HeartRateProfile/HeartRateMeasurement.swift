import HealthModel

/// RR intervals of one notification, stored inline (no heap): up to ``capacity`` values of
/// 1/1024 s ticks, oldest first.
///
/// At the default ATT MTU a notification carries at most 9; ``capacity`` leaves room for large
/// MTUs. Values beyond it are not stored and the measurement says so
/// (``HeartRateMeasurement/Malformation/rrOverflow``).
public struct RRTicks: Sendable, Hashable, RandomAccessCollection, CustomStringConvertible {
    /// The most intervals one measurement stores.
    public static let capacity = 32

    // 32 × UInt16 = 64 bytes, inline (a tuple: no heap, trivially copyable).
    private var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var stored: UInt8 = 0

    /// No intervals.
    public init() {}

    /// Intervals from an array (the first ``capacity``).
    public init<S: Sequence<UInt16>>(_ ticks: S) {
        for t in ticks where count < Self.capacity { append(t) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { Int(stored) }

    public subscript(position: Int) -> UInt16 {
        precondition(position >= 0 && position < Int(stored), "RR index out of range")
        return withUnsafeBytes(of: storage) { $0.load(fromByteOffset: position &* 2, as: UInt16.self) }
    }

    /// Appends one interval; returns false when full.
    @inline(__always) @discardableResult
    public mutating func append(_ ticks: UInt16) -> Bool {
        guard Int(stored) < Self.capacity else { return false }
        let i = Int(stored)
        withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: ticks, toByteOffset: i &* 2, as: UInt16.self) }
        stored &+= 1
        return true
    }

    /// The intervals as an array (allocates; for storage and JSON, not the hot path).
    public var array: [UInt16] { Array(self) }

    public static func == (a: RRTicks, b: RRTicks) -> Bool { a.elementsEqual(b) }
    public func hash(into h: inout Hasher) { h.combine(stored); for t in self { h.combine(t) } }
    public var description: String { "\(array)" }
}

/// One Heart Rate Measurement (0x2A37) notification, decoded exactly as sent.
///
/// Decoding follows the Heart Rate Service XML field by field (flags, uint8/uint16 value,
/// Energy Expended, RR-Intervals) and reports what is on the wire: it never invents a value.
/// See docs/ble-heart-rate.md for the malformed-input rules.
public struct HeartRateMeasurement: Sendable, Hashable {
    /// Why a measurement that decoded is marked truncated (its valid prefix is kept).
    public enum Malformation: Sendable, Hashable, CustomStringConvertible {
        /// Flag bit 3 announces Energy Expended but fewer than 2 bytes follow; nothing after
        /// the heart-rate value is decoded.
        case energyExpendedMissing
        /// An RR list ends in a lone byte, which is not an interval and is dropped.
        case oddTrailingByte
        /// More RR intervals than ``RRTicks/capacity``; the extra ones were not kept.
        case rrOverflow(dropped: Int)

        public var description: String {
            switch self {
            case .energyExpendedMissing: "the energy expended field is announced but missing"
            case .oddTrailingByte: "the RR list ends in a lone byte"
            case .rrOverflow(let n): "\(n) RR interval(s) beyond the \(RRTicks.capacity) kept"
            }
        }
    }

    /// The flags byte as sent (reserved bits 5–7 included, but never interpreted).
    public var flags: UInt8
    /// Beats per minute; 0 means the sensor has no valid reading.
    public var beatsPerMinute: UInt16
    /// Whether the value was sent as uint16 (flag bit 0). Straps may switch per notification.
    public var isUInt16: Bool { flags & 0x01 != 0 }
    /// Skin contact (flag bits 1–2): 0 and 1 mean not supported.
    public var sensorContact: SensorContact
    /// Energy expended in kJ since the last reset (0xFFFF = saturated), when sent.
    public var energyExpendedKJ: UInt16?
    /// RR intervals in 1/1024 s ticks, oldest first (empty when none were sent).
    public var rrIntervals: RRTicks
    /// Set when the payload was malformed after a valid prefix.
    public var malformation: Malformation?
    /// Bytes after the last field the flags announce (no RR flag). They are ignored, not an
    /// error: a future revision may append fields behind today's reserved flag bits, and
    /// Wireshark, bumble and bluetooth-sig all accept them.
    public var ignoredTrailingBytes: Int

    /// True when the payload ended early or had stray bytes: the fields here are the valid
    /// prefix, and nothing was invented.
    public var truncated: Bool { malformation != nil }

    /// A measurement from its parts (for encoders and tests).
    public init(beatsPerMinute: UInt16, sensorContact: SensorContact = .notSupported, energyExpendedKJ: UInt16? = nil,
                rrIntervals: RRTicks = RRTicks(), uint16: Bool? = nil, flags reserved: UInt8 = 0) {
        let wide = uint16 ?? (beatsPerMinute > 255)
        var f: UInt8 = reserved & 0xE0
        if wide { f |= 0x01 }
        switch sensorContact {
        case .notSupported: break
        case .notDetected: f |= 0x04
        case .detected: f |= 0x06
        }
        if energyExpendedKJ != nil { f |= 0x08 }
        if !rrIntervals.isEmpty { f |= 0x10 }
        self.flags = f
        self.beatsPerMinute = beatsPerMinute
        self.sensorContact = sensorContact
        self.energyExpendedKJ = energyExpendedKJ
        self.rrIntervals = rrIntervals
        self.malformation = nil
        self.ignoredTrailingBytes = 0
    }

    /// Decodes one notification value. Allocates nothing.
    /// - Throws: ``HeartRateMeasurementError`` when there is no valid heart-rate value (an
    ///   empty payload, flags only, or a cut-short uint16 value).
    @inlinable
    public static func decode(_ raw: UnsafeRawBufferPointer) throws(HeartRateMeasurementError) -> HeartRateMeasurement {
        let n = raw.count
        guard n > 0 else { throw .empty }
        let flags = raw[0]
        var m = HeartRateMeasurement(uncheckedFlags: flags)
        var i: Int
        if flags & 0x01 != 0 {
            guard n >= 3 else { throw .missingHeartRateValue(flags: flags, bytesAfterFlags: n - 1) }
            m.beatsPerMinute = UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 1, as: UInt16.self))
            i = 3
        } else {
            guard n >= 2 else { throw .missingHeartRateValue(flags: flags, bytesAfterFlags: 0) }
            m.beatsPerMinute = UInt16(raw[1])
            i = 2
        }
        if flags & 0x08 != 0 {
            guard n - i >= 2 else {
                m.malformation = .energyExpendedMissing
                return m
            }
            m.energyExpendedKJ = UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt16.self))
            i += 2
        }
        if flags & 0x10 != 0 {
            var dropped = 0
            while n - i >= 2 {
                if !m.rrIntervals.append(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt16.self))) {
                    dropped += 1
                }
                i += 2
            }
            if n - i == 1 {
                m.malformation = .oddTrailingByte
            } else if dropped > 0 {
                m.malformation = .rrOverflow(dropped: dropped)
            }
        } else {
            m.ignoredTrailingBytes = n - i
        }
        return m
    }

    /// Every whole RR interval of a Heart Rate Measurement payload, oldest first, however many
    /// (``decode(_:)`` keeps ``RRTicks/capacity``; a large MTU can carry up to 256). Allocates:
    /// for the rare notification that overflowed, not the hot path. Empty when the payload has
    /// no RR field.
    public static func allRRIntervals(in raw: UnsafeRawBufferPointer) -> [UInt16] {
        guard let flags = raw.first, flags & 0x10 != 0 else { return [] }
        var i = 1 + (flags & 0x01 != 0 ? 2 : 1) + (flags & 0x08 != 0 ? 2 : 0)
        var out: [UInt16] = []
        while raw.count - i >= 2 {
            out.append(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt16.self)))
            i += 2
        }
        return out
    }

    /// Decodes from any byte collection (copies into a contiguous buffer when needed).
    /// - Throws: ``HeartRateMeasurementError``.
    public static func decode<C: Collection<UInt8>>(bytes: C) throws(HeartRateMeasurementError) -> HeartRateMeasurement {
        let result: Result<HeartRateMeasurement, HeartRateMeasurementError> =
            bytes.withContiguousStorageIfAvailable { buffer in
                Result { () throws(HeartRateMeasurementError) in try decode(UnsafeRawBufferPointer(buffer)) }
            } ?? Array(bytes).withUnsafeBytes { raw in
                Result { () throws(HeartRateMeasurementError) in try decode(raw) }
            }
        return try result.get()
    }

    @usableFromInline
    init(uncheckedFlags flags: UInt8) {
        self.flags = flags
        self.beatsPerMinute = 0
        switch (flags >> 1) & 0x03 {
        case 2: self.sensorContact = .notDetected
        case 3: self.sensorContact = .detected
        default: self.sensorContact = .notSupported
        }
        self.energyExpendedKJ = nil
        self.rrIntervals = RRTicks()
        self.malformation = nil
        self.ignoredTrailingBytes = 0
    }

    /// The wire bytes for this measurement's fields as its ``flags`` announce them (for the
    /// simulated strap and round-trip tests). A truncated measurement encodes its valid prefix.
    public func encode() -> [UInt8] {
        var out: [UInt8] = [flags]
        if isUInt16 { out += [UInt8(beatsPerMinute & 0xFF), UInt8(beatsPerMinute >> 8)] } else { out.append(UInt8(truncatingIfNeeded: beatsPerMinute)) }
        if let e = energyExpendedKJ { out += [UInt8(e & 0xFF), UInt8(e >> 8)] }
        for t in rrIntervals { out += [UInt8(t & 0xFF), UInt8(t >> 8)] }
        return out
    }
}

/// Why a Heart Rate Measurement payload was rejected: it has no valid heart-rate value.
public enum HeartRateMeasurementError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A zero-length payload.
    case empty
    /// The heart-rate value is missing or cut short.
    case missingHeartRateValue(flags: UInt8, bytesAfterFlags: Int)

    public var description: String {
        switch self {
        case .empty:
            return "empty payload: a Heart Rate Measurement needs a flags byte and a heart rate value"
        case .missingHeartRateValue(let flags, let have):
            let width = flags & 0x01 != 0 ? "uint16 (2 bytes)" : "uint8 (1 byte)"
            return "missing heart rate value: flags 0x\(flags < 16 ? "0" : "")\(String(flags, radix: 16)) announce a \(width) value but \(have) byte(s) follow the flags"
        }
    }
}
