/// A rule saying which tty devices are pedometers. Configuration lists rules; a device is a
/// pedometer when any rule matches. There is deliberately no "every tty" rule.
package enum DeviceMatch: Sendable, Hashable, Codable, CustomStringConvertible {
    /// USB vendor and product id (`1d50:6120`), compared case-insensitively.
    case usbID(vendor: String, product: String)
    /// USB serial number (`serial:PED0001`), exact.
    case serial(String)
    /// A `/dev/serial/by-id/…` link (`by-id:/dev/serial/by-id/usb-…`), or a link name.
    case byID(String)
    /// A udev tag (`tag:healthgate-pedometer`), set by a rule such as udev-rules/70-healthgate.rules.
    case tag(String)

    /// Parses `vid:pid` (four hex digits each, also written `usb:vid:pid`), `serial:S`,
    /// `by-id:PATH` (or a path under /dev/serial/by-id/), or `tag:T`.
    /// - Throws: ``DeviceMatchError`` naming the accepted forms.
    package init(parsing text: String) throws {
        // ASCII only: `isHexDigit` also takes full-width digits, which no udev id ever has.
        func hex4(_ s: Substring) -> Bool { s.count == 4 && s.allSatisfy { $0.isASCII && $0.isHexDigit } }
        if text.hasPrefix("serial:"), text.count > 7 { self = .serial(String(text.dropFirst(7))); return }
        if text.hasPrefix("tag:"), text.count > 4 { self = .tag(String(text.dropFirst(4))); return }
        if text.hasPrefix("by-id:"), text.count > 6 { self = .byID(String(text.dropFirst(6))); return }
        if text.hasPrefix("/dev/serial/by-id/") { self = .byID(text); return }
        var t = Substring(text)
        if t.hasPrefix("usb:") { t = t.dropFirst(4) } else if t.hasPrefix("vid:") { t = t.dropFirst(4) }
        let parts = t.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2, hex4(parts[0]), hex4(parts[1]) {
            self = .usbID(vendor: parts[0].lowercased(), product: parts[1].lowercased())
            return
        }
        throw DeviceMatchError(text: text)
    }

    /// True when `device` matches this rule.
    package func matches(_ device: TTYDevice) -> Bool {
        switch self {
        case .usbID(let v, let p):
            return device.vendorID?.lowercased() == v && device.modelID?.lowercased() == p
        case .serial(let s):
            return device.serialShort == s
        case .byID(let path):
            let name = path.split(separator: "/").last.map(String.init) ?? path
            return device.devlinks.contains { $0 == path || ($0.hasPrefix("/dev/serial/by-id/") && $0.hasSuffix("/" + name)) }
        case .tag(let t):
            return device.tags.contains(t)
        }
    }

    /// The rule in the form ``init(parsing:)`` reads.
    package var description: String {
        switch self {
        case .usbID(let v, let p): "\(v):\(p)"
        case .serial(let s): "serial:\(s)"
        case .byID(let p): "by-id:\(p)"
        case .tag(let t): "tag:\(t)"
        }
    }
}

extension Sequence where Element == DeviceMatch {
    /// The first rule matching `device`, or nil (an empty rule list matches nothing).
    package func firstMatch(_ device: TTYDevice) -> DeviceMatch? { first { $0.matches(device) } }
}

/// A match rule that does not parse.
package struct DeviceMatchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text given.
    package let text: String
    package var description: String {
        "\"\(text)\" is not a device match: use VID:PID (e.g. 1d50:6120), serial:SERIAL, tag:TAG or by-id:/dev/serial/by-id/NAME"
    }
}
