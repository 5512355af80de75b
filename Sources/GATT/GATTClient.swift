import Foundation
import Synchronization
import Locking

/// A GATT client over any ``ATTBearer``: MTU exchange, discovery, read, write, subscribe.
///
/// **Concurrency.** `GATTClient` is a `Sendable` class; every method may be called from any
/// task. Internally:
/// - One dedicated reader thread (not a task: a blocking read must not hold one of the
///   cooperative pool's few threads) receives every PDU into one fixed buffer.
/// - Requests are serialised: ATT allows one outstanding request per bearer, so callers queue
///   in FIFO order and each waits for its response (or the transaction timeout).
/// - Notifications and indications are parsed in place and handed to the subscriber's
///   ``GATTValueHandler`` on the reader thread, with the value borrowed from the receive
///   buffer: no allocation per notification. Indications are confirmed after the handler
///   returns. A notification for a handle nobody subscribed to (for example one a peer sends
///   before the CCCD write) is counted in ``unsolicitedNotificationCount`` and dropped.
/// - Requests the *peer* sends (a central's own GATT server is queried by some phones and
///   straps) are answered: Exchange MTU with this client's MTU, anything else with
///   "Request Not Supported".
///
/// **Lifetime.** The reader thread keeps the client alive until the link ends: call
/// ``close()`` when done (it closes the bearer, which for L2CAP disconnects the device).
/// After a transaction timeout or a disconnect every call throws; reconnect with a new bearer
/// and a new client, and discover again (handles may differ; CCCDs of non-bonded devices
/// are reset).
public final class GATTClient: Sendable {
    /// The transport this client speaks over.
    public let bearer: any ATTBearer
    /// How long a request may wait for its response (ATT: 30 s). Tests pass a short one.
    public let transactionTimeout: Duration
    /// The receive MTU this client offers in Exchange MTU.
    public let preferredMTU: UInt16

    private struct Pending {
        let id: UInt64
        let request: ATTOpcode
        let continuation: CheckedContinuation<ATTPDU, any Error>
        var timer: Task<Void, Never>?
    }

    private struct State {
        var mtu: UInt16 = attDefaultMTU
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var pending: Pending?
        var nextID: UInt64 = 0
        var ended: GATTError?
        var handlers: [UInt16: GATTValueHandler] = [:]
        var onDisconnect: (@Sendable (GATTError) -> Void)?
    }

    private let state: Lock<State>
    private let unsolicited = Atomic<Int>(0)
    private let delivered = Atomic<Int>(0)
    /// Entered before the reader thread starts, left when it returns.
    private let reader = DispatchGroup()

    /// Creates the client and starts its reader thread.
    /// - Parameters:
    ///   - bearer: a connected bearer; the client owns it from now on.
    ///   - transactionTimeout: the ATT transaction timeout (30 s per the specification).
    ///   - preferredMTU: the MTU offered in ``exchangeMTU()`` and in answers to the peer.
    ///   - onDisconnect: called once, on the reader thread or the closing thread, when the
    ///     link ends for any reason (with the reason).
    public init(bearer: any ATTBearer, transactionTimeout: Duration = .seconds(30),
                preferredMTU: UInt16 = 247, onDisconnect: (@Sendable (GATTError) -> Void)? = nil) {
        self.bearer = bearer
        self.transactionTimeout = transactionTimeout
        self.preferredMTU = max(attDefaultMTU, min(preferredMTU, attMaximumMTU))
        var s = State()
        s.onDisconnect = onDisconnect
        self.state = Lock(s)
        reader.enter()
        let thread = Thread { [self] in
            defer { reader.leave() }
            self.readLoop()
        }
        thread.name = "gatt-reader"
        thread.start()
    }

    /// Waits until the reader thread has returned: from then on no notification handler of this
    /// client runs again, so what the handlers touched can be handed to the next connection.
    /// The reader returns once the link has ended — call ``close()`` first, or wait for the
    /// disconnect handler. Never call it from a notification handler or from the disconnect
    /// handler: both may run on the reader thread itself, which would then wait for itself.
    public func waitForReaderToEnd() {
        reader.wait()
    }

    /// The MTU in effect (23 until an exchange raised it).
    public var mtu: UInt16 { state.withLock { $0.mtu } }

