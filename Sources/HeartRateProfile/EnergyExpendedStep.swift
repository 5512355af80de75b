/// What one Energy Expended reading adds to the previous one of the same strap: the delta when
/// the cumulative value grew; the new value when it went down (the strap was reset within the
/// interval, so that much was spent since); nothing while it stays saturated at 0xFFFF. The
/// rule the strap path's record mapper applies (docs/ble-heart-rate.md).
public struct EnergyExpendedStep: Sendable, Hashable {
    /// kJ spent between the two readings.
    public let kilojoules: UInt16
    /// The value went down: the strap's counter was reset in between.
    public let wasReset: Bool

    /// The step from reading `last` to reading `now` (both cumulative kJ).
    @inlinable
    public init(from last: UInt16, to now: UInt16) {
        if last == 0xFFFF && now == 0xFFFF {
            kilojoules = 0; wasReset = false   // saturated: no information until the strap is reset
        } else if now >= last {
            kilojoules = now - last; wasReset = false
        } else {
            kilojoules = now; wasReset = true
        }
    }
}
