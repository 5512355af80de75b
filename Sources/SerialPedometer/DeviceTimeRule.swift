import Foundation

/// The range a line's device times (`t`, `t0`, `t1`, Unix seconds) must fall in, relative to the
/// gateway clock when the line arrived (docs/serial-pedometers.md, "Device times").
///
/// A time outside it is a broken or unset device clock (`1e300`, `0` after a dead RTC battery):
/// stored as a timestamp it would date steps in year 506713 or 1970, and as an ordering key it
/// would make every later sane line look late. The line is refused (``LineRejection/implausibleTime(field:value:)``),
/// counted and logged, whether the device clock is trusted or not; a cumulative count loses
/// nothing by it (the next accepted line's count includes the refused line's steps).
package enum DeviceTimeRule {
    /// The earliest accepted device time: 2000-01-01T00:00:00Z.
    package static let earliest: Double = 946_684_800
    /// How far past the receipt clock a device time may be: one day (a device clock set to local
    /// time instead of UTC is at most 14 h ahead; more is a broken clock).
    package static let maxAhead: TimeInterval = 86_400

    /// The reason `reading` is refused for its device times, or nil when every time it carries
    /// is in [``earliest``, `receivedAt` + ``maxAhead``].
    package static func check(_ reading: PedometerReading, receivedAt: Date) -> LineRejection? {
        let latest = receivedAt.timeIntervalSince1970 + maxAhead
        for (field, value) in [("t", reading.deviceTime), ("t0", reading.deltaStart), ("t1", reading.deltaEnd)] {
            guard let v = value else { continue }
            if !(v.isFinite && v >= earliest && v <= latest) { return .implausibleTime(field: field, value: v) }
        }
        return nil
    }
}