    /// Notifications or indications received for handles nobody subscribed to.
    public var unsolicitedNotificationCount: Int { unsolicited.load(ordering: .relaxed) }

    /// Notifications and indications handed to a subscriber's handler.
    public var deliveredNotificationCount: Int { delivered.load(ordering: .relaxed) }

    /// Why the link ended, or nil while it is up.
    public var endReason: GATTError? { state.withLock { $0.ended } }

    // MARK: - Procedures

    /// Exchanges MTUs (once per connection, first): the effective MTU becomes the smaller of
    /// ``preferredMTU`` and the server's, never below 23.
    /// - Returns: the effective MTU.
    /// - Throws: ``GATTError``.
    @discardableResult
    public func exchangeMTU() async throws -> UInt16 {
        let rsp = try await transact(.exchangeMTURequest(clientRxMTU: preferredMTU))
        switch rsp {
        case .exchangeMTUResponse(let server):
            let mtu = max(attDefaultMTU, min(preferredMTU, server))
            state.withLock { $0.mtu = mtu }
            return mtu
        case .errorResponse(_, _, .requestNotSupported):
            return attDefaultMTU  // the server keeps the default MTU
        default:
            throw Self.failure(rsp, for: .exchangeMTURequest)
        }
    }

    /// Discovers every primary service (Read By Group Type on 0x2800 until Attribute Not Found
    /// or the end of the handle range).
    /// - Throws: ``GATTError``.
    public func discoverPrimaryServices() async throws -> [GATTService] {
        var out: [GATTService] = []
        var start: UInt16 = 0x0001
        while true {
            let rsp = try await transact(.readByGroupTypeRequest(start: start, end: 0xFFFF, type: .primaryService))
            switch rsp {
            case .errorResponse(_, _, .attributeNotFound):
                return out
            case .readByGroupTypeResponse(let entries):
                for e in entries {
                    guard let uuid = BluetoothUUID(attBytes: e.value) else {
                        throw GATTError.protocolViolation("a service declaration's UUID is \(e.value.count) bytes")
                    }
                    guard e.handle >= start, e.endGroupHandle >= e.handle else {
                        throw GATTError.protocolViolation("service handle range 0x\(hex16(e.handle))–0x\(hex16(e.endGroupHandle)) is outside the request")
                    }
                    out.append(GATTService(uuid: uuid, startHandle: e.handle, endHandle: e.endGroupHandle))
                }
                let last = entries.last?.endGroupHandle ?? 0xFFFF
                if last == 0xFFFF { return out }
                start = last + 1
            default:
                throw Self.failure(rsp, for: .readByGroupTypeRequest)
            }
        }
    }

    /// Discovers the characteristics of `service` (Read By Type on 0x2803), then the
    /// descriptors of each characteristic that notifies or indicates (Find Information over
    /// the handles after its value handle), so ``GATTCharacteristic/cccdHandle`` is known.
    /// - Throws: ``GATTError``.
    public func discoverCharacteristics(of service: GATTService) async throws -> [GATTCharacteristic] {
        var found: [GATTCharacteristic] = []
        var start = service.startHandle
        scan: while start <= service.endHandle {
            let rsp = try await transact(.readByTypeRequest(start: start, end: service.endHandle, type: .characteristic))
            switch rsp {
            case .errorResponse(_, _, .attributeNotFound):
                break scan
            case .readByTypeResponse(let entries):
                for e in entries {
                    guard e.value.count == 5 || e.value.count == 19,
                          let uuid = BluetoothUUID(attBytes: e.value[3...]) else {
                        throw GATTError.protocolViolation("a characteristic declaration is \(e.value.count) bytes (expected 5 or 19)")
                    }
                    guard e.handle >= start, e.handle <= service.endHandle else {
                        throw GATTError.protocolViolation("characteristic declaration 0x\(hex16(e.handle)) is outside the request")
                    }
                    let valueHandle = UInt16(e.value[1]) | UInt16(e.value[2]) << 8
                    found.append(GATTCharacteristic(
                        uuid: uuid, properties: GATTCharacteristicProperties(rawValue: e.value[0]),
                        declarationHandle: e.handle, valueHandle: valueHandle, endHandle: service.endHandle))
                }
                guard let last = entries.last?.handle, last < service.endHandle else { break scan }
                start = last + 1
            default:
                throw Self.failure(rsp, for: .readByTypeRequest)
            }
        }
        for i in found.indices.dropLast() { found[i].endHandle = found[i + 1].declarationHandle - 1 }
        for i in found.indices where !found[i].properties.isDisjoint(with: [.notify, .indicate]) {
            found[i].descriptors = try await discoverDescriptors(of: found[i])
        }
        return found
    }

