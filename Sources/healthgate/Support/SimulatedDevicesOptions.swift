import ArgumentParser

/// The simulated hardware `demo` and `simulate` run: how many straps and pedometers, how often
/// a strap notifies. One option group with each command's defaults and limits.
struct SimulatedDevicesOptions<Limits: SimulatedDevicesLimits>: ParsableArguments {
    @Option(help: "Simulated heart-rate straps (\(Limits.strapTransport)).")
    var straps: Int = Limits.straps

    @Option(help: "Notifications per second per strap (real straps send about 1).")
    var rate: Double = Limits.rate

    @Option(help: "Simulated serial pedometers (\(Limits.pedometerTransport)).")
    var pedometers: Int = Limits.pedometers

    func validate() throws {
        guard Limits.strapRange.contains(straps), Limits.pedometerRange.contains(pedometers),
              straps + pedometers >= Limits.minimumDevices else {
            throw ValidationError("--straps must be \(Limits.strapRange.lowerBound)…\(Limits.strapRange.upperBound) and --pedometers \(Limits.pedometerRange.lowerBound)…\(Limits.pedometerRange.upperBound)"
                                  + (Limits.minimumDevices > 0 ? ", and at least one device is needed" : ""))
        }
        guard Limits.rateRange.contains(rate) else { throw ValidationError("--rate must be \(Limits.rateText) notifications per second") }
    }
}

/// A command's defaults and limits for ``SimulatedDevicesOptions``.
protocol SimulatedDevicesLimits {
    static var straps: Int { get }
    static var rate: Double { get }
    static var pedometers: Int { get }
    static var strapRange: ClosedRange<Int> { get }
    static var rateRange: ClosedRange<Double> { get }
    /// The rate's range for the message (`0.01…1000`).
    static var rateText: String { get }
    static var pedometerRange: ClosedRange<Int> { get }
    /// What carries a simulated strap's ATT channel, for `--help` (`Unix sockets`).
    static var strapTransport: String { get }
    /// What a simulated pedometer prints on, for `--help` (`ptys`).
    static var pedometerTransport: String { get }
    /// Straps plus pedometers at least (`simulate` needs one device to serve).
    static var minimumDevices: Int { get }
}
