import Foundation
import HealthModel
import GATT
import Synchronization
import Locking

/// One characteristic of a simulated GATT server.
package struct SimulatedCharacteristic: Sendable {
    package var uuid: BluetoothUUID
    package var properties: GATTCharacteristicProperties
    /// The value a Read returns (and a Write replaces, unless ``onWrite`` says otherwise).
    package var value: [UInt8]
    /// Whether the server adds a CCCD (defaults to: notifies or indicates).
    package var hasCCCD: Bool
    /// Extra descriptors after the CCCD, such as 0x2901 User Description.
    package var extraDescriptors: [(uuid: BluetoothUUID, value: [UInt8])]
    /// Answers a Write Request: return nil to accept (the value is stored), or an ATT error.
    package var onWrite: (@Sendable ([UInt8]) -> ATTErrorCode?)?

    package init(_ uuid: BluetoothUUID, properties: GATTCharacteristicProperties, value: [UInt8] = [],
                hasCCCD: Bool? = nil, extraDescriptors: [(uuid: BluetoothUUID, value: [UInt8])] = [],
                onWrite: (@Sendable ([UInt8]) -> ATTErrorCode?)? = nil) {
        self.uuid = uuid
        self.properties = properties
        self.value = value
        self.hasCCCD = hasCCCD ?? !properties.isDisjoint(with: [.notify, .indicate])
        self.extraDescriptors = extraDescriptors
        self.onWrite = onWrite
    }
}

/// One primary service of a simulated GATT server.
package struct SimulatedService: Sendable {
    package var uuid: BluetoothUUID
    package var characteristics: [SimulatedCharacteristic]
    /// Unused handles left after the service's last attribute (its end handle covers them),
    /// to model real devices whose ranges have holes.
    package var trailingGap: UInt16

    package init(_ uuid: BluetoothUUID, trailingGap: UInt16 = 0, _ characteristics: [SimulatedCharacteristic]) {
        self.uuid = uuid
        self.characteristics = characteristics
        self.trailingGap = trailingGap
    }
}

/// One attribute in the server's flat table.
package struct SimulatedAttribute: Sendable, Hashable {
    package var handle: UInt16
    package var type: BluetoothUUID
    package var value: [UInt8]
    /// For a service declaration: the group's end handle.
    package var groupEnd: UInt16?
}

/// Who sent a PDU in a ``SimulatedPeripheral/transcript``.
package enum TranscriptDirection: String, Sendable, Hashable {
    case clientToServer = "C->S"
    case serverToClient = "S->C"
}

/// One PDU in a transcript, as exact wire bytes.
package struct TranscriptEntry: Sendable, Hashable, CustomStringConvertible {
    package var direction: TranscriptDirection
    package var bytes: [UInt8]
    package init(_ direction: TranscriptDirection, _ bytes: [UInt8]) { self.direction = direction; self.bytes = bytes }
    /// `C->S 10 0100 ffff 0028`-style text: opcode, then the parameters as one hex run.
    package var description: String {
        "\(direction.rawValue) " + Hex.string(bytes)
    }
}

/// A scripted fault the server applies to matching requests.
package enum SimulatedFault: Sendable, Hashable {
    /// Answer the `n`-th (1-based) request with this opcode with an Error Response.
    case error(ATTErrorCode, opcode: ATTOpcode, occurrence: Int = 1)
    /// Close the link instead of answering the `n`-th request with this opcode.
    case disconnect(opcode: ATTOpcode, occurrence: Int = 1)
    /// Never answer the `n`-th request with this opcode (the client's timeout must fire).
    case ignore(opcode: ATTOpcode, occurrence: Int = 1)
}

