/// ATT protocol constants and the PDU codec (Bluetooth Core, Vol 3, Part F).
///
/// ``ATTPDU`` is the value form of every PDU HealthGate's client and test server exchange.
/// Encoding and decoding are exact inverses for well-formed PDUs; decoding a malformed one
/// throws ``ATTDecodeError`` naming what is wrong. Notifications on the client's hot path are
/// not decoded through this type (see ``GATTClient``): they are parsed in place.

/// An ATT opcode (one byte). Named constants cover every PDU HealthGate uses.
public struct ATTOpcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let errorResponse = ATTOpcode(rawValue: 0x01)
    public static let exchangeMTURequest = ATTOpcode(rawValue: 0x02)
    public static let exchangeMTUResponse = ATTOpcode(rawValue: 0x03)
    public static let findInformationRequest = ATTOpcode(rawValue: 0x04)
    public static let findInformationResponse = ATTOpcode(rawValue: 0x05)
    public static let findByTypeValueRequest = ATTOpcode(rawValue: 0x06)
    public static let findByTypeValueResponse = ATTOpcode(rawValue: 0x07)
    public static let readByTypeRequest = ATTOpcode(rawValue: 0x08)
    public static let readByTypeResponse = ATTOpcode(rawValue: 0x09)
    public static let readRequest = ATTOpcode(rawValue: 0x0A)
    public static let readResponse = ATTOpcode(rawValue: 0x0B)
    public static let readBlobRequest = ATTOpcode(rawValue: 0x0C)
    public static let readBlobResponse = ATTOpcode(rawValue: 0x0D)
    public static let readByGroupTypeRequest = ATTOpcode(rawValue: 0x10)
    public static let readByGroupTypeResponse = ATTOpcode(rawValue: 0x11)
    public static let writeRequest = ATTOpcode(rawValue: 0x12)
    public static let writeResponse = ATTOpcode(rawValue: 0x13)
    public static let handleValueNotification = ATTOpcode(rawValue: 0x1B)
    public static let handleValueIndication = ATTOpcode(rawValue: 0x1D)
    public static let handleValueConfirmation = ATTOpcode(rawValue: 0x1E)
    public static let writeCommand = ATTOpcode(rawValue: 0x52)

    /// Commands (bit 6 set) never get a response, not even an error.
    public var isCommand: Bool { rawValue & 0x40 != 0 }

    /// True for the opcodes a client sends and a server must answer (requests).
    public var isRequest: Bool {
        switch self {
        case .exchangeMTURequest, .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest,
             .readRequest, .readBlobRequest, .readByGroupTypeRequest, .writeRequest:
            return true
        default:
            // Other even opcodes below 0x1E that are not listed (0x0E Read Multiple, 0x16 Prepare
            // Write, 0x18 Execute Write, 0x20 Read Multiple Variable) are requests too.
            return [0x0E, 0x16, 0x18, 0x20].contains(rawValue)
        }
    }

    /// True for the opcodes that answer a request (including Error Response).
    public var isResponse: Bool {
        switch rawValue {
        case 0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .errorResponse: "Error Response"
        case .exchangeMTURequest: "Exchange MTU Request"
        case .exchangeMTUResponse: "Exchange MTU Response"
        case .findInformationRequest: "Find Information Request"
        case .findInformationResponse: "Find Information Response"
        case .findByTypeValueRequest: "Find By Type Value Request"
        case .findByTypeValueResponse: "Find By Type Value Response"
        case .readByTypeRequest: "Read By Type Request"
        case .readByTypeResponse: "Read By Type Response"
        case .readRequest: "Read Request"
        case .readResponse: "Read Response"
        case .readBlobRequest: "Read Blob Request"
        case .readBlobResponse: "Read Blob Response"
        case .readByGroupTypeRequest: "Read By Group Type Request"
        case .readByGroupTypeResponse: "Read By Group Type Response"
        case .writeRequest: "Write Request"
        case .writeResponse: "Write Response"
        case .handleValueNotification: "Handle Value Notification"
        case .handleValueIndication: "Handle Value Indication"
        case .handleValueConfirmation: "Handle Value Confirmation"
        case .writeCommand: "Write Command"
        default: "opcode 0x" + hex8(rawValue)
        }
    }
}

