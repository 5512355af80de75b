import Glibc
import HealthModel
import HeartRateProfile

/// A deterministic, physiologically plausible stream of Heart Rate Measurements for demos and
/// tests: bpm drifts smoothly around a base (a 2-minute swell plus seeded jitter), every beat
/// produces exactly one RR interval (beats straddling notifications carry over, so the RR series
/// is continuous and matches the bpm), Energy Expended is cumulative and sent every N-th
/// notification, and contact is reported as detected.
///
/// Same seed, same stream. A value type: one per simulated strap.
package struct SimulatedHeartRateSignal: Sendable {
    package var baseBPM: Double
    /// Energy Expended is included in every N-th notification (0: never).
    package var sendEnergyEvery: Int
    /// Energy spent per minute, kJ.
    package var kilojoulesPerMinute: Double

    private var rng: UInt64
    private var t = 0.0
    private var untilNextBeat: Double
    private var interval: Double
    private var energy = 0.0
    private var sent = 0

    package init(seed: UInt64 = 1, baseBPM: Double = 72, sendEnergyEvery: Int = 10, kilojoulesPerMinute: Double = 30) {
        self.baseBPM = baseBPM
        self.sendEnergyEvery = sendEnergyEvery
        self.kilojoulesPerMinute = kilojoulesPerMinute
        self.rng = seed &* 0x9E3779B97F4A7C15 | 1
        self.interval = 60 / baseBPM
        self.untilNextBeat = 60 / baseBPM
    }

    private mutating func random() -> Double {
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17
        return Double(rng % 10_000) / 10_000
    }

    private func bpm(at time: Double) -> Double {
        baseBPM + 8 * sin(2 * Double.pi * time / 120)
    }

    /// The notification sent `elapsed` seconds after the previous one (straps send ~1 per second).
    package mutating func next(elapsed: Double = 1) -> HeartRateMeasurement {
        var rr = RRTicks()
        var remaining = elapsed
        while untilNextBeat <= remaining {
            rr.append(UInt16(min(65534, max(1, (interval * 1024).rounded()))))
            remaining -= untilNextBeat
            let b = bpm(at: t + elapsed - remaining) + (random() - 0.5) * 4
            interval = 60 / max(30, b)
            untilNextBeat = interval
        }
        untilNextBeat -= remaining
        t += elapsed
        energy += kilojoulesPerMinute * elapsed / 60
        sent += 1
        let withEnergy = sendEnergyEvery > 0 && sent % sendEnergyEvery == 0
        return HeartRateMeasurement(beatsPerMinute: UInt16((60 / interval).rounded()), sensorContact: .detected,
                                    energyExpendedKJ: withEnergy ? UInt16(min(65535, energy.rounded(.down))) : nil,
                                    rrIntervals: rr)
    }
}

extension SimulatedPeripheral {
    /// Notifies `measurement` (encoded) if the client subscribed on this connection.
    /// - Returns: whether it was sent.
    @discardableResult
    package func notifyHeartRate(_ measurement: HeartRateMeasurement) -> Bool {
        notifyHeartRate(measurement.encode())
    }
}