    /// Discovers the descriptors of `characteristic` (Find Information from its value handle
    /// + 1 to its end handle).
    /// - Throws: ``GATTError``.
    public func discoverDescriptors(of characteristic: GATTCharacteristic) async throws -> [GATTDescriptor] {
        var out: [GATTDescriptor] = []
        guard characteristic.valueHandle < characteristic.endHandle else { return out }
        var start = characteristic.valueHandle + 1
        while start <= characteristic.endHandle {
            let rsp = try await transact(.findInformationRequest(start: start, end: characteristic.endHandle))
            switch rsp {
            case .errorResponse(_, _, .attributeNotFound):
                return out
            case .findInformationResponse(let entries):
                for e in entries {
                    guard e.handle >= start, e.handle <= characteristic.endHandle else {
                        throw GATTError.protocolViolation("descriptor handle 0x\(hex16(e.handle)) is outside the request")
                    }
                    out.append(GATTDescriptor(handle: e.handle, uuid: e.uuid))
                }
                guard let last = entries.last?.handle, last < characteristic.endHandle else { return out }
                start = last + 1
            default:
                throw Self.failure(rsp, for: .findInformationRequest)
            }
        }
        return out
    }

    /// Discovers the primary services and the characteristics (and CCCDs) of those in
    /// `services` (every service when nil). Handles are per connection: call this after every
    /// connect, never reuse handles from an earlier one.
    /// - Throws: ``GATTError``.
    public func discover(services wanted: [BluetoothUUID]? = nil) async throws -> GATTDatabase {
        var result: [GATTDiscoveredService] = []
        for s in try await discoverPrimaryServices() {
            if let wanted, !wanted.contains(s.uuid) {
                result.append(GATTDiscoveredService(service: s, characteristics: []))
            } else {
                result.append(GATTDiscoveredService(service: s, characteristics: try await discoverCharacteristics(of: s)))
            }
        }
        return GATTDatabase(services: result)
    }

    /// Reads a value; values longer than MTU − 1 are completed with Read Blob requests.
    /// - Throws: ``GATTError`` (``GATTError/attribute(_:request:handle:)`` when the peer refuses).
    public func read(handle: UInt16) async throws -> [UInt8] {
        let rsp = try await transact(.readRequest(handle: handle))
        guard case .readResponse(var value) = rsp else { throw Self.failure(rsp, for: .readRequest) }
        var mtu = Int(self.mtu)
        while value.count >= mtu - 1 && value.count < 512 {
            let more = try await transact(.readBlobRequest(handle: handle, offset: UInt16(value.count)))
            switch more {
            case .readBlobResponse(let part):
                value += part
                if part.count < mtu - 1 { return value }
            case .errorResponse(_, _, .attributeNotLong), .errorResponse(_, _, .invalidOffset),
                 .errorResponse(_, _, .requestNotSupported):
                return value
            default:
                throw Self.failure(more, for: .readBlobRequest)
            }
            mtu = Int(self.mtu)
        }
        return value
    }

    /// Reads a characteristic's value.
    /// - Throws: ``GATTError``.
    public func read(_ characteristic: GATTCharacteristic) async throws -> [UInt8] {
        try await read(handle: characteristic.valueHandle)
    }

    /// Writes a value with a Write Request and waits for the Write Response.
    /// - Throws: ``GATTError`` (the peer's refusal as ``GATTError/attribute(_:request:handle:)``).
    public func write(_ value: [UInt8], handle: UInt16) async throws {
        let rsp = try await transact(.writeRequest(handle: handle, value: value))
        guard case .writeResponse = rsp else { throw Self.failure(rsp, for: .writeRequest) }
    }

    /// Writes a characteristic's value with a Write Request.
    /// - Throws: ``GATTError``.
    public func write(_ value: [UInt8], to characteristic: GATTCharacteristic) async throws {
        try await write(value, handle: characteristic.valueHandle)
    }