/// An ATT error code carried by an Error Response, with the Core specification's names.
public struct ATTErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let invalidHandle = ATTErrorCode(0x01)
    public static let readNotPermitted = ATTErrorCode(0x02)
    public static let writeNotPermitted = ATTErrorCode(0x03)
    public static let invalidPDU = ATTErrorCode(0x04)
    public static let insufficientAuthentication = ATTErrorCode(0x05)
    public static let requestNotSupported = ATTErrorCode(0x06)
    public static let invalidOffset = ATTErrorCode(0x07)
    public static let insufficientAuthorization = ATTErrorCode(0x08)
    public static let prepareQueueFull = ATTErrorCode(0x09)
    /// The normal end of every discovery loop.
    public static let attributeNotFound = ATTErrorCode(0x0A)
    public static let attributeNotLong = ATTErrorCode(0x0B)
    public static let insufficientEncryptionKeySize = ATTErrorCode(0x0C)
    public static let invalidAttributeValueLength = ATTErrorCode(0x0D)
    public static let unlikelyError = ATTErrorCode(0x0E)
    public static let insufficientEncryption = ATTErrorCode(0x0F)
    public static let unsupportedGroupType = ATTErrorCode(0x10)
    public static let insufficientResources = ATTErrorCode(0x11)
    public static let databaseOutOfSync = ATTErrorCode(0x12)
    public static let valueNotAllowed = ATTErrorCode(0x13)
    /// Heart Rate Control Point Not Supported (HRS application error 0x80).
    public static let heartRateControlPointNotSupported = ATTErrorCode(0x80)
    public static let cccdImproperlyConfigured = ATTErrorCode(0xFD)
    public static let procedureAlreadyInProgress = ATTErrorCode(0xFE)
    public static let outOfRange = ATTErrorCode(0xFF)

    /// True for 0x80–0x9F, the range profiles define (HRS uses 0x80).
    public var isApplicationError: Bool { (0x80...0x9F).contains(rawValue) }

    /// True when the peer wants a more secure link (pair, then retry).
    public var needsSecurity: Bool {
        self == .insufficientAuthentication || self == .insufficientEncryption
            || self == .insufficientEncryptionKeySize || self == .insufficientAuthorization
    }

    public var description: String {
        let name: String
        switch rawValue {
        case 0x01: name = "Invalid Handle"
        case 0x02: name = "Read Not Permitted"
        case 0x03: name = "Write Not Permitted"
        case 0x04: name = "Invalid PDU"
        case 0x05: name = "Insufficient Authentication"
        case 0x06: name = "Request Not Supported"
        case 0x07: name = "Invalid Offset"
        case 0x08: name = "Insufficient Authorization"
        case 0x09: name = "Prepare Queue Full"
        case 0x0A: name = "Attribute Not Found"
        case 0x0B: name = "Attribute Not Long"
        case 0x0C: name = "Insufficient Encryption Key Size"
        case 0x0D: name = "Invalid Attribute Value Length"
        case 0x0E: name = "Unlikely Error"
        case 0x0F: name = "Insufficient Encryption"
        case 0x10: name = "Unsupported Group Type"
        case 0x11: name = "Insufficient Resources"
        case 0x12: name = "Database Out Of Sync"
        case 0x13: name = "Value Not Allowed"
        case 0x80...0x9F: name = "Application Error"
        case 0xFD: name = "CCCD Improperly Configured"
        case 0xFE: name = "Procedure Already In Progress"
        case 0xFF: name = "Out Of Range"
        default: name = "Reserved"
        }
        return "\(name) (0x\(hex8(rawValue)))"
    }
}

