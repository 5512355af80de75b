import Foundation

/// A characteristic's properties byte from its declaration (Core Vol 3 Part G 3.3.1.1).
public struct GATTCharacteristicProperties: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let broadcast = Self(rawValue: 0x01)
    public static let read = Self(rawValue: 0x02)
    public static let writeWithoutResponse = Self(rawValue: 0x04)
    public static let write = Self(rawValue: 0x08)
    public static let notify = Self(rawValue: 0x10)
    public static let indicate = Self(rawValue: 0x20)
    public static let authenticatedSignedWrites = Self(rawValue: 0x40)
    public static let extendedProperties = Self(rawValue: 0x80)
}

/// A primary service found by discovery: its UUID and handle range.
public struct GATTService: Sendable, Hashable {
    public var uuid: BluetoothUUID
    public var startHandle: UInt16
    public var endHandle: UInt16
    public init(uuid: BluetoothUUID, startHandle: UInt16, endHandle: UInt16) {
        self.uuid = uuid; self.startHandle = startHandle; self.endHandle = endHandle
    }
}

/// A descriptor found by discovery (Find Information).
public struct GATTDescriptor: Sendable, Hashable {
    public var handle: UInt16
    public var uuid: BluetoothUUID
    public init(handle: UInt16, uuid: BluetoothUUID) { self.handle = handle; self.uuid = uuid }
}

/// A characteristic found by discovery, with the descriptors found for it.
public struct GATTCharacteristic: Sendable, Hashable {
    public var uuid: BluetoothUUID
    public var properties: GATTCharacteristicProperties
    /// The characteristic declaration's handle.
    public var declarationHandle: UInt16
    /// The handle reads, writes and notifications use.
    public var valueHandle: UInt16
    /// The last handle belonging to this characteristic (its descriptors end here).
    public var endHandle: UInt16
    /// Descriptors, discovered only for characteristics that notify or indicate.
    public var descriptors: [GATTDescriptor]

    public init(uuid: BluetoothUUID, properties: GATTCharacteristicProperties, declarationHandle: UInt16,
                valueHandle: UInt16, endHandle: UInt16, descriptors: [GATTDescriptor] = []) {
        self.uuid = uuid; self.properties = properties; self.declarationHandle = declarationHandle
        self.valueHandle = valueHandle; self.endHandle = endHandle; self.descriptors = descriptors
    }

    /// The Client Characteristic Configuration descriptor's handle, if discovered.
    public var cccdHandle: UInt16? {
        descriptors.first { $0.uuid == .clientCharacteristicConfiguration }?.handle
    }
}

/// A discovered service with its characteristics.
public struct GATTDiscoveredService: Sendable, Hashable {
    public var service: GATTService
    public var characteristics: [GATTCharacteristic]
    public init(service: GATTService, characteristics: [GATTCharacteristic]) {
        self.service = service; self.characteristics = characteristics
    }
}

/// What discovery found on one connection. Handles are valid for this connection only:
/// discover again after every reconnect.
public struct GATTDatabase: Sendable, Hashable {
    /// Every primary service, in handle order (characteristics only for the ones discovered).
    public var services: [GATTDiscoveredService]
    public init(services: [GATTDiscoveredService]) { self.services = services }

    /// The first service with `uuid`.
    public func service(_ uuid: BluetoothUUID) -> GATTDiscoveredService? {
        services.first { $0.service.uuid == uuid }
    }

    /// The first characteristic with `uuid`, in `service` when given, else in any service.
    public func characteristic(_ uuid: BluetoothUUID, in service: BluetoothUUID? = nil) -> GATTCharacteristic? {
        for s in services where service == nil || s.service.uuid == service {
            if let c = s.characteristics.first(where: { $0.uuid == uuid }) { return c }
        }
        return nil
    }
}

/// A notification or indication as the client's reader thread received it.
///
/// `value` points into the client's receive buffer and is valid **only during the handler
/// call**: copy what you keep. Nothing is allocated to deliver it.
public struct GATTValueEvent {
    /// The characteristic value handle the peer sent.
    public let handle: UInt16
    /// The value bytes (borrowed; see the type's note).
    public let value: UnsafeRawBufferPointer
    /// True for an indication (the client confirms it after the handler returns).
    public let isIndication: Bool
    /// When the reader thread received the PDU (wall clock, for sample timestamps).
    public let receivedAt: Date
}

/// Called on the client's reader thread for each notification or indication of a subscribed
/// characteristic. Keep it short: the next PDU is not read until it returns. Never wait for
/// a GATT response inside it (the response could only be read by this same thread): hand the
/// work to a task or queue instead.
public typealias GATTValueHandler = @Sendable (GATTValueEvent) -> Void

/// Why a GATT operation failed. Each description is one sentence: what, why, what to do.
public enum GATTError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The peer answered with an ATT Error Response.
    case attribute(ATTErrorCode, request: ATTOpcode, handle: UInt16)
    /// The peer did not answer within the ATT transaction timeout (30 s by default). The
    /// bearer is closed: ATT allows no further requests on it.
    case timeout(request: ATTOpcode, after: Duration)
    /// The link went away (the peer disconnected, went out of range, or the bearer failed).
    case disconnected(reason: String)
    /// ``GATTClient/close()`` was called.
    case closed
    /// The peer sent something ATT does not allow here (a malformed or mismatched response).
    case protocolViolation(String)
    /// The characteristic has no Client Characteristic Configuration descriptor, so it cannot
    /// be subscribed to.
    case noCCCD(characteristic: BluetoothUUID)

    public var description: String {
        switch self {
        case .attribute(let code, let request, let handle):
            var s = "the device refused a \(request) for handle 0x\(hex16(handle)) with \(code)"
            if code.needsSecurity { s += "; pair with it (healthgate pair ADDRESS --bond) and try again" }
            return s
        case .timeout(let request, let after):
            return "the device did not answer a \(request) within \(after) (ATT transaction timeout); the link was closed: reconnect and try again"
        case .disconnected(let reason):
            return "the device disconnected (\(reason)); move it closer or wake it, then reconnect"
        case .closed:
            return "the GATT connection was closed by HealthGate"
        case .protocolViolation(let what):
            return "the device broke the ATT protocol (\(what)); reconnect, and report the device if it persists"
        case .noCCCD(let uuid):
            return "characteristic \(uuid) has no Client Characteristic Configuration descriptor, so it cannot be subscribed to"
        }
    }
}
