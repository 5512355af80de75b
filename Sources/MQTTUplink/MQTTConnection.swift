import CMosquitto
import Foundation
import Logging
import Synchronization
import Locking

/// One connection to an MQTT broker through Debian's libmosquitto (docs/mqtt.md): its own
/// network thread (`mosquitto_loop_start`), reconnection with a doubling pause (1 → 30 s), a
/// retained last will. ``onConnect`` runs on that thread after every (re)connection.
///
/// Why libmosquitto and not a Swift client: the package mirror has no maintained Swift MQTT 3.1.1
/// client; libmosquitto is the broker project's own client library, packaged by Debian.
final class MQTTConnection: Sendable {
    /// Where and how to connect.
    struct Endpoint: Sendable {
        var host: String
        var port: Int32
        var tls: Bool
        var caFile: String?
        var username: String?
        var password: String?
        var clientID: String
    }

    private let handle: Handle
    private let endpoint: Endpoint
    private let logger: Logger
    private let connectedFlag = Atomic<Bool>(false)
    /// The message id of the last QoS 1 message the broker acknowledged (PUBACK).
    private let acknowledged = Atomic<Int32>(-1)
    private let connectHandler = Lock<(@Sendable () -> Void)?>(nil)

    /// The libmosquitto handle, used from any thread (the library locks inside).
    private struct Handle: @unchecked Sendable { let pointer: OpaquePointer }

    /// True while the broker has accepted the connection.
    var isConnected: Bool { connectedFlag.load(ordering: .acquiring) }

    /// Runs after every accepted (re)connection, on the network thread.
    var onConnect: (@Sendable () -> Void)? {
        get { connectHandler.withLock { $0 } }
        set { connectHandler.withLock { $0 = newValue } }
    }

    private static let libraryReady: Void = { mosquitto_lib_init() }()

    /// Prepares the connection; the will is published by the broker (retained) if this
    /// connection ends without ``stop(finalMessage:)``.
    init(_ endpoint: Endpoint, will: (topic: String, payload: String), logger: Logger) throws(MQTTError) {
        _ = Self.libraryReady
        guard let m = mosquitto_new(endpoint.clientID, true, nil) else {
            throw MQTTError("libmosquitto could not create a client (out of memory?)")
        }
        handle = Handle(pointer: m)
        self.endpoint = endpoint
        self.logger = logger
        mosquitto_user_data_set(m, Unmanaged.passUnretained(self).toOpaque())
        var rc = mosquitto_will_set(m, will.topic, Int32(will.payload.utf8.count), will.payload, 1, true)
        if rc == MOSQ_ERR_SUCCESS.rawValue, let user = endpoint.username {
            rc = mosquitto_username_pw_set(m, user, endpoint.password)
        }
        if rc == MOSQ_ERR_SUCCESS.rawValue, endpoint.tls {
            rc = mosquitto_tls_set(m, endpoint.caFile, endpoint.caFile == nil ? "/etc/ssl/certs" : nil, nil, nil, nil)
        }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            mosquitto_destroy(m)
            throw MQTTError("the MQTT client could not be set up: \(Self.text(rc))")
        }
        mosquitto_reconnect_delay_set(m, 1, 30, true)
        mosquitto_connect_callback_set(m) { _, object, rc in
            guard let object else { return }
            let me = Unmanaged<MQTTConnection>.fromOpaque(object).takeUnretainedValue()
            me.connected(rc)
        }
        mosquitto_publish_callback_set(m) { _, object, mid in
            guard let object else { return }
            Unmanaged<MQTTConnection>.fromOpaque(object).takeUnretainedValue().acknowledged.store(mid, ordering: .releasing)
        }
        mosquitto_disconnect_callback_set(m) { _, object, rc in
            guard let object else { return }
            let me = Unmanaged<MQTTConnection>.fromOpaque(object).takeUnretainedValue()
            me.disconnected(rc)
        }
    }

    deinit { mosquitto_destroy(handle.pointer) }

    /// Starts the network thread and the first connection attempt; a broker that is away is
    /// tried again and again (logged once per outage).
    func start() {
        let rc = mosquitto_connect_async(handle.pointer, endpoint.host, endpoint.port, 30)
        if rc != MOSQ_ERR_SUCCESS.rawValue {
            logger.warning("mqtt: cannot reach the broker at \(endpoint.host):\(endpoint.port) yet (\(Self.text(rc))); retrying")
        }
        mosquitto_loop_start(handle.pointer)
    }

    /// Publishes `message` (QoS 1); false when the broker is away (nothing is queued then).
    @discardableResult
    func publish(_ topic: String, _ payload: String, retain: Bool) -> Bool {
        guard isConnected else { return false }
        let rc = mosquitto_publish(handle.pointer, nil, topic, Int32(payload.utf8.count), payload, 1, retain)
        return rc == MOSQ_ERR_SUCCESS.rawValue
    }

    /// Publishes `finalMessage` (retained) if connected, disconnects cleanly (no will) and
    /// stops the network thread, waiting at most `timeout` seconds for the broker to
    /// acknowledge the message (messages go in order, so everything before it was taken too).
    func stop(finalMessage: (topic: String, payload: String)?, timeout: Double = 5) {
        if let m = finalMessage, isConnected {
            var mid: Int32 = 0
            if mosquitto_publish(handle.pointer, &mid, m.topic, Int32(m.payload.utf8.count), m.payload, 1, true) == MOSQ_ERR_SUCCESS.rawValue {
                let deadline = Date().addingTimeInterval(timeout)
                while Date() < deadline, isConnected, acknowledged.load(ordering: .acquiring) != mid { usleep(5_000) }
            }
        }
        mosquitto_disconnect(handle.pointer)
        mosquitto_loop_stop(handle.pointer, false)
    }

    private func connected(_ rc: Int32) {
        guard rc == 0 else {
            logger.warning("mqtt: the broker at \(endpoint.host):\(endpoint.port) refused the connection: \(String(cString: mosquitto_connack_string(rc)))")
            return
        }
        connectedFlag.store(true, ordering: .releasing)
        logger.notice("mqtt: connected to \(endpoint.tls ? "mqtts" : "mqtt")://\(endpoint.host):\(endpoint.port) as \(endpoint.clientID)")
        onConnect?()
    }

    private func disconnected(_ rc: Int32) {
        let was = connectedFlag.exchange(false, ordering: .acquiringAndReleasing)
        if was, rc != 0 {
            logger.warning("mqtt: lost the broker at \(endpoint.host):\(endpoint.port) (\(Self.text(rc))); reconnecting, live values are not queued meanwhile")
        }
    }

    static func text(_ rc: Int32) -> String {
        rc == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(rc))
    }
}

/// Why MQTT could not be set up: one sentence.
package struct MQTTError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