/// One handle/UUID pair of a Find Information Response.
public struct ATTHandleUUID: Sendable, Hashable {
    public var handle: UInt16
    public var uuid: BluetoothUUID
    public init(handle: UInt16, uuid: BluetoothUUID) { self.handle = handle; self.uuid = uuid }
}

/// One handle/value pair of a Read By Type Response.
public struct ATTHandleValue: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, value: [UInt8]) { self.handle = handle; self.value = value }
}

/// One group of a Read By Group Type Response: the handle range and the group's value (the
/// service UUID for a primary service declaration).
public struct ATTGroupValue: Sendable, Hashable {
    public var handle: UInt16
    public var endGroupHandle: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, endGroupHandle: UInt16, value: [UInt8]) {
        self.handle = handle; self.endGroupHandle = endGroupHandle; self.value = value
    }
}

/// Why bytes are not a well-formed ATT PDU.
public struct ATTDecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The opcode byte (nil for an empty PDU).
    public let opcode: UInt8?
    /// What is wrong, in words.
    public let reason: String
    public init(opcode: UInt8?, reason: String) { self.opcode = opcode; self.reason = reason }
    public var description: String {
        let name = opcode.map { ATTOpcode(rawValue: $0).description } ?? "empty PDU"
        return "malformed ATT PDU (\(name)): \(reason)"
    }
}

/// An ATT PDU as a value. ``encode()`` produces the exact wire bytes; ``init(decoding:)``
/// parses them.
public enum ATTPDU: Sendable, Hashable {
    case errorResponse(request: ATTOpcode, handle: UInt16, error: ATTErrorCode)
    case exchangeMTURequest(clientRxMTU: UInt16)
    case exchangeMTUResponse(serverRxMTU: UInt16)
    case findInformationRequest(start: UInt16, end: UInt16)
    case findInformationResponse([ATTHandleUUID])
    case readByTypeRequest(start: UInt16, end: UInt16, type: BluetoothUUID)
    case readByTypeResponse([ATTHandleValue])
    case readRequest(handle: UInt16)
    case readResponse([UInt8])
    case readBlobRequest(handle: UInt16, offset: UInt16)
    case readBlobResponse([UInt8])
    case readByGroupTypeRequest(start: UInt16, end: UInt16, type: BluetoothUUID)
    case readByGroupTypeResponse([ATTGroupValue])
    case writeRequest(handle: UInt16, value: [UInt8])
    case writeResponse
    case writeCommand(handle: UInt16, value: [UInt8])
    case handleValueNotification(handle: UInt16, value: [UInt8])
    case handleValueIndication(handle: UInt16, value: [UInt8])
    case handleValueConfirmation
    /// Any PDU this codec does not model (kept whole so a server can answer it).
    case other(opcode: ATTOpcode, parameters: [UInt8])

    /// The PDU's opcode.
    public var opcode: ATTOpcode {
        switch self {
        case .errorResponse: .errorResponse
        case .exchangeMTURequest: .exchangeMTURequest
        case .exchangeMTUResponse: .exchangeMTUResponse
        case .findInformationRequest: .findInformationRequest
        case .findInformationResponse: .findInformationResponse
        case .readByTypeRequest: .readByTypeRequest
        case .readByTypeResponse: .readByTypeResponse
        case .readRequest: .readRequest
        case .readResponse: .readResponse
        case .readBlobRequest: .readBlobRequest
        case .readBlobResponse: .readBlobResponse
        case .readByGroupTypeRequest: .readByGroupTypeRequest
        case .readByGroupTypeResponse: .readByGroupTypeResponse
        case .writeRequest: .writeRequest
        case .writeResponse: .writeResponse
        case .writeCommand: .writeCommand
        case .handleValueNotification: .handleValueNotification
        case .handleValueIndication: .handleValueIndication
        case .handleValueConfirmation: .handleValueConfirmation
        case .other(let op, _): op
        }
    }

