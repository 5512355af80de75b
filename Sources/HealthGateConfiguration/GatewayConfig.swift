import Foundation
import GATT
import Ingest
import SerialPedometer
import TOML
import Udev

/// The daemon's configuration, read from a TOML file (`samples/healthgate.toml` documents every
/// key). Unknown keys and wrong types are errors that name the file and line.
package struct GatewayConfig: Sendable, Equatable {
    /// A strap to keep connected: over Bluetooth (``address``) or over a Unix-domain socket
    /// that carries its ATT channel (``socket``); exactly one of the two is set.
    package struct Strap: Sendable, Equatable {
        /// Its Bluetooth address, `AA:BB:CC:DD:EE:FF` (upper case), when reached over the radio.
        package var address: String?
        /// `public` or `random` (LE address type; meaningful with ``address``); nil when the
        /// file does not say: `run` then uses the type `healthgate pair` remembered, else guesses
        /// from the address (static random addresses start with binary 11), as `live` does.
        package var addressType: String?
        /// A name for logs and the device registry.
        package var name: String?
        /// The path of a `SOCK_SEQPACKET` Unix-domain socket carrying the strap's ATT channel,
        /// one PDU per message (a BLE proxy, a remote radio, `healthgate simulate`).
        package var socket: String?
        /// `encrypt = true`: every connection asks for an encrypted link (a strap bonded with
        /// `healthgate pair --bond`, or through bluetoothd): the kernel uses the stored key, so
        /// the link is encrypted at once without pairing again; with no key it pairs (Just Works).
        package var encrypt = false
    }

    /// A rule that picks serial ports to open as pedometers.
    package struct Pedometer: Sendable, Equatable {
        /// A device path (`/dev/ttyUSB0`, `/dev/serial/by-id/…`), or nil to match by properties.
        package var path: String?
        /// USB vendor id (hex, `1a86`), if matching by properties.
        package var vendor: String?
        /// USB product id (hex, `7523`), if matching by properties.
        package var product: String?
        /// USB serial number, if matching by properties.
        package var serial: String?
        /// A udev tag (`healthgate-pedometer`, set by udev-rules/70-healthgate.rules), if matching
        /// by properties; needs a udev daemon (without one a device has no tags).
        package var tag: String? = nil
        /// Line speed.
        package var baud: Int
        /// A name for logs and the device registry.
        package var name: String?
        /// The device id keying the persisted counter state and the sync identifiers (`serial
        /// watch --id`); nil: the USB serial number when sysfs knows it, else the device path.
        package var id: String? = nil
        /// The line format (`format`: auto, json, kv, int or profile:NAME).
        package var format: LineFormat = .auto
        /// The counter's width (`counter_bits`: 16, 24 or 32), when known.
        package var counterBits: Int? = nil
        /// Use the line's `t` for timestamps (`device_time = "trust"`).
        package var trustDeviceTime: Bool = false
        /// Flow control (`flow_control`: none, rtscts or xonxoff).
        package var flowControl: FlowControl = .none

        /// A rule with every option at `serial watch`'s default.
        package init(path: String? = nil, vendor: String? = nil, product: String? = nil, serial: String? = nil,
                    tag: String? = nil, baud: Int = 115_200, name: String? = nil) {
            self.path = path
            self.vendor = vendor
            self.product = product
            self.serial = serial
            self.tag = tag
            self.baud = baud
            self.name = name
        }

        /// A rule from one of `serial watch --match`'s forms (``DeviceMatch``): `VID:PID`,
        /// `serial:S`, `tag:T` or `by-id:LINK` (a path rule on `/dev/serial/by-id/LINK`).
        package init(_ match: DeviceMatch) {
            self.init()
            switch match {
            case .usbID(let v, let p): vendor = v; product = p
            case .serial(let s): serial = s
            case .tag(let t): tag = t
            case .byID(let link): path = link.hasPrefix("/") ? link : "/dev/serial/by-id/" + link
            }
        }

        /// True when `device` (as udev describes it) is what this rule picks: its node or one of
        /// its links is the rule's `path`, or every property the rule names matches.
        package func matches(_ device: TTYDevice) -> Bool {
            if let path {
                let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
                return device.devnode == path || device.devnode == real || device.devlinks.contains(path)
            }
            if vendor == nil && product == nil && serial == nil && tag == nil { return false }
            if let vendor, device.vendorID?.lowercased() != vendor { return false }
            if let product, device.modelID?.lowercased() != product { return false }
            if let serial, device.serialShort != serial && device.serialShort != PedometerIdentity.udevSafe(serial) { return false }
            if let tag, !device.tags.contains(tag) { return false }
            return true
        }

        /// The rule in a few words, for logs (`1d50:6120`, `serial:PED1`, `tag:T`, `/dev/ttyACM0`).
        package var summary: String {
            if let path { return path }
            var parts: [String] = []
            if vendor != nil || product != nil { parts.append("\(vendor ?? "*"):\(product ?? "*")") }
            if let serial { parts.append("serial:\(serial)") }
            if let tag { parts.append("tag:\(tag)") }
            return parts.joined(separator: " ")
        }
    }

    /// The HTTP API `run` serves (`[http]`; docs/http-api.md, "Serving from run").
    package struct HTTP: Sendable, Equatable {
        /// `HOST:PORT` (`listen`, default loopback port 8080); checked when `run` starts serving.
        package var listen = "127.0.0.1:8080"
        /// PEM certificate chain and private key files (`certificate`, `key`): both for TLS, or
        /// neither (checked with the other serving rules when `run` starts serving).
        package var certificate: String?
        package var key: String?
        /// `allow_plain_http`: a non-loopback address without TLS must say so.
        package var allowPlainHTTP = false
        /// `max_body_bytes` and `live_client_buffer`, as `serve`'s options (nil: their defaults).
        package var maxBodyBytes: Int?
        package var liveClientBuffer: Int?
        package init() {}
    }

    /// The MQTT publisher `run` keeps going for Home Assistant (`[uplink.mqtt]`; docs/mqtt.md).
    package struct UplinkMQTT: Sendable, Equatable {
        /// `url`: `mqtt://[user[:password]@]host[:1883]` or `mqtts://…[:8883]` (checked when `run` starts it).
        package var url: String
        /// `gateway`: this gateway's name in topics and discovery (nil: the host name).
        package var gateway: String?
        /// `topic_prefix`: the first topic level (`healthgate/<gateway>/<device>/…`).
        package var topicPrefix = "healthgate"
        /// `discovery_prefix`: Home Assistant's discovery prefix; "" turns discovery off.
        package var discoveryPrefix = "homeassistant"
        /// `ca_file`: PEM CA certificates for `mqtts://` (nil: the system's, /etc/ssl/certs).
        package var caFile: String?
        package init(url: String) { self.url = url }
    }

    /// The PostgreSQL fleet uplink `run` keeps going (`[uplink.postgres]`; docs/uplink.md).
    package struct UplinkPostgres: Sendable, Equatable {
        /// `url`: the server, libpq style (checked when `run` starts the uplink).
        package var url: String
        /// `gateway`: this gateway's name on the server (nil: the host name).
        package var gateway: String?
        /// `batch_size`: change-feed items per server transaction (samples, series quantities and
        /// deletions each count one).
        package var batchSize = 5000
        /// `interval_ms`: how often the uplink looks for new commits while caught up.
        package var intervalMilliseconds = 2000
        /// `retry_backoff_ms` and `retry_max_backoff_ms`: the pause after a failed push, doubled
        /// after each further failure up to the maximum.
        package var retryBackoffMilliseconds = 1000
        package var retryMaxBackoffMilliseconds = 60_000
        package init(url: String) { self.url = url }
    }

    /// The file this came from (for messages).
    package var file: String
    /// The PostgreSQL uplink (`[uplink.postgres]`), or nil: none.
    package var uplinkPostgres: UplinkPostgres?
    /// The MQTT publisher (`[uplink.mqtt]`), or nil: none.
    package var uplinkMQTT: UplinkMQTT?
    /// The HTTP API to serve (`[http]`), or nil: none.
    package var http: HTTP?
    /// Database path; nil means the CLI default (`--db`, `$HEALTHGATE_DB`, XDG).
    package var databasePath: String?
    /// Ring, batch and overflow settings.
    package var ingest: IngestConfiguration
    /// When committed batches reach the disk (`[ingest] durability`, default group commit).
    package var durability: StoreSink.Durability = .group
    /// Straps to keep connected.
    package var straps: [Strap]
    /// Pedometer match rules.
    package var pedometers: [Pedometer]
    /// The user's vendor profiles (`[profiles.NAME]`), besides the built-in ones.
    package var profiles: [String: VendorProfile]
    /// The built-in profiles merged with the user's (the user's win).
    package var allProfiles: [String: VendorProfile] { VendorProfile.builtIn.merging(profiles) { _, user in user } }
    /// Seconds between status log lines (and systemd STATUS updates).
    package var statusInterval: Int
    /// How sources (straps, pedometers opened by path) are reconnected (`[ingest]
    /// reconnect_pause_ms`, `reconnect_max_pause_ms`, `reconnect_settle_ms`).
    package var reconnect = ReconnectPolicy()

    /// A configuration with defaults and no devices.
    package init(file: String = "(defaults)") {
        self.file = file
        self.databasePath = nil
        self.ingest = IngestConfiguration()
        self.straps = []
        self.pedometers = []
        self.profiles = [:]
        self.statusInterval = 60
    }

    /// Reads and checks the file at `path`.
    /// - Throws: ``ConfigError`` naming the file, the line and what is wrong.
    package static func load(path: String) throws(ConfigError) -> GatewayConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError(file: path, line: nil, message: "cannot read the file (does it exist, and may this user read it?)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError(file: path, line: nil, message: "the file is not UTF-8 text")
        }
        return try parse(text, file: path)
    }

    /// Parses TOML `text` (from `file`, for messages).
    package static func parse(_ raw: String, file: String) throws(ConfigError) -> GatewayConfig {
        // A UTF-8 byte-order mark (Windows editors) is not part of the TOML (docs/input-rules.md).
        let text = raw.hasPrefix("\u{FEFF}") ? String(raw.dropFirst()) : raw
        try rejectControlCharacters(text, file: file)
        let table: TOMLTable
        do {
            table = try TOMLTable(parsing: text)
        } catch {
            throw ConfigError(file: file, line: error.line, message: "not valid TOML (column \(error.column)): \(error.message)")
        }
        var p = Parser(text: text, file: file)
        return try p.read(table)
    }
}