    /// Sends a Write Command (no response, no error report).
    /// - Throws: ``GATTError`` when the link is down.
    public func writeWithoutResponse(_ value: [UInt8], handle: UInt16) throws {
        if let ended = state.withLock({ $0.ended }) { throw ended }
        do { try bearer.send(ATTPDU.writeCommand(handle: handle, value: value).encode()) } catch {
            throw GATTError.disconnected(reason: "\(error)")
        }
    }

    /// Subscribes to notifications (or indications) of `characteristic`: installs `handler`
    /// for its value handle, then writes its CCCD. Call it on every connection: non-bonded
    /// peers forget the CCCD when the link drops.
    /// - Throws: ``GATTError/noCCCD(characteristic:)`` when discovery found no CCCD, or the
    ///   CCCD write's failure (the handler is removed again).
    public func subscribe(to characteristic: GATTCharacteristic, indications: Bool = false,
                          handler: @escaping GATTValueHandler) async throws {
        guard let cccd = characteristic.cccdHandle else { throw GATTError.noCCCD(characteristic: characteristic.uuid) }
        state.withLock { $0.handlers[characteristic.valueHandle] = handler }
        do {
            try await write(indications ? [0x02, 0x00] : [0x01, 0x00], handle: cccd)
        } catch {
            _ = state.withLock { $0.handlers.removeValue(forKey: characteristic.valueHandle) }
            throw error
        }
    }

    /// Writes 0 to the CCCD and removes the handler.
    /// - Throws: ``GATTError``.
    public func unsubscribe(from characteristic: GATTCharacteristic) async throws {
        _ = state.withLock { $0.handlers.removeValue(forKey: characteristic.valueHandle) }
        guard let cccd = characteristic.cccdHandle else { return }
        try await write([0x00, 0x00], handle: cccd)
    }

    /// Closes the link (and the bearer). Pending and queued requests fail with
    /// ``GATTError/closed``. Idempotent.
    public func close() {
        end(.closed)
        bearer.close()
    }

    // MARK: - Transactions