    /// The wire bytes (opcode first, little-endian fields).
    ///
    /// Response lists must be uniform (every entry the same length), as ATT requires; the
    /// encoder takes the first entry's length as the list's.
    public func encode() -> [UInt8] {
        var out: [UInt8] = [opcode.rawValue]
        func u16(_ v: UInt16) { out.append(UInt8(v & 0xFF)); out.append(UInt8(v >> 8)) }
        switch self {
        case .errorResponse(let req, let handle, let error):
            out.append(req.rawValue); u16(handle); out.append(error.rawValue)
        case .exchangeMTURequest(let mtu), .exchangeMTUResponse(let mtu):
            u16(mtu)
        case .findInformationRequest(let s, let e):
            u16(s); u16(e)
        case .findInformationResponse(let entries):
            let long = entries.first.map { $0.uuid.alias == nil } ?? false
            out.append(long ? 0x02 : 0x01)
            for e in entries { u16(e.handle); out += e.uuid.attBytes }
        case .readByTypeRequest(let s, let e, let t), .readByGroupTypeRequest(let s, let e, let t):
            u16(s); u16(e); out += t.attBytes
        case .readByTypeResponse(let entries):
            out.append(UInt8(truncatingIfNeeded: 2 + (entries.first?.value.count ?? 0)))
            for e in entries { u16(e.handle); out += e.value }
        case .readRequest(let h):
            u16(h)
        case .readResponse(let v), .readBlobResponse(let v):
            out += v
        case .readBlobRequest(let h, let offset):
            u16(h); u16(offset)
        case .readByGroupTypeResponse(let entries):
            out.append(UInt8(truncatingIfNeeded: 4 + (entries.first?.value.count ?? 0)))
            for e in entries { u16(e.handle); u16(e.endGroupHandle); out += e.value }
        case .writeRequest(let h, let v), .writeCommand(let h, let v),
             .handleValueNotification(let h, let v), .handleValueIndication(let h, let v):
            u16(h); out += v
        case .writeResponse, .handleValueConfirmation:
            break
        case .other(_, let p):
            out += p
        }
        return out
    }

