// `run`'s configuration (the TOML reader, `GatewayConfig`, `ReconnectPolicy`) is a module of its
// own; everything that composes the gateway from it sees it through Gateway.
@_exported import HealthGateConfiguration

extension GatewayConfig.Pedometer {
    /// The options a ``PedometerSource`` for this rule opens its port and counts with.
    package var sourceOptions: PedometerSource.Options {
        PedometerSource.Options(baud: baud, flowControl: flowControl, format: format,
                                counterBits: counterBits, trustDeviceTime: trustDeviceTime)
    }
}