/// An ATT server written in Swift that behaves like a BLE peripheral, for tests and the demo.
///
/// It builds a flat attribute table from ``SimulatedService`` definitions (handles assigned in
/// order from `firstHandle`), answers every request a GATT client sends (Exchange MTU, Read By
/// Group Type, Read By Type, Find Information, Read, Read Blob, Write Request/Command,
/// Confirmation), keeps the CCCD values per connection (reset on each connection, as for a
/// non-bonded client), sends notifications only when the CCCD allows them (or on purpose
/// before, with ``forceNotify(_:value:)``), injects faults, and records an exact transcript.
///
/// Thread rules: a `Sendable` class; every method may be called from any thread. Each
/// connection's requests are served on its own thread. One connection at a time, like most
/// straps: a new connection (``serve(_:)``) closes the previous link.
package final class SimulatedPeripheral: Sendable {
    /// The attribute table, in handle order.
    package let attributes: [SimulatedAttribute]
    /// The MTU this server answers an Exchange MTU with.
    package let serverMTU: UInt16

    private struct State {
        var values: [UInt16: [UInt8]] = [:]
        var transcript: [TranscriptEntry] = []
        var recordsTranscript = true
        var faults: [SimulatedFault] = []
        var counts: [UInt8: Int] = [:]
        var mtu: UInt16 = attDefaultMTU
        var bearer: (any ATTBearer)?
        var connections = 0
    }

    private let state: Lock<State>
    private let writeHandlers: [UInt16: @Sendable ([UInt8]) -> ATTErrorCode?]
    private let readable: Set<UInt16>
    private let writable: Set<UInt16>
    private let cccds: Set<UInt16>

    /// Builds the table.
    /// - Parameters:
    ///   - services: the primary services, in handle order.
    ///   - firstHandle: the first service declaration's handle (real devices start at 1; the
    ///     byte script in heart-rate-profile.md §6 starts its HR service at 0x000C).
    ///   - serverMTU: the MTU answered to Exchange MTU.
    package init(services: [SimulatedService], firstHandle: UInt16 = 1, serverMTU: UInt16 = attDefaultMTU) {
        var attrs: [SimulatedAttribute] = []
        var handlers: [UInt16: @Sendable ([UInt8]) -> ATTErrorCode?] = [:]
        var readable = Set<UInt16>(), writable = Set<UInt16>(), cccds = Set<UInt16>()
        var h = firstHandle
        for service in services {
            let declIndex = attrs.count
            attrs.append(SimulatedAttribute(handle: h, type: .primaryService, value: service.uuid.attBytes, groupEnd: nil))
            readable.insert(h)
            h += 1
            for c in service.characteristics {
                let valueHandle = h + 1
                attrs.append(SimulatedAttribute(handle: h, type: .characteristic,
                                                value: [c.properties.rawValue, UInt8(valueHandle & 0xFF), UInt8(valueHandle >> 8)] + c.uuid.attBytes))
                readable.insert(h)
                attrs.append(SimulatedAttribute(handle: valueHandle, type: c.uuid, value: c.value))
                if c.properties.contains(.read) { readable.insert(valueHandle) }
                if !c.properties.isDisjoint(with: [.write, .writeWithoutResponse]) { writable.insert(valueHandle) }
                if let w = c.onWrite { handlers[valueHandle] = w }
                h = valueHandle + 1
                if c.hasCCCD {
                    attrs.append(SimulatedAttribute(handle: h, type: .clientCharacteristicConfiguration, value: [0, 0]))
                    readable.insert(h); writable.insert(h); cccds.insert(h)
                    h += 1
                }
                for d in c.extraDescriptors {
                    attrs.append(SimulatedAttribute(handle: h, type: d.uuid, value: d.value))
                    readable.insert(h)
                    h += 1
                }
            }
            h += service.trailingGap
            attrs[declIndex].groupEnd = h - 1
        }
        self.attributes = attrs
        self.serverMTU = serverMTU
        self.writeHandlers = handlers
        self.readable = readable
        self.writable = writable
        self.cccds = cccds
        var s = State()
        for a in attrs { s.values[a.handle] = a.value }
        self.state = Lock(s)
    }

    // MARK: Connections

    /// Connects a new client over `socketpair(AF_UNIX, SOCK_SEQPACKET)`: real ATT bytes on a
    /// real socket.
    /// - Throws: ``ATTBearerError`` when the socket pair cannot be made.
    package func connectSocketPair() throws -> SocketATTBearer {
        let (client, server) = try SocketATTBearer.makeSocketPair()
        serve(server)
        return client
    }

    /// Serves one connection over `bearer` (the server's end) on a new thread. CCCDs start
    /// at 0; the previous connection, if any, is closed.
    package func serve(_ bearer: any ATTBearer) {
        let previous = state.withLock { s -> (any ATTBearer)? in
            let p = s.bearer
            s.bearer = bearer
            s.connections += 1
            s.mtu = attDefaultMTU
            for h in cccds { s.values[h] = [0, 0] }
            return p
        }
        previous?.close()
        let thread = Thread { [self] in self.serveLoop(bearer) }
        thread.name = "simulated-peripheral"
        thread.start()
    }

    /// Closes the current link (the peripheral "walks away").
    package func disconnect() {
        let b = state.withLock { s -> (any ATTBearer)? in defer { s.bearer = nil }; return s.bearer }
        b?.close()
    }

    /// How many connections were served.
    package var connectionCount: Int { state.withLock { $0.connections } }

    // MARK: Inspection and faults

    /// Every PDU of every connection so far, in order, as exact bytes.
    package var transcript: [TranscriptEntry] { state.withLock { $0.transcript } }

    /// Forgets the transcript.
    package func clearTranscript() { state.withLock { $0.transcript.removeAll() } }

    /// Whether PDUs are appended to ``transcript`` (on by default). A peripheral that runs for
    /// hours (`healthgate simulate`) turns it off so its memory stays flat.
    package var recordsTranscript: Bool {
        get { state.withLock { $0.recordsTranscript } }
        set { state.withLock { $0.recordsTranscript = newValue; if !newValue { $0.transcript.removeAll() } } }
    }

    /// Adds a fault to apply to future requests.
    package func inject(_ fault: SimulatedFault) { state.withLock { $0.faults.append(fault) } }

    /// The current value of the attribute at `handle`.
    package func value(at handle: UInt16) -> [UInt8]? { state.withLock { $0.values[handle] } }

    /// Replaces a value (for example a new battery level) without notifying.
    package func setValue(_ value: [UInt8], at handle: UInt16) { state.withLock { $0.values[handle] = value } }

    /// The value handle of the first characteristic with `uuid`.
    package func valueHandle(of uuid: BluetoothUUID) -> UInt16? {
        attributes.first { $0.type == uuid && $0.groupEnd == nil && !isDeclaration($0) }?.handle
    }

    /// The CCCD handle of the first characteristic with `uuid`.
    package func cccdHandle(of uuid: BluetoothUUID) -> UInt16? {
        guard let v = valueHandle(of: uuid),
              let next = attributes.first(where: { $0.handle == v + 1 }),
              next.type == .clientCharacteristicConfiguration else { return nil }
        return next.handle
    }

    /// Whether the client has enabled notifications for `uuid` on the current connection.
    package func notificationsEnabled(_ uuid: BluetoothUUID) -> Bool {
        guard let c = cccdHandle(of: uuid) else { return false }
        return (state.withLock { $0.values[c] }?.first ?? 0) & 0x01 != 0
    }

    // MARK: Server-initiated PDUs

    /// Sends a notification of `uuid`'s value if the client enabled it on this connection.
    /// - Returns: whether it was sent.
    @discardableResult
    package func notify(_ uuid: BluetoothUUID, value: [UInt8]) -> Bool {
        guard notificationsEnabled(uuid) else { return false }
        return forceNotify(uuid, value: value)
    }

    /// Sends a notification whether or not the CCCD allows it: a misbehaving peer, or one
    /// that notifies before the client subscribed.
    /// - Returns: whether a link was up to send it on.
    @discardableResult
    package func forceNotify(_ uuid: BluetoothUUID, value: [UInt8]) -> Bool {
        guard let h = valueHandle(of: uuid) else { return false }
        return sendRaw(ATTPDU.handleValueNotification(handle: h, value: value).encode())
    }

    /// Sends an indication of `uuid`'s value (the client must confirm it).
    /// - Returns: whether a link was up to send it on.
    @discardableResult
    package func indicate(_ uuid: BluetoothUUID, value: [UInt8]) -> Bool {
        guard let h = valueHandle(of: uuid) else { return false }
        return sendRaw(ATTPDU.handleValueIndication(handle: h, value: value).encode())
    }

    /// Sends arbitrary bytes to the client (recorded in the transcript).
    /// - Returns: whether a link was up to send it on.
    @discardableResult
    package func sendRaw(_ bytes: [UInt8]) -> Bool {
        guard let b = state.withLock({ $0.bearer }) else { return false }
        return send(bytes, on: b)
    }

    // MARK: Serving

    private func isDeclaration(_ a: SimulatedAttribute) -> Bool {
        a.type == .primaryService || a.type == .characteristic || a.type == .secondaryService
    }

    private func send(_ bytes: [UInt8], on bearer: any ATTBearer) -> Bool {
        // Record before sending so the transcript order matches what the client sees.
        state.withLock { s in if s.recordsTranscript { s.transcript.append(TranscriptEntry(.serverToClient, bytes)) } }
        do { try bearer.send(bytes); return true } catch { return false }
    }

    private func serveLoop(_ bearer: any ATTBearer) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(attMaximumMTU) + 8, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            guard let n = try? bearer.receive(into: buffer), n > 0 else { break }
            let bytes = Array(buffer[0..<n])
            let op = bytes[0]
            let fault = state.withLock { s -> SimulatedFault? in
                if s.recordsTranscript { s.transcript.append(TranscriptEntry(.clientToServer, bytes)) }
                s.counts[op, default: 0] += 1
                let count = s.counts[op]!
                guard let i = s.faults.firstIndex(where: { f in
                    switch f {
                    case .error(_, let o, let k), .disconnect(let o, let k), .ignore(let o, let k):
                        return o.rawValue == op && k == count
                    }
                }) else { return nil }
                return s.faults.remove(at: i)
            }
            switch fault {
            case .error(let code, _, _):
                let handle: UInt16 = n >= 3 ? UInt16(bytes[1]) | UInt16(bytes[2]) << 8 : 0
                _ = send(ATTPDU.errorResponse(request: ATTOpcode(rawValue: op), handle: handle, error: code).encode(), on: bearer)
                continue
            case .disconnect:
                bearer.close()
                state.withLock { s in if s.bearer === bearer { s.bearer = nil } }
                return
            case .ignore:
                continue
            case nil:
                break
            }
            if let reply = answer(bytes) { _ = send(reply, on: bearer) }
        }
        bearer.close()
        state.withLock { s in if s.bearer === bearer { s.bearer = nil } }
    }

    /// The response to one client PDU (nil for commands and confirmations).
    private func answer(_ bytes: [UInt8]) -> [UInt8]? {
        let op = ATTOpcode(rawValue: bytes[0])
        func refuse(_ code: ATTErrorCode, _ handle: UInt16) -> [UInt8] {
            ATTPDU.errorResponse(request: op, handle: handle, error: code).encode()
        }
        let pdu: ATTPDU
        do { pdu = try ATTPDU(decoding: bytes) } catch {
            return op.isCommand ? nil : refuse(.invalidPDU, 0)
        }
        let mtu = Int(state.withLock { $0.mtu })
        func validRange(_ s: UInt16, _ e: UInt16) -> Bool { s != 0 && s <= e }
        switch pdu {
        case .exchangeMTURequest(let client):
            state.withLock { $0.mtu = max(attDefaultMTU, min(client, serverMTU)) }
            return ATTPDU.exchangeMTUResponse(serverRxMTU: serverMTU).encode()

        case .readByGroupTypeRequest(let s, let e, let type):
            guard validRange(s, e) else { return refuse(.invalidHandle, s) }
            guard type == .primaryService || type == .secondaryService else { return refuse(.unsupportedGroupType, s) }
            let matches = attributes.filter { $0.type == type && $0.handle >= s && $0.handle <= e }
            guard let first = matches.first else { return refuse(.attributeNotFound, s) }
            let size = 4 + first.value.count
            var entries: [ATTGroupValue] = []
            for a in matches where a.value.count == first.value.count && 2 + (entries.count + 1) * size <= mtu {
                entries.append(ATTGroupValue(handle: a.handle, endGroupHandle: a.groupEnd ?? a.handle, value: a.value))
            }
            return ATTPDU.readByGroupTypeResponse(entries).encode()

        case .readByTypeRequest(let s, let e, let type):
            guard validRange(s, e) else { return refuse(.invalidHandle, s) }
            let values = state.withLock { $0.values }
            let matches = attributes.filter { $0.type == type && $0.handle >= s && $0.handle <= e }
            guard let first = matches.first else { return refuse(.attributeNotFound, s) }
            guard readable.contains(first.handle) else { return refuse(.readNotPermitted, first.handle) }
            let firstValue = Array((values[first.handle] ?? []).prefix(min(253, mtu - 4)))
            let size = 2 + firstValue.count
            var entries: [ATTHandleValue] = []
            for a in matches where readable.contains(a.handle) {
                let v = Array((values[a.handle] ?? []).prefix(firstValue.count))
                guard (values[a.handle] ?? []).count == firstValue.count || entries.isEmpty else { break }
                guard 2 + (entries.count + 1) * size <= mtu else { break }
                entries.append(ATTHandleValue(handle: a.handle, value: v))
            }
            return ATTPDU.readByTypeResponse(entries).encode()

        case .findInformationRequest(let s, let e):
            guard validRange(s, e) else { return refuse(.invalidHandle, s) }
            let matches = attributes.filter { $0.handle >= s && $0.handle <= e }
            guard let first = matches.first else { return refuse(.attributeNotFound, s) }
            let long = first.type.alias == nil
            let size = long ? 18 : 4
            var entries: [ATTHandleUUID] = []
            for a in matches {
                guard (a.type.alias == nil) == long, 2 + (entries.count + 1) * size <= mtu else { break }
                entries.append(ATTHandleUUID(handle: a.handle, uuid: a.type))
            }
            return ATTPDU.findInformationResponse(entries).encode()

        case .readRequest(let h), .readBlobRequest(let h, _):
            guard let v = state.withLock({ $0.values[h] }) else { return refuse(.invalidHandle, h) }
            guard readable.contains(h) else { return refuse(.readNotPermitted, h) }
            if case .readBlobRequest(_, let offset) = pdu {
                guard Int(offset) <= v.count else { return refuse(.invalidOffset, h) }
                return ATTPDU.readBlobResponse(Array(v[Int(offset)...].prefix(mtu - 1))).encode()
            }
            return ATTPDU.readResponse(Array(v.prefix(mtu - 1))).encode()

        case .writeRequest(let h, let v), .writeCommand(let h, let v):
            let isCommand = op == .writeCommand
            guard state.withLock({ $0.values[h] }) != nil else { return isCommand ? nil : refuse(.invalidHandle, h) }
            guard writable.contains(h) else { return isCommand ? nil : refuse(.writeNotPermitted, h) }
            if cccds.contains(h), v.count != 2 { return isCommand ? nil : refuse(.invalidAttributeValueLength, h) }
            if let handler = writeHandlers[h], let code = handler(v) { return isCommand ? nil : refuse(code, h) }
            state.withLock { $0.values[h] = v }
            return isCommand ? nil : ATTPDU.writeResponse.encode()

        case .handleValueConfirmation:
            return nil

        case _ where op.isResponse:
            return nil  // the client answering a request of ours: nothing to say back

        default:
            return op.isCommand ? nil : refuse(.requestNotSupported, 0)
        }
    }
}