    /// Parses wire bytes.
    /// - Throws: ``ATTDecodeError`` when the PDU is empty, too short for its opcode, or a list
    ///   response has an impossible entry length.
    public init<C: Collection<UInt8>>(decoding bytes: C) throws(ATTDecodeError) {
        let b = Array(bytes)
        guard let op = b.first else { throw ATTDecodeError(opcode: nil, reason: "no opcode byte") }
        let p = Array(b.dropFirst())
        func need(_ n: Int, _ what: String) throws(ATTDecodeError) {
            if p.count < n {
                throw ATTDecodeError(opcode: op, reason: "needs \(n) parameter bytes (\(what)), has \(p.count)")
            }
        }
        func u16(_ i: Int) -> UInt16 { UInt16(p[i]) | UInt16(p[i + 1]) << 8 }
        /// The entries of a Read By (Group) Type Response: `p[0]` is their length (at least
        /// `minimum`), then whole entries, each made by `make` from its offset and that length.
        func entries<T>(atLeast minimum: Int, _ make: (_ at: Int, _ size: Int) -> T) throws(ATTDecodeError) -> [T] {
            try need(1, "entry length")
            let size = Int(p[0])
            let body = p.count - 1
            guard size >= minimum, body > 0, body % size == 0 else {
                throw ATTDecodeError(opcode: op, reason: "entry length \(size) does not divide \(body) data bytes")
            }
            var out: [T] = []
            var i = 1
            while i < p.count { out.append(make(i, size)); i += size }
            return out
        }
        func uuid(_ slice: ArraySlice<UInt8>) throws(ATTDecodeError) -> BluetoothUUID {
            guard let u = BluetoothUUID(attBytes: slice) else {
                throw ATTDecodeError(opcode: op, reason: "a UUID must be 2 or 16 bytes, got \(slice.count)")
            }
            return u
        }
        switch ATTOpcode(rawValue: op) {
        case .errorResponse:
            try need(4, "request opcode, handle, error code")
            self = .errorResponse(request: ATTOpcode(rawValue: p[0]), handle: u16(1), error: ATTErrorCode(p[3]))
        case .exchangeMTURequest:
            try need(2, "client Rx MTU"); self = .exchangeMTURequest(clientRxMTU: u16(0))
        case .exchangeMTUResponse:
            try need(2, "server Rx MTU"); self = .exchangeMTUResponse(serverRxMTU: u16(0))
        case .findInformationRequest:
            try need(4, "start and end handles"); self = .findInformationRequest(start: u16(0), end: u16(2))
        case .findInformationResponse:
            try need(1, "format")
            let size: Int
            switch p[0] {
            case 0x01: size = 4
            case 0x02: size = 18
            default: throw ATTDecodeError(opcode: op, reason: "unknown format 0x\(hex8(p[0])) (expected 0x01 or 0x02)")
            }
            let body = p.dropFirst()
            guard !body.isEmpty, body.count % size == 0 else {
                throw ATTDecodeError(opcode: op, reason: "\(body.count) data bytes is not a whole number of \(size)-byte entries")
            }
            var entries: [ATTHandleUUID] = []
            var i = 1
            while i < p.count {
                entries.append(ATTHandleUUID(handle: u16(i), uuid: try uuid(p[(i + 2)..<(i + size)])))
                i += size
            }
            self = .findInformationResponse(entries)
        case .readByTypeRequest, .readByGroupTypeRequest:
            try need(6, "start and end handles and a type UUID")
            let t = try uuid(p[4...])
            self = op == 0x08 ? .readByTypeRequest(start: u16(0), end: u16(2), type: t)
                : .readByGroupTypeRequest(start: u16(0), end: u16(2), type: t)
        case .readByTypeResponse:
            self = .readByTypeResponse(try entries(atLeast: 2) { i, size in
                ATTHandleValue(handle: u16(i), value: Array(p[(i + 2)..<(i + size)]))
            })
        case .readRequest:
            try need(2, "handle"); self = .readRequest(handle: u16(0))
        case .readResponse:
            self = .readResponse(p)
        case .readBlobRequest:
            try need(4, "handle and offset"); self = .readBlobRequest(handle: u16(0), offset: u16(2))
        case .readBlobResponse:
            self = .readBlobResponse(p)
        case .readByGroupTypeResponse:
            self = .readByGroupTypeResponse(try entries(atLeast: 4) { i, size in
                ATTGroupValue(handle: u16(i), endGroupHandle: u16(i + 2), value: Array(p[(i + 4)..<(i + size)]))
            })
        case .writeRequest:
            try need(2, "handle"); self = .writeRequest(handle: u16(0), value: Array(p[2...]))
        case .writeResponse:
            self = .writeResponse
        case .writeCommand:
            try need(2, "handle"); self = .writeCommand(handle: u16(0), value: Array(p[2...]))
        case .handleValueNotification:
            try need(2, "handle"); self = .handleValueNotification(handle: u16(0), value: Array(p[2...]))
        case .handleValueIndication:
            try need(2, "handle"); self = .handleValueIndication(handle: u16(0), value: Array(p[2...]))
        case .handleValueConfirmation:
            self = .handleValueConfirmation
        default:
            self = .other(opcode: ATTOpcode(rawValue: op), parameters: p)
        }
    }
}

/// ATT's default MTU on LE (23 bytes), which every peer supports without an exchange.
public let attDefaultMTU: UInt16 = 23
/// The largest ATT MTU (517 bytes): 512 bytes of attribute value plus headers.
public let attMaximumMTU: UInt16 = 517
