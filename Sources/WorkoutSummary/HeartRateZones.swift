import Foundation
import HealthStore

/// Five heart-rate zones as shares of a maximum heart rate (docs/workouts.md): zone 1 from 50 %,
/// zone 2 from 60 %, zone 3 from 70 %, zone 4 from 80 %, zone 5 from 90 % (and above 100 %).
/// A reading on a bound belongs to the zone above it. The maximum is the user's measured one
/// when set (`profile set --max-heart-rate`), else estimated from the age on the workout's day
/// by Tanaka, Monahan & Seals (2001): **208 − 0.7 × age**.
public struct HeartRateZones: Sendable, Hashable {
    /// Where the maximum comes from.
    public enum Basis: Sendable, Hashable {
        /// The user set it.
        case measured
        /// Tanaka's formula at this age in whole years.
        case estimated(age: Int)
    }

    /// The lower bound of zones 1…5 in percent of the maximum.
    public static let lowerPercents: [Double] = [50, 60, 70, 80, 90]

    /// The maximum heart rate, count/min.
    public var maximumHeartRate: Double
    /// Where it comes from.
    public var basis: Basis

    /// Zones over `maximumHeartRate`.
    public init(maximumHeartRate: Double, basis: Basis) {
        self.maximumHeartRate = maximumHeartRate
        self.basis = basis
    }

    /// The zones for a workout on `date`: from the measured maximum, else from the age in
    /// `timeZone`'s calendar; nil when neither is known (or the date is before the birth).
    public init?(_ c: Characteristics, on date: Date, timeZone: TimeZone = .current) {
        if let m = c.maximumHeartRate {
            self.init(maximumHeartRate: m, basis: .measured)
        } else if let age = c.age(on: date, timeZone: timeZone) {
            self.init(maximumHeartRate: 208 - 0.7 * Double(age), basis: .estimated(age: age))
        } else {
            return nil
        }
    }

    /// Zone 1…5 of a reading, or 0 below zone 1. Compared as `bpm × 100 ≥ percent × maximum`,
    /// so a bound that is a whole number of beats (60 % of 190 = 114) is met exactly.
    public func zone(of bpm: Double) -> Int {
        var z = 0
        for (k, p) in Self.lowerPercents.enumerated() where bpm * 100 >= p * maximumHeartRate { z = k + 1 }
        return z
    }

    /// The lowest reading of zone `k` (1…5), count/min.
    public func lowerBound(zone k: Int) -> Double { Self.lowerPercents[k - 1] * maximumHeartRate / 100 }

    /// The rule in words, for output: "measured maximum 190" or
    /// "208 − 0.7 × age 36 = 182.8 (Tanaka 2001)".
    public var formula: String {
        switch basis {
        case .measured: "measured maximum \(Self.number(maximumHeartRate)) (profile set --max-heart-rate)"
        case .estimated(let age): "208 − 0.7 × age \(age) = \(Self.number(maximumHeartRate)) (Tanaka, Monahan & Seals 2001)"
        }
    }

    static func number(_ x: Double) -> String {
        x == x.rounded() ? String(Int(x)) : String(format: "%.1f", x)
    }
}