extension GatewayConfig {
    /// Refuses a control character (other than tab and line ends) anywhere in `text`: TOML allows
    /// none, not even in strings or comments (TOML 1.0: they must be escaped). The TOML reader
    /// refuses them too; checked here first for the message, which says how to write one instead.
    static func rejectControlCharacters(_ text: String, file: String) throws(ConfigError) {
        var line = 1
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A:
                line += 1
            case 0x09, 0x0D:   // a bare CR (not before LF) is refused by the TOML reader, as an error
                continue
            case 0x00...0x1F, 0x7F:
                throw ConfigError(file: file, line: line, message: String(
                    format: "the control character U+%04X is not allowed in TOML (not even in a string or a comment): remove it, or write it as an escape such as \\u%04X inside a quoted string",
                    scalar.value, scalar.value))
            default:
                continue
            }
        }
    }
}

extension Sequence where Element == GatewayConfig.Pedometer {
    /// The first rule matching `device`, or nil (no rules match nothing: never every tty).
    package func firstMatch(_ device: TTYDevice) -> GatewayConfig.Pedometer? { first { $0.matches(device) } }
}

/// A configuration problem: where (file, line) and what is wrong.
package struct ConfigError: Error, Equatable, CustomStringConvertible {
    /// The configuration file.
    package var file: String
    /// The 1-based line, when known.
    package var line: Int?
    /// What is wrong and what would be right.
    package var message: String

    /// Creates an error at `file`:`line`.
    package init(file: String, line: Int?, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    package var description: String {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}

/// Walks the parsed table, checking keys and types, and finds lines for messages.
private struct Parser {
    let lines: [Substring]
    let file: String

    init(text: String, file: String) {
        // Not split(separator: "\n"): Swift reads CRLF as one Character, so a CRLF file would be one line.
        self.lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        self.file = file
    }

    /// A place in the document: a table header (`ingest`, or `strap` with an index for
    /// arrays of tables) and an optional key.
    struct Place {
        var table: String?
        var index: Int?
        var key: String?
        var name: String {
            var s = table.map { index != nil ? "[[\($0)]] #\(index! + 1)" : "[\($0)]" } ?? "top level"
            if let key { s = "'\(key)' in " + s }
            return s
        }
    }

    func line(of place: Place) -> Int? {
        var start = 0
        var end = lines.count
        if let table = place.table {
            let header = place.index != nil ? "[[\(table)]]" : "[\(table)]"
            var seen = -1
            var found: Int?
            for (i, l) in lines.enumerated() where l.trimmingCharacters(in: .whitespaces).hasPrefix(header) {
                seen += 1
                if seen == (place.index ?? 0) { found = i; break }
            }
            guard let h = found else { return nil }
            start = h
            end = lines[(h + 1)...].firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix("[") } ?? lines.count
            if place.key == nil { return h + 1 }
        } else {
            end = lines.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix("[") } ?? lines.count
        }
        guard let key = place.key else { return nil }
        for i in start..<end {
            let t = lines[i].trimmingCharacters(in: .whitespaces)
            if t.hasPrefix(key), t.dropFirst(key.count).trimmingCharacters(in: .whitespaces).hasPrefix("=") { return i + 1 }
        }
        if place.table == nil {
            // A top-level key that is a table: its header, `[key]`, `[key.sub]` or `[[key]]`.
            for (i, l) in lines.enumerated() {
                let t = l.trimmingCharacters(in: .whitespaces)
                for open in ["[[", "["] where t.hasPrefix(open) {
                    let name = t.dropFirst(open.count).trimmingCharacters(in: .whitespaces)
                    if name.hasPrefix(key), let next = name.dropFirst(key.count).first, "].".contains(next) || next == " " { return i + 1 }
                }
            }
        }
        return place.table.flatMap { _ in line(of: Place(table: place.table, index: place.index, key: nil)) }
    }

    func fail(_ place: Place, _ message: String) -> ConfigError {
        ConfigError(file: file, line: line(of: place), message: "\(place.name): \(message)")
    }

    func checkKeys(_ t: TOMLTable, allowed: [String], at place: Place) throws(ConfigError) {
        for k in t.keys where !allowed.contains(k) {
            var p = place
            p.key = k
            throw fail(p, "unknown key; known keys here: \(allowed.joined(separator: ", "))")
        }
    }

    func string(_ t: TOMLTable, _ key: String, at place: Place) throws(ConfigError) -> String? {
        guard let v = t[key] else { return nil }
        guard let s = v.string else {
            throw fail(Place(table: place.table, index: place.index, key: key), "expected a string in quotes, found \(v.typeName)")
        }
        return s
    }

    func int(_ t: TOMLTable, _ key: String, at place: Place, range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        guard let v = t[key] else { return nil }
        let p = Place(table: place.table, index: place.index, key: key)
        guard let i = v.int else { throw fail(p, "expected a whole number, found \(v.typeName)") }
        guard range.contains(i) else { throw fail(p, "\(i) is outside \(range.lowerBound)…\(range.upperBound)") }
        return i
    }

    func tables(_ root: TOMLTable, _ key: String) throws(ConfigError) -> [TOMLTable] {
        guard let v = root[key] else { return [] }
        guard let arr = v.array else {
            throw fail(Place(table: nil, key: key), "expected [[\(key)]] tables (an array of tables)")
        }
        var out: [TOMLTable] = []
        for (i, e) in arr.enumerated() {
            guard let t = e.table else { throw fail(Place(table: key, index: i), "expected a table") }
            out.append(t)
        }
        return out
    }

    mutating func read(_ root: TOMLTable) throws(ConfigError) -> GatewayConfig {
        var c = GatewayConfig(file: file)
        try checkKeys(root, allowed: ["store", "ingest", "strap", "pedometer", "match", "profiles", "status_interval", "http", "uplink"], at: Place())
        c.statusInterval = try int(root, "status_interval", at: Place(), range: 1...86_400) ?? c.statusInterval

        if let v = root["store"] {
            let place = Place(table: "store")
            guard let t = v.table else { throw fail(Place(key: "store"), "expected a [store] table") }
            try checkKeys(t, allowed: ["path"], at: place)
            c.databasePath = try string(t, "path", at: place)
        }

        if let v = root["http"] {
            let place = Place(table: "http")
            guard let t = v.table else { throw fail(Place(key: "http"), "expected an [http] table") }
            try checkKeys(t, allowed: ["listen", "certificate", "key", "allow_plain_http", "max_body_bytes", "live_client_buffer"], at: place)
            var h = GatewayConfig.HTTP()
            h.listen = try string(t, "listen", at: place) ?? h.listen
            h.certificate = try string(t, "certificate", at: place)
            h.key = try string(t, "key", at: place)
            // The serving rules (a TLS pair, bounds, plain HTTP off loopback) are HTTPAPI's
            // ServingSettings, checked when `run` starts serving — the same rules as `serve`'s flags.
            if let b = t["allow_plain_http"] {
                guard let flag = b.bool else { throw fail(Place(table: "http", key: "allow_plain_http"), "expected true or false") }
                h.allowPlainHTTP = flag
            }
            h.maxBodyBytes = try int(t, "max_body_bytes", at: place, range: 1...Int.max)
            h.liveClientBuffer = try int(t, "live_client_buffer", at: place, range: 1...Int.max)
            c.http = h
        }

        if let v = root["uplink"] {
            guard let t = v.table else { throw fail(Place(key: "uplink"), "expected an [uplink.postgres] table") }
            for k in t.keys where k != "postgres" && k != "mqtt" {
                throw fail(Place(table: "uplink.\(k)"), "unknown uplink; known: [uplink.postgres] (docs/uplink.md), [uplink.mqtt] (docs/mqtt.md)")
            }
            if let mv = t["mqtt"] {
                let place = Place(table: "uplink.mqtt")
                guard let mt = mv.table else { throw fail(Place(table: "uplink", key: "mqtt"), "expected an [uplink.mqtt] table") }
                try checkKeys(mt, allowed: ["url", "gateway", "topic_prefix", "discovery_prefix", "ca_file"], at: place)
                guard let url = try string(mt, "url", at: place) else {
                    throw fail(place, "needs url = \"mqtt://HOST:1883\" (the MQTT broker; mqtts:// for TLS)")
                }
                var m = GatewayConfig.UplinkMQTT(url: url)
                m.gateway = try string(mt, "gateway", at: place)
                m.topicPrefix = try string(mt, "topic_prefix", at: place) ?? m.topicPrefix
                m.discoveryPrefix = try string(mt, "discovery_prefix", at: place) ?? m.discoveryPrefix
                m.caFile = try string(mt, "ca_file", at: place)
                for (key, value) in [("gateway", m.gateway ?? "x"), ("topic_prefix", m.topicPrefix)]
                where value.isEmpty || value.count > 100 || value.contains(where: { "+#/\0".contains($0) || $0.isNewline }) {
                    throw fail(Place(table: "uplink.mqtt", key: key), "a topic level has 1 to 100 characters and no '/', '+' or '#'")
                }
                c.uplinkMQTT = m
            }
            if let pv = t["postgres"] {
                let place = Place(table: "uplink.postgres")
                guard let pt = pv.table else { throw fail(Place(table: "uplink", key: "postgres"), "expected an [uplink.postgres] table") }
                try checkKeys(pt, allowed: ["url", "gateway", "batch_size", "interval_ms", "retry_backoff_ms", "retry_max_backoff_ms"], at: place)
                guard let url = try string(pt, "url", at: place) else {
                    throw fail(place, "needs url = \"postgres://USER@HOST/DATABASE\" (the central PostgreSQL server)")
                }
                var u = GatewayConfig.UplinkPostgres(url: url)
                u.gateway = try string(pt, "gateway", at: place)
                if let g = u.gateway, g.isEmpty || g.count > 200 {
                    throw fail(Place(table: "uplink.postgres", key: "gateway"), "a gateway name has 1 to 200 characters")
                }
                u.batchSize = try int(pt, "batch_size", at: place, range: 1...100_000) ?? u.batchSize
                u.intervalMilliseconds = try int(pt, "interval_ms", at: place, range: 10...3_600_000) ?? u.intervalMilliseconds
                u.retryBackoffMilliseconds = try int(pt, "retry_backoff_ms", at: place, range: 10...3_600_000) ?? u.retryBackoffMilliseconds
                u.retryMaxBackoffMilliseconds = try int(pt, "retry_max_backoff_ms", at: place, range: 10...86_400_000) ?? u.retryMaxBackoffMilliseconds
                if u.retryMaxBackoffMilliseconds < u.retryBackoffMilliseconds {
                    throw fail(Place(table: "uplink.postgres", key: "retry_max_backoff_ms"), "must be at least retry_backoff_ms (\(u.retryBackoffMilliseconds))")
                }
                c.uplinkPostgres = u
            }
        }

        if let v = root["ingest"] {
            let place = Place(table: "ingest")
            guard let t = v.table else { throw fail(Place(key: "ingest"), "expected an [ingest] table") }
            try checkKeys(t, allowed: ["batch_size", "flush_interval_ms", "ring_capacity", "overflow", "spill_limit", "retry_interval_ms", "durability",
                                       "sync_interval_ms", "reconnect_pause_ms", "reconnect_max_pause_ms", "reconnect_settle_ms"], at: place)
            var ing = c.ingest
            ing.batchSize = try int(t, "batch_size", at: place, range: 1...1_000_000) ?? ing.batchSize
            if let ms = try int(t, "flush_interval_ms", at: place, range: 1...60_000) { ing.flushInterval = .milliseconds(ms) }
            ing.ringCapacity = try int(t, "ring_capacity", at: place, range: 2...(1 << 24)) ?? ing.ringCapacity
            if let ms = try int(t, "retry_interval_ms", at: place, range: 1...600_000) { ing.retryInterval = .milliseconds(ms) }
            if let ms = try int(t, "sync_interval_ms", at: place, range: 0...600_000) { ing.syncInterval = .milliseconds(ms) }
            let limit = try int(t, "spill_limit", at: place, range: 0...100_000_000) ?? 100_000
            switch try string(t, "overflow", at: place) ?? "spill" {
            case "spill": ing.overflow = .spill(limit: limit)
            case "drop-newest": ing.overflow = .dropNewest
            case let other:
                throw fail(Place(table: "ingest", key: "overflow"), "'\(other)' is not a policy; use \"spill\" or \"drop-newest\"")
            }
            c.ingest = ing
            let first = try int(t, "reconnect_pause_ms", at: place, range: 10...600_000)
            let most = try int(t, "reconnect_max_pause_ms", at: place, range: 10...3_600_000)
            if first != nil || most != nil {
                let initial = first.map { Duration.milliseconds($0) } ?? c.reconnect.initialPause
                let maximum = most.map { Duration.milliseconds($0) } ?? max(initial, c.reconnect.maximumPause)
                guard maximum >= initial else {
                    throw fail(Place(table: "ingest", key: "reconnect_max_pause_ms"),
                               "must be at least reconnect_pause_ms (\(first ?? 500) ms): the pause doubles from the first up to the longest")
                }
                c.reconnect = ReconnectPolicy(initialPause: initial, maximumPause: maximum, settlePause: c.reconnect.settlePause)
            }
            if let ms = try int(t, "reconnect_settle_ms", at: place, range: 0...60_000) { c.reconnect.settlePause = .milliseconds(ms) }
            if let d = try string(t, "durability", at: place) {
                guard let mode = StoreSink.Durability(rawValue: d) else {
                    throw fail(Place(table: "ingest", key: "durability"), "'\(d)' is not a durability mode; use \"group\" (group commit: one fsync at most every sync_interval_ms) or \"every-commit\" (one fsync per transaction)")
                }
                c.durability = mode
            }
        }

        for (i, t) in try tables(root, "strap").enumerated() {
            let place = Place(table: "strap", index: i)
            try checkKeys(t, allowed: ["address", "address_type", "name", "socket", "encrypt"], at: place)
            let address = try string(t, "address", at: place)
            let socket = try string(t, "socket", at: place)
            switch (address, socket) {
            case (nil, nil):
                throw fail(place, "missing 'address' (the strap's Bluetooth address, \"AA:BB:CC:DD:EE:FF\"; `healthgate scan` lists them) or 'socket' (a Unix socket carrying its ATT channel)")
            case (.some, .some):
                throw fail(Place(table: "strap", index: i, key: "socket"), "give either 'address' (over Bluetooth) or 'socket' (over a Unix socket), not both")
            default: break
            }
            if let address, !Self.isAddress(address) {
                throw fail(Place(table: "strap", index: i, key: "address"), "'\(address)' is not a Bluetooth address (six hex bytes with colons, AA:BB:CC:DD:EE:FF)")
            }
            if let socket {
                let p = Place(table: "strap", index: i, key: "socket")
                guard socket.hasPrefix("/") else {
                    throw fail(p, "'\(socket)' is not an absolute path; give the socket's full path (\"/run/healthgate-sim/strap-1.sock\")")
                }
                guard socket.utf8.count <= Self.maximumSocketPathLength else {
                    throw fail(p, "the path is \(socket.utf8.count) bytes, longer than the \(Self.maximumSocketPathLength) a Unix socket allows; use a shorter directory")
                }
            }
            let typeKey = try string(t, "address_type", at: place)
            if typeKey != nil && socket != nil {
                throw fail(Place(table: "strap", index: i, key: "address_type"), "'address_type' goes with 'address'; a strap reached over 'socket' has none")
            }
            if let type = typeKey, type != "public", type != "random" {
                throw fail(Place(table: "strap", index: i, key: "address_type"), "'\(type)' is not an address type; use \"public\" or \"random\"")
            }
            var encrypt = false
            if let b = t["encrypt"] {
                let p = Place(table: "strap", index: i, key: "encrypt")
                guard let flag = b.bool else { throw fail(p, "expected true or false") }
                if flag && socket != nil {
                    throw fail(p, "'encrypt' goes with 'address': a strap reached over 'socket' has no Bluetooth link to encrypt")
                }
                encrypt = flag
            }
            c.straps.append(.init(address: address?.uppercased(), addressType: typeKey, name: try string(t, "name", at: place),
                                  socket: socket, encrypt: encrypt))
        }

        // Vendor profiles first: a pedometer's format may name one.
        if let v = root["profiles"] {
            guard let t = v.table else { throw fail(Place(key: "profiles"), "expected [profiles.NAME] tables") }
            for name in t.keys.sorted() {
                let place = Place(table: "profiles.\(name)")
                guard let pt = t[name]?.table else { throw fail(place, "expected a table with pattern = '…'") }
                try checkKeys(pt, allowed: ["pattern", "semantics"], at: place)
                guard let pattern = try string(pt, "pattern", at: place) else {
                    throw fail(place, "missing 'pattern' (a regular expression with a (?<steps>…) group)")
                }
                let semText = try string(pt, "semantics", at: place) ?? "cumulative"
                guard let semantics = CountSemantics(rawValue: semText) else {
                    throw fail(Place(table: place.table, key: "semantics"), "'\(semText)' is not a semantics; use \"cumulative\" or \"delta\"")
                }
                do { c.profiles[name] = try VendorProfile(name: name, pattern: pattern, semantics: semantics) } catch {
                    throw fail(Place(table: place.table, key: "pattern"), "\(error)")
                }
            }
        }
        let allProfiles = VendorProfile.builtIn.merging(c.profiles) { _, user in user }

        for (i, t) in try tables(root, "pedometer").enumerated() {
            let place = Place(table: "pedometer", index: i)
            func at(_ key: String) -> Place { Place(table: "pedometer", index: i, key: key) }
            try checkKeys(t, allowed: ["path", "vendor", "product", "serial", "tag", "baud", "name", "id", "format",
                                       "counter_bits", "device_time", "flow_control"], at: place)
            var ped = GatewayConfig.Pedometer(
                path: try string(t, "path", at: place),
                vendor: try string(t, "vendor", at: place)?.lowercased(),
                product: try string(t, "product", at: place)?.lowercased(),
                serial: try string(t, "serial", at: place),
                tag: try string(t, "tag", at: place),
                baud: try int(t, "baud", at: place, range: 50...4_000_000) ?? 115_200,
                name: try string(t, "name", at: place))
            // The options of `serial watch`, parsed and checked by the same code.
            ped.id = try string(t, "id", at: place)
            if ped.id?.isEmpty == true { throw fail(at("id"), "the device id is empty; leave 'id' out to use the USB serial number or the path") }
            if let f = try string(t, "format", at: place) {
                do { ped.format = try LineFormat(parsing: f, profiles: allProfiles) } catch { throw fail(at("format"), "\(error)") }
            }
            if let v = t["counter_bits"] {
                guard let bits = v.int else { throw fail(at("counter_bits"), "expected a whole number (16, 24 or 32), found \(v.typeName)") }
                do { _ = try CounterConfiguration(deviceID: "-", counterBits: bits) } catch { throw fail(at("counter_bits"), "\(error)") }
                ped.counterBits = bits
            }
            switch try string(t, "device_time", at: place) ?? "ignore" {
            case "ignore": ped.trustDeviceTime = false
            case "trust": ped.trustDeviceTime = true
            case let other: throw fail(at("device_time"), "'\(other)' is not a device time mode; use \"trust\" (timestamps from the line's t) or \"ignore\" (receipt time)")
            }
            if let fc = try string(t, "flow_control", at: place) {
                guard let flow = FlowControl(rawValue: fc) else {
                    throw fail(at("flow_control"), "'\(fc)' is not a flow control; use \"none\", \"rtscts\" or \"xonxoff\"")
                }
                ped.flowControl = flow
            }
            if ped.path == nil && ped.vendor == nil && ped.product == nil && ped.serial == nil && ped.tag == nil {
                throw fail(place, "give a 'path' or at least one of 'vendor', 'product', 'serial', 'tag' to match the port")
            }
            c.pedometers.append(ped)
        }

        // `match = ["1d50:6120", "tag:…"]`: pedometer rules in `serial watch --match`'s forms,
        // each with the default options (the short form of serial.toml).
        if let v = root["match"] {
            let place = Place(key: "match")
            guard let arr = v.array else { throw fail(place, "expected an array of strings, e.g. match = [\"1d50:6120\", \"tag:healthgate-pedometer\"]") }
            for e in arr {
                guard let text = e.string else { throw fail(place, "expected an array of strings, found \(e.typeName)") }
                do { c.pedometers.append(GatewayConfig.Pedometer(try DeviceMatch(parsing: text))) } catch {
                    throw fail(place, "\(error)")
                }
            }
        }

        do { try c.ingest.validate() } catch {
            throw fail(Place(table: "ingest"), error.description)
        }
        try checkDuplicates(c)
        return c
    }

    /// Two straps with one address (or socket), or two pedometers with one `id` (or, without
    /// ids, one `path`), would be one device with one registry row and one counter state fed
    /// from two places: refused, naming both lines.
    func checkDuplicates(_ c: GatewayConfig) throws(ConfigError) {
        func firstRepeat(_ keys: [String?]) -> (first: Int, second: Int)? {
            var seen: [String: Int] = [:]
            for (i, k) in keys.enumerated() {
                guard let k else { continue }
                if let j = seen[k] { return (j, i) }
                seen[k] = i
            }
            return nil
        }
        func refuse(_ table: String, _ key: String, _ value: String, _ pair: (first: Int, second: Int), _ why: String) -> ConfigError {
            let firstLine = line(of: Place(table: table, index: pair.first, key: key)).map { "\(file):\($0)" } ?? file
            return fail(Place(table: table, index: pair.second, key: key),
                        "'\(value)' is already used by [[\(table)]] #\(pair.first + 1) at \(firstLine); \(why)")
        }
        if let d = firstRepeat(c.straps.map(\.address)) {
            throw refuse("strap", "address", c.straps[d.second].address ?? "", d,
                         "one strap can have one connection: remove one of the two [[strap]] tables")
        }
        if let d = firstRepeat(c.straps.map(\.socket)) {
            throw refuse("strap", "socket", c.straps[d.second].socket ?? "", d,
                         "one socket carries one strap: remove one of the two [[strap]] tables")
        }
        if let d = firstRepeat(c.pedometers.map(\.id)) {
            throw refuse("pedometer", "id", c.pedometers[d.second].id ?? "", d,
                         "two pedometers with one id would share one counter state: give each its own 'id'")
        }
        if let d = firstRepeat(c.pedometers.map { $0.id == nil ? $0.path : nil }) {
            throw refuse("pedometer", "path", c.pedometers[d.second].path ?? "", d,
                         "two rules for one port would be one device with one counter state: remove one of the two [[pedometer]] tables")
        }
    }

    /// `sizeof(sun_path)` − 1 on Linux.
    static let maximumSocketPathLength = SocketATTBearer.maximumUnixSocketPathLength

    static func isAddress(_ s: String) -> Bool {
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && UInt8($0, radix: 16) != nil }
    }
}
