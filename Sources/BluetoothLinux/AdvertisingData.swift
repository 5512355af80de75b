/// The advertising data (AD) a peripheral broadcasts, parsed from its AD structures
/// (Core Supplement Part A: `[length][type][data…]` repeated, length counting type + data).
///
/// Parsing never fails and never invents a value: structures it cannot read (a length running
/// past the end, a zero-length padding byte followed by junk, a 16-bit list with an odd byte)
/// are reported in ``problems`` and what came before them is kept.
package struct AdvertisingData: Sendable, Hashable {
    /// AD type 0x01: the flags byte (LE Limited/General Discoverable, BR/EDR Not Supported, …).
    package var flags: UInt8?
    /// AD types 0x02 and 0x03: 16-bit service UUIDs, in the order advertised, from both lists.
    package var serviceUUIDs16: [UInt16] = []
    /// True when any 16-bit list was the *complete* list (type 0x03).
    package var serviceListComplete = false
    /// AD types 0x06 and 0x07: 128-bit service UUIDs as 16 bytes in display order.
    package var serviceUUIDs128: [[UInt8]] = []
    /// AD type 0x09 (complete) or 0x08 (shortened) local name. A complete name wins.
    package var localName: String?
    /// True when ``localName`` came from a complete-name structure (0x09).
    package var localNameComplete = false
    /// AD type 0xFF: manufacturer-specific data, one entry per structure.
    package var manufacturerData: [ManufacturerData] = []
    /// AD type 0x0A: the transmit power level in dBm.
    package var txPower: Int8?
    /// AD types 0x16 (16-bit service data): UUID and payload.
    package var serviceData16: [ServiceData] = []
    /// What could not be parsed, one short phrase each (empty for well-formed data).
    package var problems: [String] = []

    /// A manufacturer-specific data structure: company identifier and the bytes after it.
    package struct ManufacturerData: Sendable, Hashable {
        /// The Bluetooth SIG company identifier (0x006B = Polar Electro Oy).
        package var company: UInt16
        /// The payload after the company identifier.
        package var data: [UInt8]
    }

    /// A 16-bit service data structure: the service UUID and its payload.
    package struct ServiceData: Sendable, Hashable {
        package var uuid: UInt16
        package var data: [UInt8]
    }

    /// The Heart Rate service UUID, 0x180D.
    package static let heartRateService: UInt16 = 0x180D

    /// Creates empty advertising data.
    package init() {}

    /// Parses the AD structures in `bytes` (an advertising or scan-response payload).
    package init<C: Collection>(parsing bytes: C) where C.Element == UInt8 {
        let b = Array(bytes)
        var i = 0
        while i < b.count {
            let length = Int(b[i])
            if length == 0 {
                // Zero length ends the significant part; the rest must be zero padding.
                if b[(i + 1)...].contains(where: { $0 != 0 }) {
                    problems.append("a zero-length AD structure at byte \(i) followed by non-zero bytes")
                }
                break
            }
            guard i + 1 + length <= b.count else {
                problems.append("AD structure at byte \(i) claims \(length) bytes but only \(b.count - i - 1) remain")
                break
            }
            let type = b[i + 1]
            let value = Array(b[(i + 2)..<(i + 1 + length)])
            apply(type: type, value: value, at: i)
            i += 1 + length
        }
    }

    private mutating func apply(type: UInt8, value: [UInt8], at offset: Int) {
        switch type {
        case 0x01:
            guard value.count >= 1 else { problems.append("empty flags structure at byte \(offset)"); return }
            flags = value[0]
        case 0x02, 0x03:
            if value.count % 2 != 0 { problems.append("16-bit service list at byte \(offset) has an odd length (\(value.count))") }
            var j = 0
            while j + 1 < value.count {
                let uuid = UInt16(value[j]) | UInt16(value[j + 1]) << 8
                if !serviceUUIDs16.contains(uuid) { serviceUUIDs16.append(uuid) }
                j += 2
            }
            if type == 0x03 { serviceListComplete = true }
        case 0x06, 0x07:
            if value.count % 16 != 0 { problems.append("128-bit service list at byte \(offset) has a length of \(value.count), not a multiple of 16") }
            var j = 0
            while j + 16 <= value.count {
                serviceUUIDs128.append(Array(value[j..<(j + 16)].reversed()))
                j += 16
            }
        case 0x08, 0x09:
            let name = String(decoding: value, as: UTF8.self)
            if type == 0x09 || !localNameComplete {
                localName = name
                localNameComplete = type == 0x09
            }
        case 0x0A:
            guard value.count == 1 else { problems.append("TX power structure at byte \(offset) has \(value.count) bytes, not 1"); return }
            txPower = Int8(bitPattern: value[0])
        case 0x16:
            guard value.count >= 2 else { problems.append("service data at byte \(offset) is shorter than its UUID"); return }
            serviceData16.append(ServiceData(uuid: UInt16(value[0]) | UInt16(value[1]) << 8, data: Array(value[2...])))
        case 0xFF:
            guard value.count >= 2 else { problems.append("manufacturer data at byte \(offset) is shorter than its company identifier"); return }
            manufacturerData.append(ManufacturerData(company: UInt16(value[0]) | UInt16(value[1]) << 8,
                                                     data: Array(value[2...])))
        default:
            break  // Types HealthGate does not use are skipped, not errors.
        }
    }

    /// Merges a scan response (or a later report) into this data: lists are unioned, a field
    /// already present is replaced only by a better one (a complete name over a short one).
    package mutating func merge(_ other: AdvertisingData) {
        if let f = other.flags { flags = f }
        for u in other.serviceUUIDs16 where !serviceUUIDs16.contains(u) { serviceUUIDs16.append(u) }
        serviceListComplete = serviceListComplete || other.serviceListComplete
        for u in other.serviceUUIDs128 where !serviceUUIDs128.contains(u) { serviceUUIDs128.append(u) }
        if let n = other.localName, other.localNameComplete || !localNameComplete {
            localName = n
            localNameComplete = other.localNameComplete
        }
        for m in other.manufacturerData where !manufacturerData.contains(m) { manufacturerData.append(m) }
        if let t = other.txPower { txPower = t }
        for s in other.serviceData16 where !serviceData16.contains(s) { serviceData16.append(s) }
    }

    /// True when either 16-bit service list carries the Heart Rate service (0x180D).
    package var advertisesHeartRate: Bool { serviceUUIDs16.contains(Self.heartRateService) }

    /// Whether this looks like a heart-rate strap: 0x180D in either service list, or — since the
    /// profile only says a sensor *should* advertise the service — a local name that contains one
    /// of `nameHints` (case-insensitive).
    package func isHeartRateSensor(nameHints: [String] = AdvertisingData.defaultNameHints) -> Bool {
        if advertisesHeartRate { return true }
        guard let name = localName?.lowercased() else { return false }
        return nameHints.contains { name.contains($0.lowercased()) }
    }

    /// Name fragments of common straps that sometimes leave 0x180D out of their advertising
    /// (it then appears only in the scan response or not at all).
    package static let defaultNameHints = ["Polar H", "HRM", "TICKR", "Heart Rate"]
}

/// A company identifier's name for the few vendors HealthGate meets; `nil` for others.
package func companyName(_ id: UInt16) -> String? {
    switch id {
    case 0x006B: return "Polar Electro Oy"
    case 0x0087: return "Garmin International"
    case 0x0059: return "Nordic Semiconductor"
    case 0x004C: return "Apple"
    default: return nil
    }
}
