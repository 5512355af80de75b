/// What one pedometer line said, before any counter logic.
///
/// A reading carries a cumulative count (``steps``), a per-interval delta (``deltaSteps``), or
/// both; the counter uses the cumulative count when present. Everything else is optional.
package struct PedometerReading: Sendable, Hashable, Codable {
    /// The cumulative step count since the device's counter last started (JSON/kv key `steps`).
    package var steps: UInt64?
    /// Device time, Unix seconds (key `t`). Used for ordering within a boot; used for timestamps
    /// only when the device clock is trusted.
    package var deviceTime: Double?
    /// The device's line counter (key `seq`): detects drops, duplicates and reordering.
    package var seq: UInt64?
    /// An id that changes at every power-up (key `boot`): makes a reset a fact.
    package var boot: String?
    /// Steps in one interval (key `dsteps`), for devices or profiles that report deltas.
    package var deltaSteps: UInt64?
    /// Start of the delta's interval, device Unix seconds (key `t0`).
    package var deltaStart: Double?
    /// End of the delta's interval, device Unix seconds (key `t1`).
    package var deltaEnd: Double?

    /// Creates a reading; every field is optional here, the parsers enforce what a format needs.
    package init(steps: UInt64? = nil, deviceTime: Double? = nil, seq: UInt64? = nil, boot: String? = nil,
                deltaSteps: UInt64? = nil, deltaStart: Double? = nil, deltaEnd: Double? = nil) {
        self.steps = steps
        self.deviceTime = deviceTime
        self.seq = seq
        self.boot = boot
        self.deltaSteps = deltaSteps
        self.deltaStart = deltaStart
        self.deltaEnd = deltaEnd
    }

    /// The reading as a JSON-ready dictionary with `steps` and whichever of `t`, `seq`, `boot`,
    /// `dsteps`, `t0`, `t1` it carried (the shape `healthgate decode pedometer --json` prints).
    package var jsonObject: [String: any Sendable] {
        var o: [String: any Sendable] = [:]
        if let steps { o["steps"] = steps }
        if let deviceTime { o["t"] = deviceTime }
        if let seq { o["seq"] = seq }
        if let boot { o["boot"] = boot }
        if let deltaSteps { o["dsteps"] = deltaSteps }
        if let deltaStart { o["t0"] = deltaStart }
        if let deltaEnd { o["t1"] = deltaEnd }
        return o
    }
}