    /// Sends one request and waits for its response (or Error Response). Requests queue: ATT
    /// allows one outstanding request per bearer.
    /// - Throws: ``GATTError`` for timeouts, disconnects and malformed responses. An Error
    ///   Response is returned, not thrown: discovery ends on Attribute Not Found.
    public func transact(_ request: ATTPDU) async throws -> ATTPDU {
        await acquire()
        defer { release() }
        if let ended = state.withLock({ $0.ended }) { throw ended }
        let bytes = request.encode()
        let opcode = request.opcode
        let timeout = transactionTimeout
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ATTPDU, any Error>) in
            let installed: GATTError? = state.withLock { s in
                if let ended = s.ended { return ended }
                s.nextID += 1
                let id = s.nextID
                let timer = Task { [self] in
                    do { try await Task.sleep(for: timeout) } catch { return }
                    self.timedOut(id: id)
                }
                s.pending = Pending(id: id, request: opcode, continuation: continuation, timer: timer)
                return nil
            }
            if let installed { continuation.resume(throwing: installed); return }
            do { try bearer.send(bytes) } catch {
                let reason = GATTError.disconnected(reason: "sending failed: \(error)")
                if let p = state.withLock({ s -> Pending? in defer { s.pending = nil }; return s.pending }) {
                    p.timer?.cancel()
                    p.continuation.resume(throwing: reason)
                }
            }
        }
    }

    private func acquire() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let go = state.withLock { s -> Bool in
                if !s.busy { s.busy = true; return true }
                s.waiters.append(c)
                return false
            }
            if go { c.resume() }
        }
    }

    private func release() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if s.waiters.isEmpty { s.busy = false; return nil }
            return s.waiters.removeFirst()
        }
        next?.resume()
    }

    private func timedOut(id: UInt64) {
        let p = state.withLock { s -> Pending? in
            guard let p = s.pending, p.id == id else { return nil }
            s.pending = nil
            return p
        }
        guard let p else { return }
        let error = GATTError.timeout(request: p.request, after: transactionTimeout)
        end(error)
        p.continuation.resume(throwing: error)
        bearer.close()
    }

    /// Records why the link ended (first reason wins), fails the pending request and tells
    /// the disconnect handler once.
    private func end(_ reason: GATTError) {
        let (pending, callback, first) = state.withLock { s -> (Pending?, (@Sendable (GATTError) -> Void)?, Bool) in
            let first = s.ended == nil
            if first { s.ended = reason }
            let p = s.pending
            s.pending = nil
            let cb = first ? s.onDisconnect : nil
            if first { s.handlers.removeAll() }
            return (p, cb, first)
        }
        if let pending {
            pending.timer?.cancel()
            pending.continuation.resume(throwing: state.withLock { $0.ended } ?? reason)
        }
        if first { callback?(reason) }
    }

    private static func failure(_ rsp: ATTPDU, for request: ATTOpcode) -> GATTError {
        if case .errorResponse(let req, let handle, let code) = rsp {
            return .attribute(code, request: req, handle: handle)
        }
        return .protocolViolation("a \(request) was answered with a \(rsp.opcode)")
    }

    // MARK: - Reader thread

    private static let confirmation: [UInt8] = [ATTOpcode.handleValueConfirmation.rawValue]

    private func readLoop() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(attMaximumMTU) + 8, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n: Int?
            do { n = try bearer.receive(into: buffer) } catch {
                end(.disconnected(reason: "\(error)"))
                return
            }
            guard let n else {
                end(.disconnected(reason: "the link was closed"))
                return
            }
            guard n > 0 else { continue }
            let pdu = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            let opcode = pdu[0]
            switch opcode {
            case ATTOpcode.handleValueNotification.rawValue, ATTOpcode.handleValueIndication.rawValue:
                guard n >= 3 else { continue }
                let handle = UInt16(pdu[1]) | UInt16(pdu[2]) << 8
                let handler = state.withLock { $0.handlers[handle] }
                let indication = opcode == ATTOpcode.handleValueIndication.rawValue
                if let handler {
                    handler(GATTValueEvent(handle: handle, value: UnsafeRawBufferPointer(rebasing: pdu[3...]),
                                           isIndication: indication, receivedAt: Date()))
                    delivered.add(1, ordering: .relaxed)
                } else {
                    unsolicited.add(1, ordering: .relaxed)
                }
                if indication { try? bearer.send(Self.confirmation) }
            case let op where ATTOpcode(rawValue: op).isResponse:
                deliver(Array(pdu))
            case ATTOpcode.exchangeMTURequest.rawValue:
                if n >= 3 {
                    let client = UInt16(pdu[1]) | UInt16(pdu[2]) << 8
                    let mtu = max(attDefaultMTU, min(preferredMTU, client))
                    state.withLock { $0.mtu = mtu }
                }
                try? bearer.send(ATTPDU.exchangeMTUResponse(serverRxMTU: preferredMTU).encode())
            case let op where !ATTOpcode(rawValue: op).isCommand && op != ATTOpcode.handleValueConfirmation.rawValue:
                // A request to our (empty) GATT server: answer so the peer does not time out.
                let handle = n >= 3 ? UInt16(pdu[1]) | UInt16(pdu[2]) << 8 : 0
                try? bearer.send(ATTPDU.errorResponse(request: ATTOpcode(rawValue: op), handle: handle,
                                                      error: .requestNotSupported).encode())
            default:
                continue  // commands and stray confirmations need no answer
            }
        }
    }

    private func deliver(_ bytes: [UInt8]) {
        guard let p = state.withLock({ s -> Pending? in defer { s.pending = nil }; return s.pending }) else {
            return  // a response nobody waits for (it arrived after a timeout): ignore it
        }
        p.timer?.cancel()
        let pdu: ATTPDU
        do { pdu = try ATTPDU(decoding: bytes) } catch {
            p.continuation.resume(throwing: GATTError.protocolViolation(error.description))
            return
        }
        let expected = p.request.rawValue + 1
        if case .errorResponse(let req, _, _) = pdu, req == p.request {
            p.continuation.resume(returning: pdu)
        } else if pdu.opcode.rawValue == expected {
            p.continuation.resume(returning: pdu)
        } else {
            p.continuation.resume(throwing: GATTError.protocolViolation("a \(p.request) was answered with a \(pdu.opcode)"))
        }
    }
}
